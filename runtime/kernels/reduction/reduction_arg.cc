// ArgMax and ArgMin along one axis (keepdims, select_last_index from opset 12). Ties go to
// the first index unless select_last_index=1. Output is int64.
#include "runtime/kernels/reduction/reduction_common.h"

namespace nuphar::red {
namespace {

constexpr TypeSet kArgTypes = ew::kNumericTypes;

template <bool kMax, class T>
void ArgLoop(const T* x, int64_t* y, const AxisView& v, bool last) {
  for (int64_t o = 0; o < v.outer; ++o) {
    const T* base = x + o * v.n * v.inner;
    for (int64_t i = 0; i < v.inner; ++i) {
      auto best = ew::Load(base[i]);
      int64_t best_r = 0;
      for (int64_t r = 1; r < v.n; ++r) {
        const auto val = ew::Load(base[r * v.inner + i]);
        const bool better = kMax ? (last ? val >= best : val > best) : (last ? val <= best : val < best);
        if (better) {
          best = val;
          best_r = r;
        }
      }
      y[o * v.inner + i] = best_r;
    }
  }
}

template <bool kMax>
class ArgKernel final : public OpKernel {
 public:
  ArgKernel(int64_t axis, bool keepdims, bool last) : axis_(axis), keepdims_(keepdims), last_(last) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    if (x->rank() > static_cast<int64_t>(InlineShape::kCapacity)) return Diag::Msg("rank " + std::to_string(x->rank()) + " is not supported");
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, x->rank()));
    const AxisView v = ViewAround(x->shape(), axis);
    if (v.n == 0) return Diag::Msg("ArgMax/ArgMin along an empty axis has no answer");
    InlineShape out_shape;
    for (int64_t d = 0; d < x->rank(); ++d) {
      if (d != axis) out_shape.dims[out_shape.rank++] = x->dim(d);
      else if (keepdims_) out_shape.dims[out_shape.rank++] = 1;
    }
    Tensor* y = ctx.Output(0, DType::kInt64, out_shape.span());
    return ew::VisitDType<kArgTypes>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      ArgLoop<kMax>(x->data<T>(), y->data<int64_t>(), v, last_);
      return Status::OK();
    });
  }

 private:
  int64_t axis_;
  bool keepdims_, last_;
};

template <bool kMax>
Expected<std::unique_ptr<OpKernel>> CreateArg(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(ew::CheckDeclaredType(node, 0, kArgTypes));
  return MakeKernel<ArgKernel<kMax>>(node.GetInt("axis", 0), node.GetInt("keepdims", 1) != 0,
                                     node.GetInt("select_last_index", 0) != 0);
}

}  // namespace

void RegisterArgKernels(KernelRegistry& r) {
  r.Add("", "ArgMax", CreateArg<true>);
  r.Add("", "ArgMin", CreateArg<false>);
}

}  // namespace nuphar::red
