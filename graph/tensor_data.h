// TensorProto payloads <-> typed arrays, for every numeric ONNX type.
//
// A TensorProto keeps its elements either in raw_data (little-endian, C order) or in one of the
// typed repeated fields (int32_data also carries int8/int16/uint8/uint16/bool/float16 values).
// These helpers hide that choice: readers accept both, writers always emit raw_data.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "graph/error.h"

namespace onnx {
class TensorProto;
}

namespace nuphar {

/// ONNX TensorProto::DataType values, spelled out so headers need not include protobuf.
enum class DType : int32_t {
  kUndefined = 0, kFloat = 1, kUint8 = 2, kInt8 = 3, kUint16 = 4, kInt16 = 5, kInt32 = 6, kInt64 = 7,
  kString = 8, kBool = 9, kFloat16 = 10, kDouble = 11, kUint32 = 12, kUint64 = 13,
  kComplex64 = 14, kComplex128 = 15, kBfloat16 = 16,
};

/// Bytes per element; 0 for types without a fixed-size numeric payload (string, undefined).
size_t DTypeSize(DType t);
/// "float", "uint8", ... as in ONNX's type strings ("tensor(float)" without the wrapper).
const char* DTypeName(DType t);
bool IsNumeric(DType t);

template <class T> struct DTypeOf;
template <> struct DTypeOf<float> { static constexpr DType value = DType::kFloat; };
template <> struct DTypeOf<double> { static constexpr DType value = DType::kDouble; };
template <> struct DTypeOf<int8_t> { static constexpr DType value = DType::kInt8; };
template <> struct DTypeOf<int16_t> { static constexpr DType value = DType::kInt16; };
template <> struct DTypeOf<int32_t> { static constexpr DType value = DType::kInt32; };
template <> struct DTypeOf<int64_t> { static constexpr DType value = DType::kInt64; };
template <> struct DTypeOf<uint8_t> { static constexpr DType value = DType::kUint8; };
template <> struct DTypeOf<uint16_t> { static constexpr DType value = DType::kUint16; };
template <> struct DTypeOf<uint32_t> { static constexpr DType value = DType::kUint32; };
template <> struct DTypeOf<uint64_t> { static constexpr DType value = DType::kUint64; };
template <> struct DTypeOf<bool> { static constexpr DType value = DType::kBool; };

/// Product of `dims`; INT64_MAX when it overflows (dims of a hostile file), never UB.
int64_t NumElements(const std::vector<int64_t>& dims);

/// The elements as little-endian bytes (DTypeSize(dtype) * NumElements bytes).
/// Fails for string tensors, external data that was not loaded, and payloads whose size does
/// not match the dims.
Expected<std::string> TensorBytes(const onnx::TensorProto& t);
/// Same, without a copy where possible: the view points into `t.raw_data()`, into the typed field
/// that stores the element type itself (float_data of a float tensor, int64_data of int64, ...),
/// or into `*storage` when the elements had to be converted (valid while both live).
Expected<std::string_view> TensorBytesView(const onnx::TensorProto& t, std::string* storage);

/// Whether t's in-memory payload (raw_data, or the typed field TensorProto's storage rules assign
/// its type: float_data for float and complex64, int32_data for the narrow integers, bool and the
/// 16-bit floats, ...) holds exactly the elements its dims say. False for negative dims, element
/// counts past 2^40, and raw_data of a type without a fixed size; external data is not judged here.
bool PayloadMatchesDims(const onnx::TensorProto& t);

/// Elements of a tensor whose data_type is exactly DTypeOf<T>.
template <class T>
Expected<std::vector<T>> ReadTensor(const onnx::TensorProto& t);
/// Elements of any integer or bool tensor, widened to int64 (shape-like inputs).
Expected<std::vector<int64_t>> ReadTensorAsInt64(const onnx::TensorProto& t);
/// Elements of any numeric tensor converted to double.
Expected<std::vector<double>> ReadTensorAsDouble(const onnx::TensorProto& t);

/// Widens `n` elements of `dtype` at `data` (integer and bool types; float types are an error).
Status ElementsToInt64(DType dtype, const void* data, size_t n, int64_t* out);
/// Converts `n` elements of any numeric `dtype` at `data` to double.
Status ElementsToDouble(DType dtype, const void* data, size_t n, double* out);

/// A tensor with raw_data holding `bytes` (must be DTypeSize(dtype) * NumElements(dims)).
onnx::TensorProto MakeTensor(const std::string& name, DType dtype, const std::vector<int64_t>& dims,
                             const void* data, size_t bytes);
template <class T>
onnx::TensorProto MakeTensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<T>& values);

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);  ///< round to nearest even, as numpy does
float Bfloat16ToFloat(uint16_t b);

}  // namespace nuphar
