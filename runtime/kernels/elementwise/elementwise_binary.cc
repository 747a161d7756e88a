// Broadcasting binary ops: arithmetic (Add Sub Mul Div Mod Pow PRelu), comparisons
// (Equal Greater GreaterOrEqual Less LessOrEqual), logic (And Or Xor), BitShift and the
// opset-18 BitwiseAnd/Or/Xor.
//
// Opset < 7 binary ops broadcast only B onto A, with `broadcast=1` and an optional `axis`
// that aligns B's dims at A's dim `axis` instead of at the end; that becomes a reshape of B.
#include <cmath>
#include <limits>
#include <optional>
#include <type_traits>

#include "runtime/kernels/elementwise/elementwise_common.h"

namespace nuphar::ew {
namespace {

/// Marks "no opset < 7 broadcast axis": B aligns with A's trailing dims (numpy rule).
constexpr int64_t kNoLegacyAxis = std::numeric_limits<int64_t>::min();

// Integer division and modulo by zero (and INT_MIN / -1) would trap; they give 0 instead.
template <class C>
inline C SafeIntDiv(C a, C b) {
  if (b == 0) return 0;
  if constexpr (std::is_signed_v<C>) {
    using U = std::make_unsigned_t<C>;
    if (b == -1) return static_cast<C>(U{0} - static_cast<U>(a));
  }
  return static_cast<C>(a / b);
}

struct AddOp { template <class C> C operator()(C a, C b) const { return static_cast<C>(a + b); } };
struct SubOp { template <class C> C operator()(C a, C b) const { return static_cast<C>(a - b); } };
struct MulOp { template <class C> C operator()(C a, C b) const { return static_cast<C>(a * b); } };
struct DivOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) return SafeIntDiv(a, b);
    else return a / b;
  }
};
/// Mod with fmod=0: the result takes the divisor's sign (Python / numpy.mod).
struct ModFloorOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;
        C r = static_cast<C>(a % b);
        if (r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
        return r;
      } else {
        return static_cast<C>(a % b);
      }
    } else {
      C r = std::fmod(a, b);
      if (r != 0 && ((r < 0) != (b < 0))) r += b;
      return r;
    }
  }
};
/// Mod with fmod=1: the result takes the dividend's sign (C fmod).
struct ModTruncOp {
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C>) {
      if (b == 0) return 0;
      if constexpr (std::is_signed_v<C>)
        if (b == -1) return 0;
      return static_cast<C>(a % b);
    } else {
      return std::fmod(a, b);
    }
  }
};
struct PReluOp { template <class C> C operator()(C x, C slope) const { return x < 0 ? static_cast<C>(x * slope) : x; } };

struct EqualOp { template <class C> bool operator()(C a, C b) const { return a == b; } };
struct GreaterOp { template <class C> bool operator()(C a, C b) const { return a > b; } };
struct GreaterOrEqualOp { template <class C> bool operator()(C a, C b) const { return a >= b; } };
struct LessOp { template <class C> bool operator()(C a, C b) const { return a < b; } };
struct LessOrEqualOp { template <class C> bool operator()(C a, C b) const { return a <= b; } };
struct AndOp { bool operator()(bool a, bool b) const { return a && b; } };
struct OrOp { bool operator()(bool a, bool b) const { return a || b; } };
struct XorOp { bool operator()(bool a, bool b) const { return a != b; } };
struct BitwiseAndOp { template <class C> C operator()(C a, C b) const { return static_cast<C>(a & b); } };
struct BitwiseOrOp { template <class C> C operator()(C a, C b) const { return static_cast<C>(a | b); } };
struct BitwiseXorOp { template <class C> C operator()(C a, C b) const { return static_cast<C>(a ^ b); } };

/// Shifts by at least the bit width give 0 (C++ leaves them undefined).
struct BitShiftOp {
  bool left = true;
  template <class C>
  C operator()(C x, C s) const {
    if (s >= static_cast<C>(sizeof(C) * 8)) return 0;
    return left ? static_cast<C>(x << s) : static_cast<C>(x >> s);
  }
};

/// Shape of B as the op broadcasts it: B itself, or (opset < 7, axis given) B with trailing
/// 1s so that its first dim lines up with A's dim `axis`.
Status LegacyBShape(const Tensor& a, const Tensor& b, int64_t legacy_axis, InlineShape& out) {
  out.rank = b.shape().size();
  for (size_t i = 0; i < out.rank; ++i) out.dims[i] = b.shape()[i];
  if (legacy_axis == kNoLegacyAxis) return Status::OK();
  const int64_t rank_a = a.rank();
  const int64_t axis = legacy_axis < 0 ? legacy_axis + rank_a : legacy_axis;
  if (b.size() == 1 && axis + b.rank() > rank_a) return Status::OK();  // a single value fits anywhere
  if (axis < 0 || axis + b.rank() > rank_a || static_cast<size_t>(rank_a) > InlineShape::kCapacity)
    return Diag::Msg("legacy broadcast axis " + std::to_string(legacy_axis) + " does not fit A " +
                     ShapeToString(a.shape()) + " and B " + ShapeToString(b.shape()));
  while (out.rank < static_cast<size_t>(rank_a - axis)) out.dims[out.rank++] = 1;
  return Status::OK();
}

template <class Op, TypeSet Types, bool kBoolOut>
class BinaryKernel final : public OpKernel {
 public:
  BinaryKernel(Op op, int64_t legacy_axis, bool legacy_same_shape)
      : op_(op), legacy_axis_(legacy_axis), legacy_same_shape_(legacy_same_shape) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return Diag::Msg("both inputs are required");
    if (a->dtype() != b->dtype())
      return Diag::Msg(std::string("input types differ: ") + DTypeName(a->dtype()) + " and " + DTypeName(b->dtype()));
    if (legacy_same_shape_ && a->shape() != b->shape())
      return Diag::Msg("shapes " + ShapeToString(a->shape()) + " and " + ShapeToString(b->shape()) +
                       " differ and broadcast=0 (opset < 7)");
    InlineShape b_shape, out_shape;
    NUPHAR_RETURN_IF_ERROR(LegacyBShape(*a, *b, legacy_axis_, b_shape));
    NUPHAR_RETURN_IF_ERROR(BroadcastShape(a->shape(), b_shape, out_shape));
    BroadcastPlan<2> plan;
    NUPHAR_RETURN_IF_ERROR(plan.Init({a->shape(), b_shape.span()}, out_shape));
    return VisitDType<Types>(a->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      using Out = std::conditional_t<kBoolOut, bool, T>;
      Tensor* y = ctx.Output(0, kBoolOut ? DType::kBool : a->dtype(), out_shape.span());
      BinaryLoop(plan, a->data<T>(), b->data<T>(), y->data<Out>(), op_);
      return Status::OK();
    });
  }

 private:
  Op op_;
  int64_t legacy_axis_;
  bool legacy_same_shape_;
};

/// Reads the opset < 7 broadcast attributes into (axis, same-shape-required).
void LegacyBroadcastAttrs(const NodeInfo& node, int64_t& axis, bool& same_shape) {
  axis = kNoLegacyAxis;
  same_shape = false;
  if (node.opset() >= 7) return;
  if (node.GetInt("broadcast", 0) == 0) {
    same_shape = true;
  } else if (node.has_attr("axis")) {
    axis = node.GetInt("axis", 0);
  }
}

template <class Op, TypeSet Types, bool kBoolOut>
Expected<std::unique_ptr<OpKernel>> CreateBinary(const NodeInfo& node, Op op) {
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 0, Types));
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 1, Types));
  int64_t axis;
  bool same_shape;
  LegacyBroadcastAttrs(node, axis, same_shape);
  return MakeKernel<BinaryKernel<Op, Types, kBoolOut>>(op, axis, same_shape);
}

// PRelu before opset 7 has no broadcast attribute: a 1-D slope is per channel (dim 1 of X).
Expected<std::unique_ptr<OpKernel>> CreatePRelu(const NodeInfo& node) {
  constexpr TypeSet kTypes = kSignedNumericTypes | kUnsignedIntTypes;
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 0, kTypes));
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 1, kTypes));
  return MakeKernel<BinaryKernel<PReluOp, kTypes, false>>(PReluOp{}, node.opset() < 7 ? 1 : kNoLegacyAxis, false);
}

template <class Op, TypeSet Types, bool kBoolOut = false>
Expected<std::unique_ptr<OpKernel>> CreateSimple(const NodeInfo& node) {
  return CreateBinary<Op, Types, kBoolOut>(node, Op{});
}

Expected<std::unique_ptr<OpKernel>> CreateMod(const NodeInfo& node) {
  const int64_t fmod = node.GetInt("fmod", 0);
  if (fmod != 0 && fmod != 1) return node.Error("fmod must be 0 or 1, got " + std::to_string(fmod));
  if (fmod == 0 && InSet(kFloatTypes, node.input_type(0)))
    return node.Error("Mod of floating-point inputs requires fmod=1");
  if (fmod == 1) return CreateBinary<ModTruncOp, kNumericTypes, false>(node, ModTruncOp{});
  return CreateBinary<ModFloorOp, kNumericTypes, false>(node, ModFloorOp{});
}

Expected<std::unique_ptr<OpKernel>> CreateBitShift(const NodeInfo& node) {
  const std::string direction = node.GetString("direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    return node.Error("direction must be LEFT or RIGHT, got '" + direction + "'");
  return CreateBinary<BitShiftOp, kUnsignedIntTypes, false>(node, BitShiftOp{direction == "LEFT"});
}

// Pow: Y = X ^ E with Y of X's type. From opset 12 E may have another numeric type, so the
// kernel visits both types. Floats use std::pow in their own precision (as ORT does); integer
// bases compute in double and truncate.
constexpr TypeSet kPowBaseTypes = Bit(DType::kFloat) | Bit(DType::kDouble) | Bit(DType::kFloat16) |
                                  Bit(DType::kInt32) | Bit(DType::kInt64);
constexpr TypeSet kPowExponentTypes = kFloatTypes | kIntTypes;

struct PowOp {
  template <class C, class E>
  C operator()(C x, E e) const {
    if constexpr (std::is_same_v<C, float> && (std::is_same_v<E, float> || std::is_integral_v<E>)) {
      // Squaring (spectrogram magnitudes, variances) is x * x, the correctly rounded square,
      // for integer and float exponents alike; powf cost 15% of silero_vad v3.1's run.
      if (e == E(2)) return x * x;
      return std::pow(x, static_cast<float>(e));
    } else {
      return static_cast<C>(std::pow(static_cast<double>(x), static_cast<double>(e)));
    }
  }
};

class PowKernel final : public OpKernel {
 public:
  // Float x to a single exponent equal to 2 (of any exponent type): Silero squares its STFT and
  // its layer-norm deviations this way, and the element loop with PowOp's test per element ran
  // several times slower than the plain square.
  static bool IsFloatSquare(const Tensor& x, const Tensor& e) {
    if (x.dtype() != DType::kFloat || e.size() != 1) return false;
    auto v = e.dtype() == DType::kFloat ? std::optional<double>(e.data<float>()[0])
             : e.dtype() == DType::kInt64 ? std::optional<double>(static_cast<double>(e.data<int64_t>()[0]))
             : e.dtype() == DType::kInt32 ? std::optional<double>(e.data<int32_t>()[0])
                                          : std::nullopt;
    return v && *v == 2.0;
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    const Tensor* e = ctx.input(1);
    if (!x || !e) return Diag::Msg("both inputs are required");
    InlineShape out_shape;
    NUPHAR_RETURN_IF_ERROR(BroadcastShape(x->shape(), e->shape(), out_shape));
    BroadcastPlan<2> plan;
    NUPHAR_RETURN_IF_ERROR(plan.Init({x->shape(), e->shape()}, out_shape));
    Tensor* y = ctx.Output(0, x->dtype(), out_shape.span());
    if (IsFloatSquare(*x, *e) && y->size() == x->size()) {  // PowOp's x * x, as one vector loop
      const float* px = x->data<float>();
      float* py = y->data<float>();
      for (int64_t i = 0; i < y->size(); ++i) py[i] = px[i] * px[i];
      return Status::OK();
    }
    return VisitDType<kPowBaseTypes>(x->dtype(), [&](auto xtag) -> Status {
      using T = decltype(xtag);
      return VisitDType<kPowExponentTypes>(e->dtype(), [&](auto etag) -> Status {
        using E = decltype(etag);
        const T* px = x->data<T>();
        const E* pe = e->data<E>();
        T* py = y->data<T>();
        const int64_t sx = plan.inner_stride(0), se = plan.inner_stride(1);
        ForEachBroadcastRow(plan, [&](int64_t o, const int64_t* in, int64_t n) {
          for (int64_t i = 0; i < n; ++i)
            Store(py[o + i], PowOp{}(Load(px[in[0] + i * sx]), Load(pe[in[1] + i * se])));
        });
        return Status::OK();
      });
    });
  }
};

Expected<std::unique_ptr<OpKernel>> CreatePow(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 0, kPowBaseTypes));
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 1, kPowExponentTypes));
  if (node.opset() < 7 && node.GetInt("broadcast", 0) != 0 && node.has_attr("axis"))
    return node.Error("Pow with a legacy broadcast axis (opset < 7) is not supported");
  return MakeKernel<PowKernel>();
}

}  // namespace

void RegisterBinaryKernels(KernelRegistry& r) {
  r.Add("", "Add", CreateSimple<AddOp, kNumericTypes>);
  r.Add("", "Sub", CreateSimple<SubOp, kNumericTypes>);
  r.Add("", "Mul", CreateSimple<MulOp, kNumericTypes>);
  r.Add("", "Div", CreateSimple<DivOp, kNumericTypes>);
  r.Add("", "PRelu", CreatePRelu);
  r.Add("", "Mod", CreateMod);
  r.Add("", "Pow", CreatePow);
  r.Add("", "BitShift", CreateBitShift);
  r.Add("", "Equal", CreateSimple<EqualOp, kAllTypes, true>);
  r.Add("", "Greater", CreateSimple<GreaterOp, kNumericTypes, true>);
  r.Add("", "GreaterOrEqual", CreateSimple<GreaterOrEqualOp, kNumericTypes, true>);
  r.Add("", "Less", CreateSimple<LessOp, kNumericTypes, true>);
  r.Add("", "LessOrEqual", CreateSimple<LessOrEqualOp, kNumericTypes, true>);
  r.Add("", "And", CreateSimple<AndOp, kBoolType, true>);
  r.Add("", "Or", CreateSimple<OrOp, kBoolType, true>);
  r.Add("", "Xor", CreateSimple<XorOp, kBoolType, true>);
  r.Add("", "BitwiseAnd", CreateSimple<BitwiseAndOp, kIntTypes>);
  r.Add("", "BitwiseOr", CreateSimple<BitwiseOrOp, kIntTypes>);
  r.Add("", "BitwiseXor", CreateSimple<BitwiseXorOp, kIntTypes>);
}

}  // namespace nuphar::ew
