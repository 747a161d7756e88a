// Conv (1-D..6-D, groups, dilations, strides, pads, auto_pad) as im2col + Eigen GEMM, and
// ConvTranspose (output_padding, output_shape, groups, dilations, auto_pad) as GEMM + col2im,
// and Col2Im-18 (the col2im step alone); a float ConvTranspose with constant W packs W^T once
// at load for the conv family's GEMM (runtime/kernels/conv/conv.h). Float Conv with constant W
// becomes FusedConv at load.
#include <algorithm>
#include <string>

#include "runtime/core/product_call.h"
#include "runtime/kernels/conv/conv.h"
#include "runtime/kernels/math/gemm_eigen.h"
#include "runtime/kernels/nn/nn_conv_geometry.h"
#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/nn/nn_kernels.h"
#include "runtime/kernels/nn/nn_scratch.h"
#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar {
namespace {

std::string Shapes(const Tensor& x, const Tensor& w) {
  return "X " + ShapeToString(x.shape()) + ", W " + ShapeToString(w.shape());
}

// Checks X [N, C, in...] against W [M, C/group, k...] (Conv) and returns the spatial kernel.
Status CheckConvShapes(const WindowAttrs& attrs, const Tensor& x, const Tensor& w) {
  if (x.rank() < 3 || w.rank() != x.rank()) return Diag::Msg("Conv needs X and W of equal rank >= 3: " + Shapes(x, w));
  if (x.dim(1) != w.dim(1) * attrs.group || w.dim(0) % attrs.group != 0)
    return Diag::Msg("Conv channels do not match group " + std::to_string(attrs.group) + ": " + Shapes(x, w));
  if (!attrs.kernel_shape.empty() &&
      !std::equal(attrs.kernel_shape.begin(), attrs.kernel_shape.end(), w.shape().begin() + 2, w.shape().end()))
    return Diag::Msg("Conv kernel_shape disagrees with W: " + Shapes(x, w));
  return Status::OK();
}

class ConvKernel final : public OpKernel {
 public:
  explicit ConvKernel(WindowAttrs attrs) : attrs_(std::move(attrs)) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return Diag::Msg("Conv needs inputs X and W");
    if (w->dtype() != x->dtype() || (b && b->dtype() != x->dtype()))
      return Diag::Msg("Conv inputs have different element types");
    NUPHAR_RETURN_IF_ERROR(CheckConvShapes(attrs_, *x, *w));
    const std::span<const int64_t> xs(x->shape()), ws(w->shape());
    NUPHAR_ASSIGN_OR_RETURN(const WindowGeometry g, ComputeWindowGeometry(attrs_, xs.subspan(2), ws.subspan(2)));
    const int64_t N = x->dim(0), C = x->dim(1), M = w->dim(0), G = attrs_.group;
    if (b && b->size() != M) return Diag::Msg("Conv bias B must have " + std::to_string(M) + " elements");
    std::array<int64_t, WindowAttrs::kMaxSpatial + 2> out_shape{N, M};
    for (int i = 0; i < g.rank; ++i) out_shape[static_cast<size_t>(i) + 2] = g.out[static_cast<size_t>(i)];
    Tensor* y = ctx.Output(0, x->dtype(), std::span<const int64_t>(out_shape.data(), static_cast<size_t>(g.rank) + 2));
    return DispatchFloating(x->dtype(), [&]<class T>() {
      const int64_t Cg = C / G, Mg = M / G, in_size = g.in_size(), out_size = g.out_size();
      const int64_t ck = Cg * g.kernel_size();  // GEMM depth
      const bool identity = Im2ColIsIdentity(g);
      T* col = identity ? nullptr : ScratchBuffer<T>(static_cast<size_t>(ck * out_size), 0);
      const T* px = x->data<T>();
      const T* pw = w->data<T>();
      T* py = y->data<T>();
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t grp = 0; grp < G; ++grp) {
          const T* xg = px + (n * C + grp * Cg) * in_size;
          if (!identity) Im2Col<T, T>(xg, Cg, g, T(0), col);
          // Y_g[Mg, out] = W_g[Mg, ck] * col[ck, out]
          GemmAny<T>(false, false, Mg, out_size, ck, T(1), pw + grp * Mg * ck, ck, identity ? xg : col, out_size, T(0),
                     py + (n * M + grp * Mg) * out_size, out_size);
        }
        if (b) {
          const T* pb = b->data<T>();
          for (int64_t m = 0; m < M; ++m) {
            T* row = py + (n * M + m) * out_size;
            for (int64_t i = 0; i < out_size; ++i) row[i] += pb[m];
          }
        }
      }
      return Status::OK();
    });
  }

 private:
  WindowAttrs attrs_;
};

Expected<std::unique_ptr<OpKernel>> CreateConv(const NodeInfo& node) {
  for (size_t i = 0; i < 3; ++i)
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kFloat, DType::kDouble))
      return node.Error(std::string("Conv on ") + DTypeName(node.input_type(i)) + " is not supported");
  NUPHAR_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrs::Parse(node));
  return MakeKernel<ConvKernel>(std::move(attrs));
}

// ConvTranspose: X [N, C, in...], W [C, M/group, k...], Y [N, M, out...].
// Per group: col[Mg*k, in] = W_g^T * X_g, then col2im adds each column into the output window.
class ConvTransposeKernel final : public OpKernel {
 public:
  // `has_b`: the node has input B; `constant_b` its value when it is a constant.
  ConvTransposeKernel(WindowAttrs attrs, std::vector<int64_t> output_padding, std::vector<int64_t> output_shape,
                      const Tensor* constant_w, bool has_b, const Tensor* constant_b)
      : attrs_(std::move(attrs)), output_padding_(std::move(output_padding)), output_shape_(std::move(output_shape)) {
    if (constant_w && constant_w->dtype() == DType::kFloat && constant_w->rank() >= 3 && attrs_.group > 0 &&
        constant_w->dim(0) % attrs_.group == 0)
      PackTransposed(*constant_w);
    // The product call (ProductCall) needs every input but X known now: W packed, B constant or absent.
    const int64_t M = conv_ ? packed_w_shape_[1] * attrs_.group : 0;
    if (conv_ && (!has_b || (constant_b && constant_b->dtype() == DType::kFloat && constant_b->size() == M))) {
      if (has_b) bias_ = *constant_b;
      product_ = ProductCallOf(this);
    }
  }

  const char* profile_path() const override { return conv_ ? conv_->name : "reference"; }
  const ProductCall* product_call() const override { return product_.run ? &product_ : nullptr; }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return Diag::Msg("ConvTranspose needs inputs X and W");
    if (w->dtype() != x->dtype() || (b && b->dtype() != x->dtype()))
      return Diag::Msg("ConvTranspose inputs have different element types");
    if (x->rank() < 3 || w->rank() != x->rank() || w->dim(0) != x->dim(1))
      return Diag::Msg("ConvTranspose needs X [N,C,...] and W [C,M/group,...]: " + Shapes(*x, *w));
    NUPHAR_ASSIGN_OR_RETURN(const WindowGeometry g, Geometry(x->shape(), w->shape()));
    const int64_t N = x->dim(0), C = x->dim(1), G = attrs_.group, Mg = w->dim(1), M = Mg * G;
    if (C % G != 0) return Diag::Msg("ConvTranspose channels are not divisible by group: " + Shapes(*x, *w));
    if (b && b->size() != M) return Diag::Msg("ConvTranspose bias B must have " + std::to_string(M) + " elements");
    // In this geometry `in` is the ConvTranspose output and `out` its input (the forward conv's view).
    std::array<int64_t, WindowAttrs::kMaxSpatial + 2> out_shape{N, M};
    for (int i = 0; i < g.rank; ++i) out_shape[static_cast<size_t>(i) + 2] = g.in[static_cast<size_t>(i)];
    Tensor* y = ctx.Output(0, x->dtype(), std::span<const int64_t>(out_shape.data(), static_cast<size_t>(g.rank) + 2));
    if (conv_ && x->dtype() == DType::kFloat && w->shape() == packed_w_shape_) {
      RunPacked(x->data<float>(), x->shape(), b ? b->data<float>() : nullptr, g, y->data<float>(),
                ctx.Scratch(PackedScratchBytes(x->shape(), g)));
      return Status::OK();
    }
    return DispatchFloating(x->dtype(), [&]<class T>() {
      const int64_t Cg = C / G, x_size = g.out_size(), y_size = g.in_size(), mk = Mg * g.kernel_size();
      const bool identity = Im2ColIsIdentity(g);
      T* col = identity ? nullptr : ScratchBuffer<T>(static_cast<size_t>(mk * x_size), 0);
      const T* px = x->data<T>();
      const T* pw = w->data<T>();
      T* py = y->data<T>();
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t grp = 0; grp < G; ++grp) {
          T* yg = py + (n * M + grp * Mg) * y_size;
          for (int64_t m = 0; m < Mg; ++m) {
            const T fill = b ? b->data<T>()[grp * Mg + m] : T(0);
            std::fill(yg + m * y_size, yg + (m + 1) * y_size, fill);
          }
          // col[mk, x_size] = W_g^T (W_g is [Cg, mk]) * X_g [Cg, x_size]; a 1x1 unit-stride
          // geometry accumulates straight into Y.
          const T* wg = pw + grp * Cg * mk;
          const T* xg = px + (n * C + grp * Cg) * x_size;
          if (identity) {
            GemmAny<T>(true, false, mk, x_size, Cg, T(1), wg, mk, xg, x_size, T(1), yg, y_size);
          } else {
            GemmAny<T>(true, false, mk, x_size, Cg, T(1), wg, mk, xg, x_size, T(0), col, x_size);
            Col2Im<T>(col, Mg, g, yg);
          }
        }
      }
      return Status::OK();
    });
  }

 private:
  // W [C, Mg, k...]: per group W_g [Cg, mk] is transposed to [mk, Cg] and packed into the conv
  // family's panels, once.
  void PackTransposed(const Tensor& w) {
    const int64_t G = attrs_.group, C = w.dim(0), Cg = C / G, mk = w.size() / C;
    conv_ = &GetConvKernels();
    group_floats_ = PackedConvWeightsFloats(mk, Cg, conv_->gemm_mr);
    packed_.resize(static_cast<size_t>(G * group_floats_));
    std::vector<float> wt(static_cast<size_t>(mk * Cg));
    for (int64_t grp = 0; grp < G; ++grp) {
      const float* wg = w.data<float>() + grp * Cg * mk;
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t r = 0; r < mk; ++r) wt[static_cast<size_t>(r * Cg + c)] = wg[c * mk + r];
      PackConvWeights(wt.data(), mk, Cg, conv_->gemm_mr, packed_.data() + grp * group_floats_);
    }
    packed_w_shape_ = w.shape();
  }

  // The packed path's scratch: X's row pointers, then col[mk, x_size].
  size_t PackedScratchFloats(std::span<const int64_t> xs, const WindowGeometry& g, size_t* ptr_floats) const {
    const int64_t Cg = xs[1] / attrs_.group, mk = packed_w_shape_[1] * g.kernel_size();
    *ptr_floats = (static_cast<size_t>(Cg) * sizeof(float*) + sizeof(float) - 1) / sizeof(float) + 16;
    return *ptr_floats + static_cast<size_t>(mk * g.out_size());
  }
  size_t PackedScratchBytes(std::span<const int64_t> xs, const WindowGeometry& g) const {
    size_t ptr_floats = 0;
    return sizeof(float) * PackedScratchFloats(xs, g, &ptr_floats);
  }

  // The packed path: col[mk, x_size] = W_g^T X_g on the conv GEMM, then col2im onto the bias
  // (null: none). `scratch_bytes` holds PackedScratchBytes.
  void RunPacked(const float* px, std::span<const int64_t> xs, const float* b, const WindowGeometry& g, float* py,
                 void* scratch_bytes) const {
    const int64_t N = xs[0], C = xs[1], G = attrs_.group, Cg = C / G, Mg = packed_w_shape_[1], M = Mg * G;
    const int64_t x_size = g.out_size(), y_size = g.in_size(), mk = Mg * g.kernel_size();
    const bool identity = Im2ColIsIdentity(g);
    size_t ptr_floats = 0;
    PackedScratchFloats(xs, g, &ptr_floats);
    float* scratch = static_cast<float*>(scratch_bytes);
    const float** xrows = reinterpret_cast<const float**>(scratch);
    float* col = scratch + ptr_floats;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t grp = 0; grp < G; ++grp) {
        float* yg = py + (n * M + grp * Mg) * y_size;
        const float* xg = px + (n * C + grp * Cg) * x_size;
        for (int64_t c = 0; c < Cg; ++c) xrows[c] = xg + c * x_size;
        auto bias = [&](int64_t m) { return b ? b[grp * Mg + m] : 0.0f; };
        const float* wg = packed_.data() + grp * group_floats_;
        if (identity) {  // 1x1, unit stride: the GEMM writes Y, the bias follows row by row
          PackedConvGemm(*conv_, wg, mk, Cg, xrows, x_size, yg, y_size, [&](float* row, int64_t len, int64_t m) {
            const float v = bias(m);
            for (int64_t i = 0; i < len; ++i) row[i] += v;
          });
          continue;
        }
        for (int64_t m = 0; m < Mg; ++m) std::fill(yg + m * y_size, yg + (m + 1) * y_size, bias(m));
        PackedConvGemm(*conv_, wg, mk, Cg, xrows, x_size, col, x_size, RowsDone());
        Col2Im<float>(col, Mg, g, yg);
      }
  }

  // ProductCall (core/product_call.h): Compute's checks of the packed path, as values.
  bool ProductGeometry(const int64_t* x, int rank, WindowGeometry* g) const {
    const int64_t G = attrs_.group;
    if (rank != static_cast<int>(packed_w_shape_.size()) || x[1] != packed_w_shape_[0] || x[1] % G != 0) return false;
    auto geometry = Geometry(std::span<const int64_t>(x, static_cast<size_t>(rank)), packed_w_shape_);
    if (!geometry) return false;
    *g = *geometry;
    return true;
  }
  // The plan keeps the geometry prepare derived, so run does not derive it again.
  template <class K>
  friend ProductCall nuphar::ProductCallOf(const K* k);
  struct ProductPlan {
    WindowGeometry g;
    std::array<int64_t, 2> nc;  // X's N and C: all RunPacked reads of X's dims
  };
  int PrepareProduct(const int64_t* x, int rank, int64_t* y, ProductPlan* plan, size_t* scratch_bytes) const {
    if (!ProductGeometry(x, rank, &plan->g)) return 0;
    plan->nc = {x[0], x[1]};
    *scratch_bytes = PackedScratchBytes(plan->nc, plan->g);
    return WindowOutputDims(x[0], packed_w_shape_[1] * attrs_.group,
                            std::span(plan->g.in.data(), static_cast<size_t>(plan->g.rank)), y);
  }
  void RunProduct(const ProductPlan& plan, const float* x, float* y, void* scratch) const {
    RunPacked(x, plan.nc, bias_.defined() ? bias_.data<float>() : nullptr, plan.g, y, scratch);
  }

  // Builds the forward-conv geometry whose input is Y and whose output is X.
  Expected<WindowGeometry> Geometry(std::span<const int64_t> xs, std::span<const int64_t> ws) const {
    const size_t rank = xs.size() - 2;
    if (rank > WindowAttrs::kMaxSpatial) return Diag::Msg("ConvTranspose supports at most 6 spatial dimensions");
    auto attr = [&](const std::vector<int64_t>& v, size_t i, int64_t fallback) { return v.empty() ? fallback : v[i]; };
    if ((!attrs_.strides.empty() && attrs_.strides.size() != rank) ||
        (!attrs_.dilations.empty() && attrs_.dilations.size() != rank) ||
        (!attrs_.pads.empty() && attrs_.pads.size() != 2 * rank) ||
        (!output_padding_.empty() && output_padding_.size() != rank) ||
        (!attrs_.kernel_shape.empty() && attrs_.kernel_shape.size() != rank))
      return Diag::Msg("ConvTranspose attributes do not match the input's spatial rank");
    // output_shape may list the spatial dims only or N, C and the spatial dims.
    const size_t os_skip = output_shape_.size() == rank + 2 ? 2 : 0;
    if (!output_shape_.empty() && output_shape_.size() != rank + os_skip)
      return Diag::Msg("ConvTranspose output_shape does not match the input's spatial rank");
    WindowGeometry g;
    g.rank = static_cast<int>(rank);
    for (size_t i = 0; i < rank; ++i) {
      const int64_t in = xs[i + 2], k = ws[i + 2];
      const int64_t s = attr(attrs_.strides, i, 1), d = attr(attrs_.dilations, i, 1);
      const int64_t op = attr(output_padding_, i, 0);
      const int64_t extent = (k - 1) * d + 1;
      const int64_t full = s * (in - 1) + op + extent;  // output size with no padding
      int64_t pb = attr(attrs_.pads, i, 0), pe = attr(attrs_.pads, i + rank, 0), out = 0;
      if (!output_shape_.empty() || attrs_.auto_pad == AutoPad::kSameUpper || attrs_.auto_pad == AutoPad::kSameLower) {
        out = !output_shape_.empty() ? output_shape_[i + os_skip] : in * s;
        const int64_t total = std::max<int64_t>(0, full - out);
        // Spec: SAME_UPPER puts the odd cell at the end, everything else at the beginning.
        pb = attrs_.auto_pad == AutoPad::kSameUpper ? total / 2 : total - total / 2;
        pe = total - pb;
      } else {
        if (attrs_.auto_pad == AutoPad::kValid) pb = pe = 0;
        out = full - pb - pe;
      }
      if (out <= 0) return Diag::Msg("ConvTranspose output size is not positive");
      g.SetDim(i, out, in, k, s, d, pb, pe);  // the adjoint: ConvTranspose's output is the window input
    }
    return g;
  }

  WindowAttrs attrs_;
  std::vector<int64_t> output_padding_, output_shape_;
  const ConvKernels* conv_ = nullptr;  // set when W was packed at load (float constant W)
  std::vector<int64_t> packed_w_shape_;
  int64_t group_floats_ = 0;
  std::vector<float> packed_;
  Tensor bias_;  // the constant B (shared buffer) of the product call; empty without B
  ProductCall product_;  // offered when W is packed and B constant or absent
};

Expected<std::unique_ptr<OpKernel>> CreateConvTranspose(const NodeInfo& node) {
  for (size_t i = 0; i < 3; ++i)
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kFloat, DType::kDouble))
      return node.Error(std::string("ConvTranspose on ") + DTypeName(node.input_type(i)) + " is not supported");
  NUPHAR_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrs::Parse(node));
  return MakeKernel<ConvTransposeKernel>(std::move(attrs), node.GetInts("output_padding"), node.GetInts("output_shape"),
                                         node.constant_input(1), node.has_input(2), node.constant_input(2));
}

// Col2Im-18: X [N, C * prod(block_shape), L] with L the number of window positions over
// image_shape; each column is added back into its window (overlaps sum). The same scatter as
// ConvTranspose's, with the image as the "input" geometry.
class Col2ImKernel final : public OpKernel {
 public:
  explicit Col2ImKernel(WindowAttrs attrs) : attrs_(std::move(attrs)) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x || !ctx.input(1) || !ctx.input(2)) return Diag::Msg("Col2Im needs input, image_shape and block_shape");
    if (x->rank() != 3) return Diag::Msg("Col2Im input must be [N, C * prod(block_shape), L], got " + ShapeToString(x->shape()));
    NUPHAR_ASSIGN_OR_RETURN(const std::vector<int64_t> image, tensor_kernels::InputAsInt64(ctx, 1, "image_shape"));
    NUPHAR_ASSIGN_OR_RETURN(const std::vector<int64_t> block, tensor_kernels::InputAsInt64(ctx, 2, "block_shape"));
    if (image.size() != block.size()) return Diag::Msg("image_shape and block_shape have different lengths");
    NUPHAR_ASSIGN_OR_RETURN(const WindowGeometry g, ComputeWindowGeometry(attrs_, image, block));
    const int64_t k = g.kernel_size();
    if (k <= 0 || x->dim(1) % k != 0 || x->dim(2) != g.out_size())
      return Diag::Msg("Col2Im input " + ShapeToString(x->shape()) + " does not match block_shape " + ShapeToString(block) +
                       " over image_shape " + ShapeToString(image) + " (" + std::to_string(g.out_size()) + " blocks)");
    const int64_t channels = x->dim(1) / k;
    std::vector<int64_t> out_shape{x->dim(0), channels};
    out_shape.insert(out_shape.end(), image.begin(), image.end());
    Tensor* y = ctx.Output(0, x->dtype(), out_shape);
    return DispatchFloating(x->dtype(), [&]<class T>() {
      std::fill(y->data<T>(), y->data<T>() + y->size(), T(0));
      const int64_t col_size = x->dim(1) * x->dim(2), img_size = channels * g.in_size();
      for (int64_t n = 0; n < x->dim(0); ++n) Col2Im<T>(x->data<T>() + n * col_size, channels, g, y->data<T>() + n * img_size);
      return Status::OK();
    });
  }

 private:
  WindowAttrs attrs_;
};

Expected<std::unique_ptr<OpKernel>> CreateCol2Im(const NodeInfo& node) {
  if (!DeclaredTypeIsOneOf(node.input_type(0), DType::kFloat, DType::kDouble))
    return node.Error(std::string("Col2Im on ") + DTypeName(node.input_type(0)) + " is not supported");
  NUPHAR_ASSIGN_OR_RETURN(WindowAttrs attrs, WindowAttrs::Parse(node));
  return MakeKernel<Col2ImKernel>(std::move(attrs));
}

// DeformConv-19 is refused by name rather than left to the generic "no kernel": ONNX Runtime
// 1.20's CPU provider has no DeformConv either, so there is no reference to check a kernel against.
Expected<std::unique_ptr<OpKernel>> CreateDeformConv(const NodeInfo& node) {
  return node.Error("DeformConv (opset 19) is not supported (ONNX Runtime 1.20's CPU provider has none either)");
}

}  // namespace

void RegisterConvKernels(KernelRegistry& r) {
  r.Add("", "Conv", CreateConv);
  r.Add("", "ConvTranspose", CreateConvTranspose);
  r.Add("", "Col2Im", CreateCol2Im);
  r.Add("", "DeformConv", CreateDeformConv);
}

}  // namespace nuphar
