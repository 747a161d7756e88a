// FusedConv driver (conv.h): checks shapes, picks the algorithm (direct depthwise, GEMM on X for
// 1x1, im2col + GEMM otherwise) and runs bias + epilogue on each piece of output while it is in
// cache. Baseline flags; the ISA work goes through the ConvKernels chosen at load.
#include <algorithm>
#include <string>

#include "runtime/fusion/dynamic_quant_matmul_fusion.h"
#include "runtime/kernels/conv/conv.h"
#include "runtime/kernels/nn_conv_geometry.h"
#include "runtime/kernels/nn_kernels.h"

namespace nuphar {
namespace {

class FusedConvKernel final : public OpKernel {
 public:
  FusedConvKernel(WindowAttrs attrs, std::vector<int64_t> w_shape, std::vector<float> w, std::vector<float> bias,
                  std::vector<ConvEpilogueStep> steps)
      : attrs_(std::move(attrs)), w_shape_(std::move(w_shape)), w_(std::move(w)), bias_(std::move(bias)),
        steps_(std::move(steps)), k_(GetConvKernels()) {
    const int64_t G = attrs_.group, Mg = w_shape_[0] / G;
    int64_t kernel_size = 1;
    for (size_t i = 2; i < w_shape_.size(); ++i) kernel_size *= w_shape_[i];
    ck_ = w_shape_[1] * kernel_size;
    // Direct depthwise when each group reads one channel; a single-channel input with one group
    // (a filter bank over audio, the first layer of an image model) is a better GEMM.
    depthwise_ = w_shape_[1] == 1 && G > 1 && w_shape_.size() <= 4;
    if (depthwise_) return;
    group_floats_ = PackedConvWeightsFloats(Mg, ck_, k_.gemm_mr);
    packed_.resize(static_cast<size_t>(G * group_floats_));
    for (int64_t grp = 0; grp < G; ++grp)
      PackConvWeights(w_.data() + grp * Mg * ck_, Mg, ck_, k_.gemm_mr, packed_.data() + grp * group_floats_);
    std::vector<float>().swap(w_);  // only the packed copy is read from now on
  }

  const char* profile_path() const override { return k_.name; }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x || x->dtype() != DType::kFloat) return Diag::Msg("FusedConv needs a float input X");
    const int64_t rank = static_cast<int64_t>(w_shape_.size());
    const int64_t M = w_shape_[0], G = attrs_.group, Cg = w_shape_[1];
    if (x->rank() != rank || x->dim(1) != Cg * G)
      return Diag::Msg("Conv input " + ShapeToString(x->shape()) + " does not match W " + ShapeToString(w_shape_) +
                       " with group " + std::to_string(G));
    const std::span<const int64_t> xs(x->shape()), ws(w_shape_);
    NUPHAR_ASSIGN_OR_RETURN(const WindowGeometry g, ComputeWindowGeometry(attrs_, xs.subspan(2), ws.subspan(2)));
    const int64_t N = x->dim(0), C = x->dim(1), Mg = M / G;
    std::array<int64_t, WindowAttrs::kMaxSpatial + 2> out_shape{N, M};
    for (int i = 0; i < g.rank; ++i) out_shape[static_cast<size_t>(i) + 2] = g.out[static_cast<size_t>(i)];
    Tensor* y = ctx.Output(0, DType::kFloat, std::span<const int64_t>(out_shape.data(), static_cast<size_t>(rank)));
    const int64_t in_size = g.in_size(), out_size = g.out_size(), ck = ck_;
    const ConvKernels& k = k_;
    const float* px = x->data<float>();
    float* py = y->data<float>();
    const bool depthwise = depthwise_;
    const bool identity = Im2ColIsIdentity(g);
    // One scratch block: the epilogue's sigmoid chunk, then the padded plane or the im2col matrix.
    int64_t work = 0;
    if (depthwise) {
      const int64_t h = g.rank == 2 ? g.in[0] + g.pad_begin[0] + g.pad_end[0] : 1;
      work = h * (g.in[g.rank - 1] + g.pad_begin[g.rank - 1] + g.pad_end[g.rank - 1]) + 16;
    } else if (!identity) {
      work = ck * out_size;
    }
    float* tmp = static_cast<float*>(ctx.Scratch(sizeof(float) * static_cast<size_t>(kEpilogueChunk + work)));
    float* scratch = tmp + kEpilogueChunk;
    auto finish = [&](float* plane, int64_t m) {
      k.epilogue(plane, out_size, bias_.empty() ? 0.0f : bias_[static_cast<size_t>(m)], m, steps_.data(),
                 static_cast<int>(steps_.size()), tmp);
    };
    for (int64_t n = 0; n < N; ++n) {
      if (depthwise) {
        // 1-D is 2-D with H = 1. The group of output channel m reads input channel m / Mg.
        const bool two = g.rank == 2;
        const int64_t H = two ? g.in[0] : 1, W = g.in[g.rank - 1], OH = two ? g.out[0] : 1, OW = g.out[g.rank - 1];
        const int64_t KH = two ? g.kernel[0] : 1, KW = g.kernel[g.rank - 1];
        const int64_t last = g.rank - 1;
        for (int64_t m = 0; m < M; ++m) {
          float* plane = py + (n * M + m) * out_size;
          k.depthwise_plane(px + (n * C + m / Mg) * in_size, H, W, w_.data() + m * KH * KW, KH, KW,
                            two ? g.stride[0] : 1, g.stride[last], two ? g.dilation[0] : 1, g.dilation[last],
                            two ? g.pad_begin[0] : 0, g.pad_begin[last], two ? g.pad_end[0] : 0, g.pad_end[last], plane,
                            OH, OW, scratch);
          finish(plane, m);
        }
        continue;
      }
      // Column blocks whose slice of B (ck x nc floats) fits in L2 next to a panel.
      const int64_t nc = std::max<int64_t>(32, (kBlockFloats / std::max<int64_t>(ck, 1)) / 32 * 32);
      const int mr = k.gemm_mr;
      for (int64_t grp = 0; grp < G; ++grp) {
        const float* xg = px + (n * C + grp * Cg) * in_size;
        if (!identity) Im2Col<float, float>(xg, Cg, g, 0.0f, scratch);
        const float* b = identity ? xg : scratch;
        const float* wg = packed_.data() + grp * group_floats_;
        float* yg = py + (n * M + grp * Mg) * out_size;
        // Y_g[Mg, out] = W_g[Mg, ck] * B[ck, out]
        for (int64_t n0 = 0; n0 < out_size; n0 += nc) {
          const int64_t cols = std::min(nc, out_size - n0);
          for (int64_t m0 = 0; m0 < Mg; m0 += mr) {
            const int64_t rows = std::min<int64_t>(mr, Mg - m0);
            float* c = yg + m0 * out_size + n0;
            k.gemm_panel(wg + m0 * ck, ck, b + n0, out_size, c, out_size, rows, cols);
            for (int64_t i = 0; i < rows; ++i)
              k.epilogue(c + i * out_size, cols, bias_.empty() ? 0.0f : bias_[static_cast<size_t>(grp * Mg + m0 + i)],
                         grp * Mg + m0 + i, steps_.data(), static_cast<int>(steps_.size()), tmp);
          }
        }
      }
    }
    return Status::OK();
  }

 private:
  WindowAttrs attrs_;
  std::vector<int64_t> w_shape_;
  std::vector<float> w_, bias_;  // copied at load: the kernel outlives no constant it reads
  std::vector<ConvEpilogueStep> steps_;
  const ConvKernels& k_;       // chosen once at load: the packing below is laid out for it
  int64_t ck_ = 0;             // GEMM depth: input channels per group x kernel size
  bool depthwise_ = false;
  int64_t group_floats_ = 0;   // packed floats per group
  std::vector<float> packed_;  // PackConvWeights panels, group after group
  static constexpr int64_t kBlockFloats = 64 * 1024;  // 256 KB of B per column block
};

std::vector<float> CopyFloats(const Tensor& t) {
  const float* p = t.data<float>();
  return std::vector<float>(p, p + t.size());
}

Expected<std::unique_ptr<OpKernel>> CreateFusedConv(const NodeInfo& node) {
  const Tensor* w = node.constant_input(1);
  const Tensor* b = node.has_input(2) ? node.constant_input(2) : nullptr;
  if (!w || w->dtype() != DType::kFloat || w->rank() < 3 || w->rank() > WindowAttrs::kMaxSpatial + 2)
    return node.Error("FusedConv needs a constant float W of rank 3 or more");
  if (node.has_input(2) && (!b || b->dtype() != DType::kFloat || b->size() != w->dim(0)))
    return node.Error("FusedConv bias must be a constant float of " + std::to_string(w->dim(0)) + " elements");
  NUPHAR_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrs::Parse(node));
  if (attrs.group <= 0 || w->dim(0) % attrs.group != 0) return node.Error("FusedConv: M is not divisible by group");
  if (!attrs.kernel_shape.empty() &&
      !std::equal(attrs.kernel_shape.begin(), attrs.kernel_shape.end(), w->shape().begin() + 2, w->shape().end()))
    return node.Error("Conv kernel_shape disagrees with W");
  const std::vector<int64_t> kinds = node.GetInts("steps"), inputs = node.GetInts("step_inputs");
  const std::vector<float> params = node.GetFloats("step_params");
  if (inputs.size() != kinds.size() || params.size() != 4 * kinds.size())
    return node.Error("FusedConv: steps, step_params and step_inputs disagree");
  std::vector<ConvEpilogueStep> steps(kinds.size());
  for (size_t i = 0; i < kinds.size(); ++i) {
    if (kinds[i] < 0 || kinds[i] > static_cast<int64_t>(ConvStep::kMulClipAddDiv))
      return node.Error("FusedConv: unknown step " + std::to_string(kinds[i]));
    ConvEpilogueStep& s = steps[i];
    s.kind = static_cast<ConvStep>(kinds[i]);
    s.alpha = params[4 * i];
    s.beta = params[4 * i + 1];
    s.lo = params[4 * i + 2];
    s.hi = params[4 * i + 3];
    if (inputs[i] >= 0) {
      const Tensor* v = node.constant_input(static_cast<size_t>(inputs[i]));
      if (!v || v->dtype() != DType::kFloat || (v->size() != 1 && v->size() != w->dim(0)))
        return node.Error("FusedConv: step operand must be a float constant of 1 or M elements");
      s.values = CopyFloats(*v);
    }
    const bool binary = s.kind <= ConvStep::kMin;
    if (binary != !s.values.empty()) return node.Error("FusedConv: step operand missing or unexpected");
  }
  return MakeKernel<FusedConvKernel>(std::move(attrs), w->shape(), CopyFloats(*w),
                                     b ? CopyFloats(*b) : std::vector<float>(), std::move(steps));
}

}  // namespace

void RegisterFusedConvKernels(KernelRegistry& r) { r.Add(kFusedDomain, kFusedConvOp, CreateFusedConv); }

}  // namespace nuphar
