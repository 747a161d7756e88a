// Cast and CastLike between all numeric types, bool and float16.
//
// Float -> integer: NaN and +-inf give 0 (project decision R3: the quantizer's per-row pattern
// casts NaN from delta == 0 rows, and both execution paths must agree); other values truncate
// toward zero and wrap to the target width, as numpy does on x86. Strings and bfloat16 are
// refused at load time.
#include <cmath>
#include <cstring>
#include <type_traits>

#include <onnx/onnx_pb.h>

#include "runtime/kernels/elementwise/elementwise_common.h"

namespace nuphar::ew {
namespace {

constexpr TypeSet kCastTypes = kNumericTypes | kBoolType;

template <class To, class From>
inline To ConvertValue(From v) {
  if constexpr (std::is_same_v<To, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
    if (!std::isfinite(v)) return 0;
    // In range of the 64-bit type of the same signedness: convert there, then wrap.
    if constexpr (std::is_unsigned_v<To>) {
      if (v >= 0 && v < 18446744073709551616.0) return static_cast<To>(static_cast<uint64_t>(v));
      if (v < 0 && v > -9223372036854775808.0) return static_cast<To>(static_cast<int64_t>(v));
      return 0;
    } else {
      if (v >= -9223372036854775808.0 && v < 9223372036854775808.0) return static_cast<To>(static_cast<int64_t>(v));
      return 0;
    }
  } else {
    return static_cast<To>(v);
  }
}

template <class To, class From>
void CastLoop(const From* x, To* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    // float16 goes through float on either side.
    Store(y[i], ConvertValue<ComputeT<To>>(Load(x[i])));
  }
}

Status CastTensor(const Tensor& x, DType to, Tensor& y) {
  if (x.dtype() == to) {
    std::memcpy(y.raw(), x.raw(), x.bytes());
    return Status::OK();
  }
  return VisitDType<kCastTypes>(x.dtype(), [&](auto from_tag) -> Status {
    using From = decltype(from_tag);
    return VisitDType<kCastTypes>(to, [&](auto to_tag) -> Status {
      using To = decltype(to_tag);
      CastLoop(x.data<From>(), y.data<To>(), x.size());
      return Status::OK();
    });
  });
}

class CastKernel final : public OpKernel {
 public:
  explicit CastKernel(DType to) : to_(to) {}  // kUndefined: CastLike, target type from input 1
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    DType to = to_;
    if (to == DType::kUndefined) {
      const Tensor* like = ctx.input(1);
      if (!like) return Diag::Msg("CastLike needs target_type input");
      to = like->dtype();
    }
    if (!InSet(kCastTypes, to) || !InSet(kCastTypes, x->dtype()))
      return Diag::Msg(std::string("Cast from ") + DTypeName(x->dtype()) + " to " + DTypeName(to) + " is not supported");
    Tensor* y = ctx.Output(0, to, x->shape());
    return CastTensor(*x, to, *y);
  }

 private:
  DType to_;
};

Status CheckCastType(const NodeInfo& node, DType t, const char* role) {
  if (t == DType::kUndefined || InSet(kCastTypes, t)) return Status::OK();
  return node.Error(std::string("Cast ") + role + " " + DTypeName(t) + " is not supported (strings, bfloat16 and the opset 19-21 float8 / int4 types are refused)");
}

Expected<std::unique_ptr<OpKernel>> CreateCast(const NodeInfo& node) {
  if (!node.has_attr("to")) return node.Error("attribute 'to' is required");
  DType to = static_cast<DType>(node.GetInt("to", 0));
  if (node.attr("to")->type() == onnx::AttributeProto::STRING) {  // opset 1 names the type: "FLOAT"
    onnx::TensorProto::DataType parsed;
    if (!onnx::TensorProto::DataType_Parse(node.GetString("to", ""), &parsed))
      return node.Error("attribute 'to' names no ONNX type: '" + node.GetString("to", "") + "'");
    to = static_cast<DType>(parsed);
  }
  NUPHAR_RETURN_IF_ERROR(CheckCastType(node, to, "to"));
  if (to == DType::kUndefined) return node.Error("attribute 'to' is undefined");
  NUPHAR_RETURN_IF_ERROR(CheckCastType(node, node.input_type(0), "from"));
  return MakeKernel<CastKernel>(to);
}

Expected<std::unique_ptr<OpKernel>> CreateCastLike(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckCastType(node, node.input_type(0), "from"));
  NUPHAR_RETURN_IF_ERROR(CheckCastType(node, node.input_type(1), "to"));
  return MakeKernel<CastKernel>(DType::kUndefined);
}

}  // namespace

void RegisterCastKernels(KernelRegistry& r) {
  r.Add("", "Cast", CreateCast);
  r.Add("", "CastLike", CreateCastLike);
}

}  // namespace nuphar::ew
