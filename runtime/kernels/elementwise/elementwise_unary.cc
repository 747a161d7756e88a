// Attribute-free unary ops: Abs Neg Reciprocal Sqrt Exp Log Floor Ceil Round Sign Erf, the
// trigonometric and hyperbolic functions, Sigmoid Tanh Relu Softsign Softplus, IsNaN Not, and
// the opset-18 additions Mish and BitwiseNot.
//
// Float math is std:: math in the element's own precision (float for float and float16),
// matching ONNX Runtime's CPU kernels within the conformance tolerances; float32 Sigmoid, Tanh
// and Log use the vectorized functions of vector_math.h instead (Sigmoid/Tanh abs error 3e-7, Log
// relative error 2e-7), which generated code calls too.
#include <cmath>
#include <type_traits>

#include "runtime/kernels/elementwise/elementwise_common.h"
#include "runtime/kernels/math/vector_math.h"

namespace nuphar::ew {
namespace {

#define NUPHAR_FLOAT_UNARY(Name, expr)          \
  struct Name {                                 \
    template <class C>                          \
    C operator()(C x) const { return expr; }    \
  };

NUPHAR_FLOAT_UNARY(ReciprocalOp, C(1) / x)
NUPHAR_FLOAT_UNARY(SqrtOp, std::sqrt(x))
NUPHAR_FLOAT_UNARY(ExpOp, std::exp(x))
NUPHAR_FLOAT_UNARY(LogOp, std::log(x))
NUPHAR_FLOAT_UNARY(FloorOp, std::floor(x))
NUPHAR_FLOAT_UNARY(CeilOp, std::ceil(x))
NUPHAR_FLOAT_UNARY(RoundOp, std::nearbyint(x))  // halves to even (default rounding mode)
NUPHAR_FLOAT_UNARY(ErfOp, std::erf(x))
NUPHAR_FLOAT_UNARY(SinOp, std::sin(x))
NUPHAR_FLOAT_UNARY(CosOp, std::cos(x))
NUPHAR_FLOAT_UNARY(TanOp, std::tan(x))
NUPHAR_FLOAT_UNARY(AsinOp, std::asin(x))
NUPHAR_FLOAT_UNARY(AcosOp, std::acos(x))
NUPHAR_FLOAT_UNARY(AtanOp, std::atan(x))
NUPHAR_FLOAT_UNARY(SinhOp, std::sinh(x))
NUPHAR_FLOAT_UNARY(CoshOp, std::cosh(x))
NUPHAR_FLOAT_UNARY(AsinhOp, std::asinh(x))
NUPHAR_FLOAT_UNARY(AcoshOp, std::acosh(x))
NUPHAR_FLOAT_UNARY(AtanhOp, std::atanh(x))
NUPHAR_FLOAT_UNARY(TanhOp, std::tanh(x))
NUPHAR_FLOAT_UNARY(SigmoidOp, C(1) / (C(1) + std::exp(-x)))
NUPHAR_FLOAT_UNARY(SoftsignOp, x / (C(1) + std::abs(x)))
// log(1 + e^x) without overflow for large x.
NUPHAR_FLOAT_UNARY(SoftplusOp, x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)))
// Mish-18: x * tanh(softplus(x)), through the overflow-free softplus above.
NUPHAR_FLOAT_UNARY(MishOp, x * std::tanh(SoftplusOp{}(x)))
#undef NUPHAR_FLOAT_UNARY

struct BitwiseNotOp {
  template <class C>
  C operator()(C x) const { return static_cast<C>(~x); }
};

struct AbsOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;  // |INT_MIN| wraps to INT_MIN instead of being undefined
      return x < 0 ? static_cast<C>(U{0} - static_cast<U>(x)) : x;
    } else {
      return std::abs(x);
    }
  }
};
struct NegOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_integral_v<C>) {
      using U = std::make_unsigned_t<C>;
      return static_cast<C>(U{0} - static_cast<U>(x));
    } else {
      return -x;
    }
  }
};
struct SignOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) return x > 0 ? C(1) : C(0);
    else return x > 0 ? C(1) : (x < 0 ? C(-1) : C(0));  // NaN gives 0 (ORT gives 0 too)
  }
};
struct ReluOp {
  template <class C>
  C operator()(C x) const { return x > 0 ? x : C(0); }
};
struct IsNaNOp {
  template <class C>
  bool operator()(C x) const { return std::isnan(x); }
};
struct IsInfOp {
  bool positive = true, negative = true;
  template <class C>
  bool operator()(C x) const { return std::isinf(x) && (x > 0 ? positive : negative); }
};
struct NotOp {
  bool operator()(bool x) const { return !x; }
};

template <class Op, TypeSet Types, bool kBoolOut = false>
Expected<std::unique_ptr<OpKernel>> CreatePlain(const NodeInfo& node) {
  return MakeUnary<Types, kBoolOut>(node, Op{});
}

/// Sigmoid, Tanh and Log: float32 through vector_math.h (libm's scalar tanhf/expf took ~40% of an
/// int8 LSTM step in a Scan body), float16 and double through the scalar op.
template <class Op>
class VectorMathUnaryKernel final : public OpKernel {
 public:
  using VectorFn = void (*VectorMath::*)(const float*, float*, int64_t);
  explicit VectorMathUnaryKernel(VectorFn vector_fn) : vector_fn_(vector_fn) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    if (x->dtype() == DType::kFloat) {
      (GetVectorMath().*vector_fn_)(x->data<float>(), y->data<float>(), x->size());
      return Status::OK();
    }
    return VisitDType<kFloatTypes>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      UnaryLoop(x->data<T>(), y->data<T>(), x->size(), Op{});
      return Status::OK();
    });
  }

 private:
  VectorFn vector_fn_;
};

template <class Op, typename VectorMathUnaryKernel<Op>::VectorFn kVectorFn>
Expected<std::unique_ptr<OpKernel>> CreateVectorMathUnary(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 0, kFloatTypes));
  return MakeKernel<VectorMathUnaryKernel<Op>>(kVectorFn);
}

Expected<std::unique_ptr<OpKernel>> CreateIsInf(const NodeInfo& node) {
  return MakeUnary<kFloatTypes, true>(
      node, IsInfOp{node.GetInt("detect_positive", 1) != 0, node.GetInt("detect_negative", 1) != 0});
}

}  // namespace

void RegisterUnaryKernels(KernelRegistry& r) {
  r.Add("", "Abs", CreatePlain<AbsOp, kNumericTypes>);
  r.Add("", "Neg", CreatePlain<NegOp, kSignedNumericTypes>);
  r.Add("", "Sign", CreatePlain<SignOp, kNumericTypes>);
  r.Add("", "Relu", CreatePlain<ReluOp, kSignedNumericTypes>);
  r.Add("", "Reciprocal", CreatePlain<ReciprocalOp, kFloatTypes>);
  r.Add("", "Sqrt", CreatePlain<SqrtOp, kFloatTypes>);
  r.Add("", "Exp", CreatePlain<ExpOp, kFloatTypes>);
  r.Add("", "Log", CreateVectorMathUnary<LogOp, &VectorMath::log_f32>);
  r.Add("", "Floor", CreatePlain<FloorOp, kFloatTypes>);
  r.Add("", "Ceil", CreatePlain<CeilOp, kFloatTypes>);
  r.Add("", "Round", CreatePlain<RoundOp, kFloatTypes>);
  r.Add("", "Erf", CreatePlain<ErfOp, kFloatTypes>);
  r.Add("", "Sin", CreatePlain<SinOp, kFloatTypes>);
  r.Add("", "Cos", CreatePlain<CosOp, kFloatTypes>);
  r.Add("", "Tan", CreatePlain<TanOp, kFloatTypes>);
  r.Add("", "Asin", CreatePlain<AsinOp, kFloatTypes>);
  r.Add("", "Acos", CreatePlain<AcosOp, kFloatTypes>);
  r.Add("", "Atan", CreatePlain<AtanOp, kFloatTypes>);
  r.Add("", "Sinh", CreatePlain<SinhOp, kFloatTypes>);
  r.Add("", "Cosh", CreatePlain<CoshOp, kFloatTypes>);
  r.Add("", "Asinh", CreatePlain<AsinhOp, kFloatTypes>);
  r.Add("", "Acosh", CreatePlain<AcoshOp, kFloatTypes>);
  r.Add("", "Atanh", CreatePlain<AtanhOp, kFloatTypes>);
  r.Add("", "Tanh", CreateVectorMathUnary<TanhOp, &VectorMath::tanh_f32>);
  r.Add("", "Sigmoid", CreateVectorMathUnary<SigmoidOp, &VectorMath::sigmoid_f32>);
  r.Add("", "Softsign", CreatePlain<SoftsignOp, kFloatTypes>);
  r.Add("", "Softplus", CreatePlain<SoftplusOp, kFloatTypes>);
  r.Add("", "IsNaN", CreatePlain<IsNaNOp, kFloatTypes, true>);
  r.Add("", "IsInf", CreateIsInf);
  r.Add("", "Not", CreatePlain<NotOp, kBoolType, true>);
  r.Add("", "Mish", CreatePlain<MishOp, kFloatTypes>);
  r.Add("", "BitwiseNot", CreatePlain<BitwiseNotOp, kIntTypes>);
}

}  // namespace nuphar::ew
