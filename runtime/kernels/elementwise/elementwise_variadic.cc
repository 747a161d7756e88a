// Variadic broadcasting ops: Max Min Sum Mean over one or more inputs.
//
// The output is folded left to right, y = op(op(op(x0, x1), x2), ...), in place in the output
// buffer, so Sum keeps the graph's summation order (the quantizer's dequantization relies on
// ((o3 + o2) + o1) + o0 being bit-exact) and no temporary is allocated.
#include <cstring>

#include "runtime/kernels/elementwise/elementwise_common.h"

namespace nuphar::ew {
namespace {

// NaN propagates from either side, as numpy.maximum / numpy.minimum do.
struct MaxOp {
  template <class C>
  C operator()(C a, C b) const { return (a > b || a != a) ? a : b; }  // NOLINT: a != a tests NaN
};
struct MinOp {
  template <class C>
  C operator()(C a, C b) const { return (a < b || a != a) ? a : b; }  // NOLINT
};
struct SumOp {
  template <class C>
  C operator()(C a, C b) const { return static_cast<C>(a + b); }
};

template <class Op, TypeSet Types, bool kMean>
class VariadicKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const size_t n = ctx.num_inputs();
    if (n == 0) return Diag::Msg("at least one input is required");
    InlineShape out_shape;
    const Tensor* first = ctx.input(0);
    if (!first) return Diag::Msg("input 0 is missing");
    NUPHAR_RETURN_IF_ERROR(BroadcastShape(first->shape(), std::span<const int64_t>(), out_shape));
    for (size_t k = 1; k < n; ++k) {
      const Tensor* x = ctx.input(k);
      if (!x) return Diag::Msg("input " + std::to_string(k) + " is missing");
      if (x->dtype() != first->dtype())
        return Diag::Msg(std::string("input types differ: ") + DTypeName(first->dtype()) + " and " + DTypeName(x->dtype()));
      InlineShape prev = out_shape;
      NUPHAR_RETURN_IF_ERROR(BroadcastShape(prev.span(), x->shape(), out_shape));
    }
    return VisitDType<Types>(first->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      Tensor* y = ctx.Output(0, first->dtype(), out_shape.span());
      T* py = y->data<T>();
      if (n == 1) {
        std::memcpy(py, first->data<T>(), first->bytes());
      } else {
        BroadcastPlan<2> plan;
        NUPHAR_RETURN_IF_ERROR(plan.Init({first->shape(), ctx.input(1)->shape()}, out_shape));
        BinaryLoop(plan, first->data<T>(), ctx.input(1)->data<T>(), py, Op{});
        for (size_t k = 2; k < n; ++k) {
          NUPHAR_RETURN_IF_ERROR(plan.Init({out_shape.span(), ctx.input(k)->shape()}, out_shape));
          BinaryLoop(plan, static_cast<const T*>(py), ctx.input(k)->data<T>(), py, Op{});
        }
      }
      if constexpr (kMean) {
        using C = ComputeT<T>;
        const C count = static_cast<C>(n);
        for (int64_t i = 0; i < y->size(); ++i) Store(py[i], static_cast<C>(Load(py[i]) / count));
      }
      return Status::OK();
    });
  }
};

template <class Op, TypeSet Types, bool kMean = false>
Expected<std::unique_ptr<OpKernel>> CreateVariadic(const NodeInfo& node) {
  for (size_t i = 0; i < node.num_inputs(); ++i) NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, i, Types));
  if (node.num_inputs() == 0) return node.Error("at least one input is required");
  return MakeKernel<VariadicKernel<Op, Types, kMean>>();
}

}  // namespace

void RegisterVariadicKernels(KernelRegistry& r) {
  r.Add("", "Max", CreateVariadic<MaxOp, kNumericTypes>);
  r.Add("", "Min", CreateVariadic<MinOp, kNumericTypes>);
  r.Add("", "Sum", CreateVariadic<SumOp, kNumericTypes>);
  r.Add("", "Mean", CreateVariadic<SumOp, kFloatTypes, true>);
}

}  // namespace nuphar::ew
