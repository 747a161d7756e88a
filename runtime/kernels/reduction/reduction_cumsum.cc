// CumSum(x, axis) with the exclusive and reverse attributes.
#include "runtime/kernels/reduction/reduction_common.h"

namespace nuphar::red {
namespace {

constexpr TypeSet kCumSumTypes = ew::kNumericTypes;

/// Running sums along the axis of the [outer, n, inner] view, `inner` lanes at a time.
template <class T>
void CumSumLoop(const T* x, T* y, const AxisView& v, bool exclusive, bool reverse) {
  using C = ew::ComputeT<T>;
  const int64_t step = reverse ? -v.inner : v.inner;
  for (int64_t o = 0; o < v.outer; ++o) {
    const int64_t first = o * v.n * v.inner + (reverse ? (v.n - 1) * v.inner : 0);
    for (int64_t i = 0; i < v.inner; ++i) {
      C sum = 0;
      int64_t at = first + i;
      for (int64_t r = 0; r < v.n; ++r, at += step) {
        const C xv = ew::Load(x[at]);
        if (exclusive) {
          ew::Store(y[at], sum);
          sum = static_cast<C>(sum + xv);
        } else {
          sum = static_cast<C>(sum + xv);
          ew::Store(y[at], sum);
        }
      }
    }
  }
}

class CumSumKernel final : public OpKernel {
 public:
  CumSumKernel(bool exclusive, bool reverse) : exclusive_(exclusive), reverse_(reverse) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* axis_t = ctx.input(1);
    if (!x || !axis_t) return Diag::Msg("CumSum needs x and axis");
    if (axis_t->size() != 1) return Diag::Msg("axis must hold one value, got shape " + ShapeToString(axis_t->shape()));
    int64_t axis_value;
    if (axis_t->dtype() == DType::kInt64) axis_value = axis_t->data<int64_t>()[0];
    else if (axis_t->dtype() == DType::kInt32) axis_value = axis_t->data<int32_t>()[0];
    else return Diag::Msg(std::string("axis must be int32 or int64, got ") + DTypeName(axis_t->dtype()));
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_value, x->rank()));
    const AxisView v = ViewAround(x->shape(), axis);
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    return ew::VisitDType<kCumSumTypes>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      CumSumLoop(x->data<T>(), y->data<T>(), v, exclusive_, reverse_);
      return Status::OK();
    });
  }

 private:
  bool exclusive_, reverse_;
};

Expected<std::unique_ptr<OpKernel>> CreateCumSum(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(ew::CheckDeclaredType(node, 0, kCumSumTypes));
  return MakeKernel<CumSumKernel>(node.GetInt("exclusive", 0) != 0, node.GetInt("reverse", 0) != 0);
}

}  // namespace

void RegisterCumSumKernel(KernelRegistry& r) { r.Add("", "CumSum", CreateCumSum); }

}  // namespace nuphar::red
