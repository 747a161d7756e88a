// Dtype dispatch for the nn and quant kernel families: run a templated body once per call with
// the C++ type of a DType, instead of a copy per type.
//
//   return DispatchFloating(x.dtype(), [&]<class T>() { return Run<T>(x, y); });
#pragma once

#include <cstdint>
#include <string>

#include "graph/error.h"
#include "graph/tensor_data.h"

namespace nuphar {

inline Status UnsupportedDType(DType t) {
  return Diag::Msg(std::string("element type ") + DTypeName(t) + " is not supported");
}

/// float and double.
template <class F>
Status DispatchFloating(DType t, F&& f) {
  switch (t) {
    case DType::kFloat: return f.template operator()<float>();
    case DType::kDouble: return f.template operator()<double>();
    default: return UnsupportedDType(t);
  }
}

/// float, double and the 32/64-bit integer types (MatMul, Gemm, Einsum).
template <class F>
Status DispatchGemmTypes(DType t, F&& f) {
  switch (t) {
    case DType::kFloat: return f.template operator()<float>();
    case DType::kDouble: return f.template operator()<double>();
    case DType::kInt32: return f.template operator()<int32_t>();
    case DType::kInt64: return f.template operator()<int64_t>();
    case DType::kUint32: return f.template operator()<uint32_t>();
    case DType::kUint64: return f.template operator()<uint64_t>();
    default: return UnsupportedDType(t);
  }
}

/// Every numeric type except float16/bfloat16 (MaxPool, Einsum).
template <class F>
Status DispatchNumeric(DType t, F&& f) {
  switch (t) {
    case DType::kInt8: return f.template operator()<int8_t>();
    case DType::kUint8: return f.template operator()<uint8_t>();
    case DType::kInt16: return f.template operator()<int16_t>();
    case DType::kUint16: return f.template operator()<uint16_t>();
    default: return DispatchGemmTypes(t, static_cast<F&&>(f));
  }
}

/// Load-time check of a declared input type (kUndefined = unknown, accepted; run time checks).
template <class... D>
bool DeclaredTypeIsOneOf(DType declared, D... allowed) {
  return declared == DType::kUndefined || ((declared == allowed) || ...);
}

}  // namespace nuphar
