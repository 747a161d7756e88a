// Identity-like ops that copy or alias their input: Identity, Dropout (inference), Constant.
#include "runtime/kernels/tensor/tensor_identity.h"

#include <cstring>

namespace nuphar {
namespace {

// Identity and Dropout in inference mode: output 0 aliases input 0 (no copy). Dropout's mask
// output, when requested, is all true.
class IdentityKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    ctx.SetOutputAlias(0, *x);
    if (ctx.output_needed(1)) {
      Tensor* mask = ctx.Output(1, DType::kBool, x->shape());
      std::memset(mask->raw(), 1, mask->bytes());
    }
    return Status::OK();
  }
};

class ConstantKernel final : public OpKernel {
 public:
  explicit ConstantKernel(Tensor value) : value_(std::move(value)) {}
  Status Compute(KernelContext& ctx) const override {
    ctx.SetOutputAlias(0, value_);
    return Status::OK();
  }

 private:
  Tensor value_;
};

Expected<std::unique_ptr<OpKernel>> CreateIdentity(const NodeInfo& node) {
  if (node.op_type() == "Dropout") {
    if (node.GetInt("is_test", 1) == 0 && node.opset() < 7)
      return node.Error("Dropout in training mode (is_test=0) is not supported");
    if (node.has_input(2) && !node.constant_input(2))
      return node.Error("Dropout with a computed training_mode input is not supported");
    if (const Tensor* tm = node.constant_input(2); tm && tm->data<uint8_t>()[0] != 0)
      return node.Error("Dropout with training_mode=true is not supported");
  }
  return MakeKernel<IdentityKernel>();
}

Expected<std::unique_ptr<OpKernel>> CreateConstant(const NodeInfo& node) {
  if (node.has_attr("value")) {
    auto t = node.GetTensor("value");
    if (!t) return t.status();
    return MakeKernel<ConstantKernel>(std::move(*t));
  }
  if (node.has_attr("value_float")) return MakeKernel<ConstantKernel>(Tensor::Scalar<float>(node.GetFloat("value_float", 0)));
  if (node.has_attr("value_int")) return MakeKernel<ConstantKernel>(Tensor::Scalar<int64_t>(node.GetInt("value_int", 0)));
  if (node.has_attr("value_floats")) {
    auto v = node.GetFloats("value_floats");
    return MakeKernel<ConstantKernel>(Tensor::FromVector<float>({static_cast<int64_t>(v.size())}, v));
  }
  if (node.has_attr("value_ints")) {
    auto v = node.GetInts("value_ints");
    return MakeKernel<ConstantKernel>(Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v));
  }
  return node.Error("Constant needs one of value, value_float(s), value_int(s); string and sparse values are not supported");
}

}  // namespace

void RegisterIdentityKernels(KernelRegistry& r) {
  r.Add("", "Identity", CreateIdentity);
  r.Add("", "Dropout", CreateIdentity);
  r.Add("", "Constant", CreateConstant);
}

}  // namespace nuphar
