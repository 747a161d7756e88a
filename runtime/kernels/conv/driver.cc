// FusedConv driver (conv.h): checks shapes, picks the algorithm (direct depthwise, GEMM on X for
// 1x1, im2col + GEMM otherwise) and runs bias + epilogue on each piece of output while it is in
// cache. Baseline flags; the ISA work goes through the ConvKernels chosen at load.
#include <algorithm>
#include <memory>
#include <string>

#include "runtime/core/product_call.h"
#include "runtime/fusion/dynamic_quant_matmul_fusion.h"
#include "runtime/kernels/conv/conv.h"
#include "runtime/kernels/math/gemv_f32.h"
#include "runtime/kernels/nn/nn_conv_geometry.h"
#include "runtime/kernels/nn/nn_kernels.h"
#include "runtime/kernels/nn/nn_scratch.h"
#include "runtime/platform/thread_pool.h"

namespace nuphar {

void PackedConvGemm(const ConvKernels& k, const float* packed, int64_t M, int64_t K, const float* const* brows,
                    int64_t N, float* c, int64_t ldc, const RowsDone& rows_done, ThreadPool* pool, int64_t min_work) {
  // Column blocks whose slice of B (K x nc floats, 256 KB) stays in L2 next to a panel.
  constexpr int64_t kBlockFloats = 64 * 1024;
  const int64_t nc = std::max<int64_t>(32, (kBlockFloats / std::max<int64_t>(K, 1)) / 32 * 32);
  const int mr = k.gemm_mr;
  const int64_t blocks = (N + nc - 1) / nc, panels = (M + mr - 1) / mr;
  // Piece t: column block t / panels, panel t % panels (consecutive pieces share B's block).
  auto piece = [&](int64_t t) {
    const int64_t n0 = t / panels * nc, m0 = t % panels * mr;
    const int64_t cols = std::min(nc, N - n0), rows = std::min<int64_t>(mr, M - m0);
    float* cp = c + m0 * ldc + n0;
    k.gemm_panel(packed + m0 * K, K, brows, n0, cp, ldc, rows, cols);
    if (rows_done)
      for (int64_t i = 0; i < rows; ++i) rows_done(cp + i * ldc, cols, m0 + i);
  };
  // Pieces [begin, end); two panels of one column block at once where the tier has a pair kernel
  // for this many columns (ConvKernels::gemm_panel_pair: few columns share their broadcasts).
  auto pieces_in = [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      const int64_t n0 = t / panels * nc, m0 = t % panels * mr;
      const int64_t cols = std::min(nc, N - n0);
      if (k.gemm_panel_pair == nullptr || cols > k.gemm_pair_max_cols || t + 1 >= end || t % panels + 1 >= panels) {
        piece(t);
        continue;
      }
      const int64_t rows2 = std::min<int64_t>(mr, M - m0 - mr);
      float* cp = c + m0 * ldc + n0;
      k.gemm_panel_pair(packed + m0 * K, K, brows, n0, cp, ldc, rows2, cols);
      if (rows_done)
        for (int64_t i = 0; i < mr + rows2; ++i) rows_done(cp + i * ldc, cols, m0 + i);
      ++t;
    }
  };
  const int threads = pool && min_work > 0 ? pool->num_threads() : 1;
  const int64_t pieces = blocks * panels;
  if (threads <= 1 || pieces <= 1 || M * N * K / threads < min_work) {
    pieces_in(0, pieces);
    return;
  }
  const int tasks = static_cast<int>(std::min<int64_t>(pieces, threads));
  pool->ParallelFor(tasks, [&](int task) { pieces_in(pieces * task / tasks, pieces * (task + 1) / tasks); });
}

namespace {

// im2col of a strided 1-D/2-D window: col[(c, kh, kw), (oh, ow)], padding 0. The generic N-D
// Im2Col walks rows through a visitor whose per-row cost dominated the small strided convs of
// Silero's encoder (a few output columns per row).
void Im2Col2d(const float* x, int64_t C, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw,
              int64_t dh, int64_t dw, int64_t pt, int64_t pl, int64_t OH, int64_t OW, float* col) {
  for (int64_t c = 0; c < C; ++c)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw)
        for (int64_t oh = 0; oh < OH; ++oh) {
          const int64_t h = oh * sh - pt + kh * dh;
          const bool row_inside = h >= 0 && h < H;
          const float* xr = x + (c * H + h) * W;
          for (int64_t ow = 0; ow < OW; ++ow) {
            const int64_t w = ow * sw - pl + kw * dw;
            *col++ = row_inside && w >= 0 && w < W ? xr[w] : 0.0f;
          }
        }
}

class FusedConvKernel final : public OpKernel {
 public:
  // `w`: the constant weight, read in place (GEMM: packed; depthwise: its buffer shared).
  FusedConvKernel(WindowAttrs attrs, const Tensor& w, std::vector<float> bias, std::vector<ConvEpilogueStep> steps,
                  ThreadPool* pool, int64_t min_work)
      : attrs_(std::move(attrs)),
        w_shape_(w.shape()),
        bias_(std::move(bias)),
        steps_(std::move(steps)),
        k_(GetConvKernels()),
        pool_(pool),
        min_work_(min_work) {
    const int64_t G = attrs_.group, Mg = w_shape_[0] / G;
    int64_t kernel_size = 1;
    for (size_t i = 2; i < w_shape_.size(); ++i) kernel_size *= w_shape_[i];
    ck_ = w_shape_[1] * kernel_size;
    // Direct depthwise when each group reads one channel; a single-channel input with one group
    // (a filter bank over audio, the first layer of an image model) is a better GEMM.
    depthwise_ = w_shape_[1] == 1 && G > 1 && w_shape_.size() <= 4;
    if (depthwise_) {
      w_ = w;
      return;
    }
    if (IsFilterBank(w_shape_, attrs_) && PackedGemmF32Available()) {
      filter_bank_ = PackedGemvF32::FromNK(w.data<float>(), ck_, w_shape_[0], ck_);
      return;
    }
    // Packed straight from the constant: a copy of W first cost as much as the packing (a model's
    // worth of weights at every load). PackConvWeights writes every float, padding included, so
    // the buffer is not zeroed first.
    group_floats_ = PackedConvWeightsFloats(Mg, ck_, k_.gemm_mr);
    packed_.reset(new float[static_cast<size_t>(G * group_floats_)]);
    for (int64_t grp = 0; grp < G; ++grp)
      PackConvWeights(w.data<float>() + grp * Mg * ck_, Mg, ck_, k_.gemm_mr, packed_.get() + grp * group_floats_);
  }

  const char* profile_path() const override { return k_.name; }
  const ProductCall* product_call() const override { return &product_; }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x || x->dtype() != DType::kFloat) return Diag::Msg("FusedConv needs a float input X");
    const int64_t rank = static_cast<int64_t>(w_shape_.size());
    const int64_t G = attrs_.group, Cg = w_shape_[1];
    if (x->rank() != rank || x->dim(1) != Cg * G)
      return Diag::Msg("Conv input " + ShapeToString(x->shape()) + " does not match W " + ShapeToString(w_shape_) +
                       " with group " + std::to_string(G));
    const std::span<const int64_t> xs(x->shape()), ws(w_shape_);
    NUPHAR_ASSIGN_OR_RETURN(const WindowGeometry g, ComputeWindowGeometry(attrs_, xs.subspan(2), ws.subspan(2)));
    std::array<int64_t, WindowAttrs::kMaxSpatial + 2> out_shape{x->dim(0), w_shape_[0]};
    for (int i = 0; i < g.rank; ++i) out_shape[static_cast<size_t>(i) + 2] = g.out[static_cast<size_t>(i)];
    Tensor* y = ctx.Output(0, DType::kFloat, std::span<const int64_t>(out_shape.data(), static_cast<size_t>(rank)));
    const Layout l = LayoutFor(g);
    Run(x->data<float>(), x->dim(0), g, l, y->data<float>(), ctx.Scratch(l.scratch_bytes));
    return Status::OK();
  }

 private:
  // What one call derives from the geometry: the algorithm, the 2-D view of the spatial dims
  // (1-D is H = 1) and the scratch it needs.
  struct Layout {
    bool depthwise, identity, two, implicit, needs_pad, wide;
    int64_t H, W, OH, OW, KH, KW, dh, dw, pt, pb, pl, pr, PH, PW, slack;
    size_t ptr_floats, scratch_bytes;
  };
  // ProductCall (core/product_call.h): the same checks as Compute, as values; the plan keeps the
  // geometry and layout prepare derived, so run does not derive them again.
  template <class K>
  friend ProductCall nuphar::ProductCallOf(const K* k);
  struct ProductPlan {
    WindowGeometry g;
    Layout l;
    int64_t n;  // images
  };
  int PrepareProduct(const int64_t* x, int rank, int64_t* y, ProductPlan* plan, size_t* scratch_bytes) const {
    if (!Geometry(x, rank, &plan->g)) return 0;
    plan->l = LayoutFor(plan->g);
    plan->n = x[0];
    *scratch_bytes = plan->l.scratch_bytes;
    return WindowOutputDims(x[0], w_shape_[0], std::span(plan->g.out.data(), static_cast<size_t>(plan->g.rank)), y);
  }
  void RunProduct(const ProductPlan& plan, const float* x, float* y, void* scratch) const {
    Run(x, plan.n, plan.g, plan.l, y, scratch);
  }

  Layout LayoutFor(const WindowGeometry& g) const {
    Layout l{};
    const int64_t Cg = w_shape_[1], Mg = w_shape_[0] / attrs_.group;
    l.depthwise = depthwise_;
    l.identity = Im2ColIsIdentity(g);
    l.two = g.rank == 2;
    const int64_t last = g.rank - 1;
    l.H = l.two ? g.in[0] : 1, l.W = g.in[last], l.OH = l.two ? g.out[0] : 1, l.OW = g.out[last];
    l.KH = l.two ? g.kernel[0] : 1, l.KW = g.kernel[last], l.dh = l.two ? g.dilation[0] : 1, l.dw = g.dilation[last];
    l.pt = l.two ? g.pad_begin[0] : 0, l.pb = l.two ? g.pad_end[0] : 0, l.pl = g.pad_begin[last], l.pr = g.pad_end[last];
    l.PH = l.H + l.pt + l.pb, l.PW = l.W + l.pl + l.pr;
    // Implicit GEMM (unit stride, rank <= 2): every row of the im2col matrix is a contiguous
    // span of the zero-padded input if the output is computed "wide", PW columns per output row
    // of which the last PW - OW are discarded. No im2col copy; the padding copy and the
    // discarded columns cost far less than the KH*KW-fold copy (40% of openWakeWord's time).
    l.implicit = !l.depthwise && !l.identity && g.rank <= 2 && (!l.two || g.stride[0] == 1) && g.stride[last] == 1;
    l.needs_pad = l.pt | l.pb | l.pl | l.pr | (l.KW > 1);
    l.wide = l.implicit && l.OW != l.PW;  // else the wide output is Y itself
    l.slack = (l.KW - 1) * l.dw;          // the last wide row reads this far past the plane
    // One scratch block: the B row pointers, then the padded input and wide output (implicit)
    // or the im2col matrix. Depthwise tasks pad their planes in per-thread scratch.
    int64_t work = 0;
    if (l.depthwise)
      work = 0;
    else if (l.implicit)
      work = (l.needs_pad ? Cg * l.PH * l.PW + l.slack + 16 : 0) + (l.wide ? Mg * l.OH * l.PW : 0);
    else if (!l.identity)
      work = ck_ * g.out_size();
    l.ptr_floats = static_cast<size_t>(l.depthwise ? 0 : (ck_ * sizeof(float*) + sizeof(float) - 1) / sizeof(float));
    l.scratch_bytes = sizeof(float) * (static_cast<size_t>(work) + l.ptr_floats + 16);
    if (!filter_bank_.empty()) l.scratch_bytes = FilterBankScratchBytes(g);
    return l;
  }

  // Y for N images of X (shapes checked), `block` the Layout's scratch.
  void Run(const float* px, int64_t N, const WindowGeometry& g, const Layout& l, float* py, void* block_bytes) const {
    if (!filter_bank_.empty()) return RunFilterBank(px, N, g, py, block_bytes);
    const int64_t M = w_shape_[0], G = attrs_.group, Cg = w_shape_[1], C = Cg * G, Mg = M / G;
    const int64_t in_size = g.in_size(), out_size = g.out_size(), ck = ck_;
    const ConvKernels& k = k_;
    const bool depthwise = l.depthwise, identity = l.identity, two = l.two, implicit = l.implicit,
               needs_pad = l.needs_pad, wide = l.wide;
    const int64_t last = g.rank - 1;
    const int64_t H = l.H, W = l.W, OH = l.OH, OW = l.OW, KH = l.KH, KW = l.KW, dh = l.dh, dw = l.dw, pt = l.pt,
                  pb = l.pb, pl = l.pl, pr = l.pr, PH = l.PH, PW = l.PW, slack = l.slack;
    float* block = static_cast<float*>(block_bytes);
    const float** brows = reinterpret_cast<const float**>(block);
    float* scratch = block + l.ptr_floats;
    scratch += (16 - reinterpret_cast<uintptr_t>(scratch) / sizeof(float) % 16) % 16;  // 64-byte aligned
    auto finish = [&](float* p, int64_t len, int64_t m) {
      k.epilogue(p, len, bias_.empty() ? 0.0f : bias_[static_cast<size_t>(m)], m, steps_.data(),
                 static_cast<int>(steps_.size()));
    };
    for (int64_t n = 0; n < N; ++n) {
      if (depthwise) {
        // The group of output channel m reads input channel m / Mg. Channels split into tasks.
        auto channels = [&](int64_t m0, int64_t m1) {
          float* padded = ScratchBuffer<float>(static_cast<size_t>(PH * PW + 16), 1);
          for (int64_t m = m0; m < m1; ++m) {
            float* plane = py + (n * M + m) * out_size;
            k.depthwise_plane(px + (n * C + m / Mg) * in_size, H, W, w_.data<float>() + m * KH * KW, KH, KW,
                              two ? g.stride[0] : 1, g.stride[last], dh, dw, pt, pl, pb, pr, plane, OH, OW, padded);
            finish(plane, out_size, m);
          }
        };
        const int tasks = Tasks(M * out_size * KH * KW, M);
        if (tasks <= 1) {
          channels(0, M);
        } else {
          pool_->ParallelFor(tasks, [&](int t) { channels(M * t / tasks, M * (t + 1) / tasks); });
        }
        continue;
      }
      for (int64_t grp = 0; grp < G; ++grp) {
        const float* xg = px + (n * C + grp * Cg) * in_size;
        float* yg = py + (n * M + grp * Mg) * out_size;
        const float* wg = packed_.get() + grp * group_floats_;
        if (implicit) {
          const float* src = xg;
          if (needs_pad) {
            float* pad = scratch;
            std::fill(pad, pad + Cg * PH * PW + slack, 0.0f);
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t h = 0; h < H; ++h)
                std::copy(xg + (c * H + h) * W, xg + (c * H + h + 1) * W, pad + (c * PH + h + pt) * PW + pl);
            src = pad;
          }
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh)
              for (int64_t kw = 0; kw < KW; ++kw)
                brows[(c * KH + kh) * KW + kw] = src + c * PH * PW + kh * dh * PW + kw * dw;
          if (!wide) {
            Gemm(wg, Mg, ck, brows, out_size, yg, out_size, grp * Mg, true);
          } else {
            float* wide_out = scratch + (needs_pad ? Cg * PH * PW + slack + 16 : 0);
            Gemm(wg, Mg, ck, brows, OH * PW, wide_out, OH * PW, grp * Mg, false);
            for (int64_t m = 0; m < Mg; ++m) {
              float* plane = yg + m * out_size;
              for (int64_t oh = 0; oh < OH; ++oh)
                std::copy(wide_out + (m * OH + oh) * PW, wide_out + (m * OH + oh) * PW + OW, plane + oh * OW);
              finish(plane, out_size, grp * Mg + m);
            }
          }
          continue;
        }
        const float* b = xg;
        if (!identity) {
          if (g.rank <= 2) {
            Im2Col2d(xg, Cg, H, W, KH, KW, two ? g.stride[0] : 1, g.stride[last], dh, dw, pt, pl, OH, OW, scratch);
          } else {
            Im2Col<float, float>(xg, Cg, g, 0.0f, scratch);
          }
          b = scratch;
        }
        for (int64_t r = 0; r < ck; ++r) brows[r] = b + r * out_size;
        Gemm(wg, Mg, ck, brows, out_size, yg, out_size, grp * Mg, true);
      }
    }
  }

  // A filter bank: one input channel, one group, 1-D, no dilation (the STFT front end of audio
  // models: Silero's 258 filters of 256 taps at stride 64). Each output position's window is a
  // contiguous run of the input, so Y^T = windows x W^T is a GEMM whose A rows start `stride`
  // floats apart in the input itself: no im2col. Its 258 columns fill the packed fp32 GEMM's
  // 32-column blocks where the conv GEMM had only the output positions (25) as columns: on
  // Silero v3.1's conv 35 -> 21 us (a MatMul of the same shape), measured on this host's AVX-512.
  static bool IsFilterBank(const std::vector<int64_t>& w_shape, const WindowAttrs& attrs) {
    for (int64_t d : attrs.dilations)
      if (d != 1) return false;
    return w_shape.size() == 3 && w_shape[1] == 1 && attrs.group == 1;
  }

  // Floats of the filter bank's scratch: Y^T [OW, ldc], then the padded input.
  int64_t FilterBankLdc() const {
    return (w_shape_[0] + PackedGemvF32::kBlockCols - 1) / PackedGemvF32::kBlockCols * PackedGemvF32::kBlockCols;
  }
  size_t FilterBankScratchBytes(const WindowGeometry& g) const {
    return sizeof(float) * static_cast<size_t>(g.out[0] * FilterBankLdc() + g.in[0] + g.pad_begin[0] + g.pad_end[0]);
  }
  void RunFilterBank(const float* px, int64_t N, const WindowGeometry& g, float* py, void* scratch_bytes) const {
    const int64_t M = w_shape_[0], K = ck_, W = g.in[0], OW = g.out[0], stride = g.stride[0];
    const int64_t pl = g.pad_begin[0], pr = g.pad_end[0], PW = W + pl + pr;
    const int64_t ldc = FilterBankLdc(), blocks = ldc / PackedGemvF32::kBlockCols;
    const bool pad = pl != 0 || pr != 0;
    float* scratch = static_cast<float*>(scratch_bytes);
    float* yt = scratch;  // [OW, ldc]
    for (int64_t n = 0; n < N; ++n) {
      const float* src = px + n * W;
      if (pad) {
        float* padded = scratch + OW * ldc;
        std::fill(padded, padded + PW, 0.0f);
        std::copy(src, src + W, padded + pl);
        src = padded;
      }
      const int tasks = Tasks(OW * K * M, blocks);
      if (tasks <= 1) {
        GemmF32Packed(src, OW, stride, filter_bank_, 0, blocks, nullptr, yt, ldc);
      } else {
        pool_->ParallelFor(tasks, [&](int t) {
          GemmF32Packed(src, OW, stride, filter_bank_, blocks * t / tasks, blocks * (t + 1) / tasks, nullptr, yt, ldc);
        });
      }
      for (int64_t m = 0; m < M; ++m) {
        float* plane = py + (n * M + m) * OW;
        for (int64_t o = 0; o < OW; ++o) plane[o] = yt[o * ldc + m];
        k_.epilogue(plane, OW, bias_.empty() ? 0.0f : bias_[static_cast<size_t>(m)], m, steps_.data(),
                    static_cast<int>(steps_.size()));
      }
    }
  }

  bool Geometry(const int64_t* x, int rank, WindowGeometry* g) const {
    if (rank != static_cast<int>(w_shape_.size()) || x[1] != w_shape_[1] * attrs_.group) return false;
    const std::span<const int64_t> xs(x, static_cast<size_t>(rank)), ws(w_shape_);
    auto geometry = ComputeWindowGeometry(attrs_, xs.subspan(2), ws.subspan(2));
    if (!geometry) return false;
    *g = *geometry;
    return true;
  }

  void Gemm(const float* wg, int64_t Mg, int64_t ck, const float** brows, int64_t cols_total, float* c, int64_t ldc,
            int64_t m_base, bool epilogue) const {
    auto rows_done = [&](float* row, int64_t len, int64_t m) {
      const int64_t ch = m_base + m;
      k_.epilogue(row, len, bias_.empty() ? 0.0f : bias_[static_cast<size_t>(ch)], ch, steps_.data(),
                  static_cast<int>(steps_.size()));
    };
    PackedConvGemm(k_, wg, Mg, ck, brows, cols_total, c, ldc, epilogue ? RowsDone(rows_done) : RowsDone(), pool_,
                   min_work_);
  }

  // Tasks for `work` multiply-adds over `items` independent pieces: 1 without a pool or below
  // nuphar_parallel_min_workloads per thread.
  int Tasks(int64_t work, int64_t items) const {
    if (!pool_ || pool_->num_threads() <= 1 || min_work_ <= 0) return 1;
    const int threads = pool_->num_threads();
    if (work / threads < min_work_) return 1;
    return static_cast<int>(std::min<int64_t>(threads, items));
  }

  WindowAttrs attrs_;
  std::vector<int64_t> w_shape_;
  Tensor w_;                  // depthwise only: the constant W (its buffer is shared, never written)
  std::vector<float> bias_;   // copied at load (small)
  std::vector<ConvEpilogueStep> steps_;
  const ConvKernels& k_;  // chosen once at load: the packing below is laid out for it
  int64_t ck_ = 0;        // GEMM depth: input channels per group x kernel size
  bool depthwise_ = false;
  int64_t group_floats_ = 0;    // packed floats per group
  std::unique_ptr<float[]> packed_;  // PackConvWeights panels, group after group (GEMM only)
  PackedGemvF32 filter_bank_;        // W^T packed for GemmF32Packed (filter banks on AVX-512 only)
  ThreadPool* pool_ = nullptr;  // the session's workers (null: one thread)
  int64_t min_work_ = 0;        // nuphar_parallel_min_workloads
  const ProductCall product_ = ProductCallOf(this);
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
  return MakeKernel<FusedConvKernel>(std::move(attrs), *w, b ? CopyFloats(*b) : std::vector<float>(), std::move(steps), node.thread_pool(),
                                     node.parallel_min_work());
}

}  // namespace

void RegisterFusedConvKernels(KernelRegistry& r) { r.Add(kFusedDomain, kFusedConvOp, CreateFusedConv); }

}  // namespace nuphar
