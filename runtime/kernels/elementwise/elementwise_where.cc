// Where(condition, X, Y): a broadcasting select. It moves elements without computing with
// them, so it is instantiated per element width, not per dtype.
#include <cstring>

#include "runtime/kernels/elementwise/elementwise_common.h"

namespace nuphar::ew {
namespace {

template <class U>
void WhereLoop(const BroadcastPlan<3>& plan, const bool* cond, const U* x, const U* y, U* out) {
  const int64_t sc = plan.inner_stride(0), sx = plan.inner_stride(1), sy = plan.inner_stride(2);
  ForEachBroadcastRow(plan, [&](int64_t o, const int64_t* in, int64_t n) {
    const bool* pc = cond + in[0];
    const U* px = x + in[1];
    const U* py = y + in[2];
    U* po = out + o;
    for (int64_t i = 0; i < n; ++i) po[i] = pc[i * sc] ? px[i * sx] : py[i * sy];
  });
}

class WhereKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* c = ctx.input(0);
    const Tensor* x = ctx.input(1);
    const Tensor* y = ctx.input(2);
    if (!c || !x || !y) return Diag::Msg("Where needs condition, X and Y");
    if (c->dtype() != DType::kBool) return Diag::Msg(std::string("condition must be bool, got ") + DTypeName(c->dtype()));
    if (x->dtype() != y->dtype())
      return Diag::Msg(std::string("X and Y types differ: ") + DTypeName(x->dtype()) + " and " + DTypeName(y->dtype()));
    const size_t width = DTypeSize(x->dtype());
    if (width == 0 || x->dtype() == DType::kString) return Diag::Msg(std::string("element type ") + DTypeName(x->dtype()) + " is not supported");
    InlineShape xy_shape, out_shape;
    NUPHAR_RETURN_IF_ERROR(BroadcastShape(x->shape(), y->shape(), xy_shape));
    NUPHAR_RETURN_IF_ERROR(BroadcastShape(c->shape(), xy_shape.span(), out_shape));
    BroadcastPlan<3> plan;
    NUPHAR_RETURN_IF_ERROR(plan.Init({c->shape(), x->shape(), y->shape()}, out_shape));
    Tensor* out = ctx.Output(0, x->dtype(), out_shape.span());
    const bool* pc = c->data<bool>();
    switch (width) {
      case 1: WhereLoop(plan, pc, x->data<uint8_t>(), y->data<uint8_t>(), out->data<uint8_t>()); break;
      case 2: WhereLoop(plan, pc, x->data<uint16_t>(), y->data<uint16_t>(), out->data<uint16_t>()); break;
      case 4: WhereLoop(plan, pc, x->data<uint32_t>(), y->data<uint32_t>(), out->data<uint32_t>()); break;
      case 8: WhereLoop(plan, pc, x->data<uint64_t>(), y->data<uint64_t>(), out->data<uint64_t>()); break;
      default: return Diag::Msg(std::string("element type ") + DTypeName(x->dtype()) + " is not supported");
    }
    return Status::OK();
  }
};

Expected<std::unique_ptr<OpKernel>> CreateWhere(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 0, kBoolType));
  for (size_t i : {size_t{1}, size_t{2}}) {
    const DType t = node.input_type(i);
    if (t == DType::kString || t == DType::kComplex64 || t == DType::kComplex128)
      return node.Error(std::string("Where of ") + DTypeName(t) + " is not supported");
  }
  return MakeKernel<WhereKernel>();
}

}  // namespace

void RegisterWhereKernel(KernelRegistry& r) { r.Add("", "Where", CreateWhere); }

}  // namespace nuphar::ew
