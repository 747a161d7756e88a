// Shared machinery of the elementwise and reduction kernel families: dtype visiting over
// compile-time type sets, float16 storage, and the unary / binary loops.
//
// # Type sets
// A kernel states which dtypes it computes with as a TypeSet bit mask, and VisitDType<Set>
// instantiates the kernel body only for those C++ types (so std::exp is never instantiated for
// bool). Visiting is a switch per Compute call, which is negligible next to one loop.
//
// # float16
// Half is the storage type of float16 elements. Arithmetic on it goes through float:
// Load(h) -> float, Store(h, float) rounds to nearest even. Ops therefore write their math once
// over the compute type `ComputeT<T>` (float for Half, T otherwise).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "graph/tensor_data.h"
#include "runtime/kernels/elementwise/broadcast.h"
#include "runtime/kernels/kernel.h"

namespace nuphar::ew {

/// float16 storage (IEEE binary16 bits).
struct Half {
  uint16_t bits;
};

template <class T>
using ComputeT = std::conditional_t<std::is_same_v<T, Half>, float, T>;

template <class T>
inline ComputeT<T> Load(T v) {
  if constexpr (std::is_same_v<T, Half>) return HalfToFloat(v.bits);
  else return v;
}
template <class T>
inline void Store(T& dst, ComputeT<T> v) {
  if constexpr (std::is_same_v<T, Half>) dst.bits = FloatToHalf(v);
  else dst = v;
}

template <class T>
inline constexpr bool kIsFloat = std::is_floating_point_v<T> || std::is_same_v<T, Half>;

/// Bit masks of dtypes (bit = DType value).
using TypeSet = uint32_t;
constexpr TypeSet Bit(DType t) {
  // A hostile file may carry any int as a dtype: those are in no set.
  return static_cast<unsigned>(t) < 32 ? 1u << static_cast<unsigned>(t) : 0u;
}
constexpr TypeSet kFloatTypes = Bit(DType::kFloat) | Bit(DType::kDouble) | Bit(DType::kFloat16);
constexpr TypeSet kSignedIntTypes = Bit(DType::kInt8) | Bit(DType::kInt16) | Bit(DType::kInt32) | Bit(DType::kInt64);
constexpr TypeSet kUnsignedIntTypes =
    Bit(DType::kUint8) | Bit(DType::kUint16) | Bit(DType::kUint32) | Bit(DType::kUint64);
constexpr TypeSet kIntTypes = kSignedIntTypes | kUnsignedIntTypes;
constexpr TypeSet kNumericTypes = kFloatTypes | kIntTypes;
constexpr TypeSet kSignedNumericTypes = kFloatTypes | kSignedIntTypes;
constexpr TypeSet kBoolType = Bit(DType::kBool);
constexpr TypeSet kAllTypes = kNumericTypes | kBoolType;

inline bool InSet(TypeSet set, DType t) { return static_cast<int>(t) < 32 && (set & Bit(t)); }

/// "float, double, int32" for error messages.
std::string TypeSetNames(TypeSet set);

/// Calls f(T{}) for the C++ type of `t` when `t` is in Set, else returns an error naming it.
template <TypeSet Set, class F>
Status VisitDType(DType t, F&& f) {
#define NUPHAR_EW_CASE(dt, T) \
  case dt:                    \
    if constexpr ((Set & Bit(dt)) != 0) return f(T{}); \
    break;
  switch (t) {
    NUPHAR_EW_CASE(DType::kFloat, float)
    NUPHAR_EW_CASE(DType::kDouble, double)
    NUPHAR_EW_CASE(DType::kFloat16, Half)
    NUPHAR_EW_CASE(DType::kInt8, int8_t)
    NUPHAR_EW_CASE(DType::kInt16, int16_t)
    NUPHAR_EW_CASE(DType::kInt32, int32_t)
    NUPHAR_EW_CASE(DType::kInt64, int64_t)
    NUPHAR_EW_CASE(DType::kUint8, uint8_t)
    NUPHAR_EW_CASE(DType::kUint16, uint16_t)
    NUPHAR_EW_CASE(DType::kUint32, uint32_t)
    NUPHAR_EW_CASE(DType::kUint64, uint64_t)
    NUPHAR_EW_CASE(DType::kBool, bool)
    default:
      break;
  }
#undef NUPHAR_EW_CASE
  return Diag::Msg(std::string("element type ") + DTypeName(t) + " is not supported (supported: " +
                   TypeSetNames(Set) + ")");
}

/// Load-time check of a declared input type (unknown types pass; Compute checks again).
inline Status CheckDeclaredType(const NodeInfo& node, size_t input, TypeSet set) {
  const DType t = node.input_type(input);
  if (t == DType::kUndefined || InSet(set, t)) return Status::OK();
  return node.Error("input " + std::to_string(input) + " has element type " + DTypeName(t) +
                    ", which is not supported (supported: " + TypeSetNames(set) + ")");
}

/// y[i] = op(x[i]) over n elements.
template <class In, class Out, class Op>
inline void UnaryLoop(const In* x, Out* y, int64_t n, const Op& op) {
  for (int64_t i = 0; i < n; ++i) Store(y[i], op(Load(x[i])));
}

/// y = op(a, b) with multidirectional broadcasting, one specialised inner loop per stride
/// pattern (both dense, a repeated, b repeated) so the common cases vectorise.
template <class In, class Out, class Op>
inline void BinaryLoop(const BroadcastPlan<2>& plan, const In* a, const In* b, Out* y, const Op& op) {
  const int64_t sa = plan.inner_stride(0), sb = plan.inner_stride(1);
  ForEachBroadcastRow(plan, [&](int64_t o, const int64_t* in, int64_t n) {
    const In* pa = a + in[0];
    const In* pb = b + in[1];
    Out* py = y + o;
    if (sa != 0 && sb != 0) {
      for (int64_t i = 0; i < n; ++i) Store(py[i], op(Load(pa[i]), Load(pb[i])));
    } else if (sa != 0) {
      const auto vb = Load(pb[0]);
      for (int64_t i = 0; i < n; ++i) Store(py[i], op(Load(pa[i]), vb));
    } else if (sb != 0) {
      const auto va = Load(pa[0]);
      for (int64_t i = 0; i < n; ++i) Store(py[i], op(va, Load(pb[i])));
    } else {
      Out v;
      Store(v, op(Load(pa[0]), Load(pb[0])));
      for (int64_t i = 0; i < n; ++i) py[i] = v;
    }
  });
}

/// y = op(x) for dtypes in Types; the output has x's dtype, or bool when kBoolOut. `Op` holds
/// the node's attributes (alpha, beta, ...) and has `ComputeT<T> operator()(ComputeT<T>) const`.
template <class Op, TypeSet Types, bool kBoolOut = false>
class UnaryKernel final : public OpKernel {
 public:
  explicit UnaryKernel(Op op) : op_(op) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    return VisitDType<Types>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      using Out = std::conditional_t<kBoolOut, bool, T>;
      Tensor* y = ctx.Output(0, kBoolOut ? DType::kBool : x->dtype(), x->shape());
      UnaryLoop(x->data<T>(), y->data<Out>(), x->size(), op_);
      return Status::OK();
    });
  }

 private:
  Op op_;
};

template <TypeSet Types, bool kBoolOut = false, class Op>
Expected<std::unique_ptr<OpKernel>> MakeUnary(const NodeInfo& node, Op op) {
  NUPHAR_RETURN_IF_ERROR(CheckDeclaredType(node, 0, Types));
  return MakeKernel<UnaryKernel<Op, Types, kBoolOut>>(op);
}

/// Registration of each file of the family (called from elementwise_register.cc).
void RegisterBinaryKernels(KernelRegistry& r);      // elementwise_binary.cc
void RegisterVariadicKernels(KernelRegistry& r);    // elementwise_variadic.cc
void RegisterUnaryKernels(KernelRegistry& r);       // elementwise_unary.cc
void RegisterActivationKernels(KernelRegistry& r);  // elementwise_activation.cc
void RegisterWhereKernel(KernelRegistry& r);        // elementwise_where.cc
void RegisterCastKernels(KernelRegistry& r);        // elementwise_cast.cc

}  // namespace nuphar::ew
