// TensorProto payload reading and writing (graph/tensor_data.h).
#include "graph/tensor_data.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <cstring>
#include <optional>
#include <type_traits>

namespace nuphar {

size_t DTypeSize(DType t) {
  switch (t) {
    case DType::kFloat: case DType::kInt32: case DType::kUint32: return 4;
    case DType::kUint8: case DType::kInt8: case DType::kBool: return 1;
    case DType::kUint16: case DType::kInt16: case DType::kFloat16: case DType::kBfloat16: return 2;
    case DType::kInt64: case DType::kDouble: case DType::kUint64: case DType::kComplex64: return 8;
    case DType::kComplex128: return 16;
    default: return 0;
  }
}

const char* DTypeName(DType t) {
  switch (t) {
    case DType::kFloat: return "float";
    case DType::kUint8: return "uint8";
    case DType::kInt8: return "int8";
    case DType::kUint16: return "uint16";
    case DType::kInt16: return "int16";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kString: return "string";
    case DType::kBool: return "bool";
    case DType::kFloat16: return "float16";
    case DType::kDouble: return "double";
    case DType::kUint32: return "uint32";
    case DType::kUint64: return "uint64";
    case DType::kComplex64: return "complex64";
    case DType::kComplex128: return "complex128";
    case DType::kBfloat16: return "bfloat16";
    default: return "undefined";
  }
}

bool IsNumeric(DType t) { return DTypeSize(t) != 0 && t != DType::kComplex64 && t != DType::kComplex128; }

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    // Saturates instead of overflowing (hostile dims): callers compare against real sizes.
    if (__builtin_mul_overflow(n, d, &n)) return INT64_MAX;
  }
  return n;
}

bool PayloadMatchesDims(const onnx::TensorProto& t) {
  constexpr int64_t kMaxElements = int64_t{1} << 40;  // past any real tensor: a hostile file
  int64_t count = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || (d > 0 && count > kMaxElements / d)) return false;
    count *= d;
  }
  if (t.has_raw_data()) {
    const size_t bytes = DTypeSize(static_cast<DType>(t.data_type()));  // 0: strings, unknown types
    return bytes != 0 && t.raw_data().size() == static_cast<size_t>(count) * bytes;
  }
  switch (static_cast<DType>(t.data_type())) {
    case DType::kFloat: return t.float_data_size() == count;
    case DType::kComplex64: return t.float_data_size() == 2 * count;
    case DType::kDouble: return t.double_data_size() == count;
    case DType::kComplex128: return t.double_data_size() == 2 * count;
    case DType::kInt64: return t.int64_data_size() == count;
    case DType::kUint32: case DType::kUint64: return t.uint64_data_size() == count;
    case DType::kString: return t.string_data_size() == count;
    default: return t.int32_data_size() == count;  // the 8/16/32-bit integers, bool, float16, bfloat16
  }
}

namespace {

template <class Field, class Elem>
std::string PackField(const Field& field, size_t elem_size) {
  std::string out(field.size() * elem_size, '\0');
  using Stored = std::remove_cv_t<std::remove_reference_t<decltype(field.Get(0))>>;
  if constexpr (std::is_same_v<Stored, Elem>) {  // float_data of a float tensor, int64_data of int64: one copy
    if (field.size() > 0) std::memcpy(out.data(), field.data(), out.size());
    return out;
  }
  for (int i = 0; i < field.size(); ++i) {
    Elem v = static_cast<Elem>(field.Get(i));
    std::memcpy(out.data() + i * elem_size, &v, elem_size);
  }
  return out;
}

}  // namespace

Expected<std::string> TensorBytes(const onnx::TensorProto& t) {
  std::string packed;
  NUPHAR_ASSIGN_OR_RETURN(std::string_view bytes, TensorBytesView(t, &packed));
  // `packed` holds the elements only when they had to be converted; otherwise `bytes` views the
  // tensor's own payload (raw_data, or a typed field of the element's type).
  if (packed.empty()) return std::string(bytes);
  return packed;
}

Expected<std::string_view> TensorBytesView(const onnx::TensorProto& t, std::string* storage) {
  const DType dtype = static_cast<DType>(t.data_type());
  const size_t esize = DTypeSize(dtype);
  if (esize == 0)
    return Diag::Msg("tensor '" + t.name() + "' has type " + DTypeName(dtype) + ", which has no numeric payload");
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return Diag::Msg("tensor '" + t.name() + "' keeps its data in an external file that was not loaded");
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  for (int64_t d : dims)
    if (d < 0) return Diag::Msg("tensor '" + t.name() + "' has a negative dimension");
  const int64_t elements = NumElements(dims);
  size_t want = 0;
  if (elements == INT64_MAX || __builtin_mul_overflow(static_cast<size_t>(elements), esize, &want))
    return Diag::Msg("tensor '" + t.name() + "' declares more elements than can be addressed");
  std::string& out = *storage;
  if (t.has_raw_data()) {
    if (t.raw_data().size() != want)
      return Diag::Msg("tensor '" + t.name() + "' holds " + std::to_string(t.raw_data().size()) +
                       " bytes but its type and dims need " + std::to_string(want));
    return std::string_view(t.raw_data());
  } else {
    // A typed field that stores the element type itself is the payload as it is, viewed in place:
    // converting it cost a zero fill and a copy of every float_data weight at each load, before
    // the caller's own copy.
    auto in_place = [](const auto& field) {
      return std::string_view(reinterpret_cast<const char*>(field.data()),
                              static_cast<size_t>(field.size()) * sizeof(field.Get(0)));
    };
    std::optional<std::string_view> direct;
    switch (dtype) {
      case DType::kFloat: case DType::kComplex64: direct = in_place(t.float_data()); break;
      case DType::kDouble: case DType::kComplex128: direct = in_place(t.double_data()); break;
      case DType::kInt64: direct = in_place(t.int64_data()); break;
      case DType::kUint64: direct = in_place(t.uint64_data()); break;
      case DType::kInt32: direct = in_place(t.int32_data()); break;
      default: break;
    }
    if (direct) {
      if (direct->size() != want)
        return Diag::Msg("tensor '" + t.name() + "' holds " + std::to_string(direct->size()) +
                         " bytes but its type and dims need " + std::to_string(want));
      return *direct;
    }
    switch (dtype) {
      case DType::kFloat: out = PackField<decltype(t.float_data()), float>(t.float_data(), 4); break;
      case DType::kComplex64: out = PackField<decltype(t.float_data()), float>(t.float_data(), 4); break;
      case DType::kDouble: case DType::kComplex128:
        out = PackField<decltype(t.double_data()), double>(t.double_data(), 8); break;
      case DType::kInt64: out = PackField<decltype(t.int64_data()), int64_t>(t.int64_data(), 8); break;
      case DType::kUint32: out = PackField<decltype(t.uint64_data()), uint32_t>(t.uint64_data(), 4); break;
      case DType::kUint64: out = PackField<decltype(t.uint64_data()), uint64_t>(t.uint64_data(), 8); break;
      case DType::kInt32: out = PackField<decltype(t.int32_data()), int32_t>(t.int32_data(), 4); break;
      case DType::kInt16: out = PackField<decltype(t.int32_data()), int16_t>(t.int32_data(), 2); break;
      case DType::kUint16: case DType::kFloat16: case DType::kBfloat16:
        out = PackField<decltype(t.int32_data()), uint16_t>(t.int32_data(), 2); break;
      case DType::kInt8: out = PackField<decltype(t.int32_data()), int8_t>(t.int32_data(), 1); break;
      case DType::kUint8: case DType::kBool: out = PackField<decltype(t.int32_data()), uint8_t>(t.int32_data(), 1); break;
      default: break;
    }
  }
  if (out.size() != want)
    return Diag::Msg("tensor '" + t.name() + "' holds " + std::to_string(out.size()) + " bytes but its type and dims need " +
                     std::to_string(want));
  return std::string_view(out);
}

template <class T>
Expected<std::vector<T>> ReadTensor(const onnx::TensorProto& t) {
  if (static_cast<DType>(t.data_type()) != DTypeOf<T>::value)
    return Diag::Msg("tensor '" + t.name() + "' has type " + DTypeName(static_cast<DType>(t.data_type())) + ", expected " +
                     DTypeName(DTypeOf<T>::value));
  auto bytes = TensorBytes(t);
  if (!bytes) return bytes.status();
  std::vector<T> out(bytes->size() / sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), bytes->data(), bytes->size());
  return out;
}

template <class Dst>
static Status ConvertElementsTo(DType dtype, const void* data, size_t n, bool allow_float, Dst* out) {
  const char* p = static_cast<const char*>(data);
  auto load = [&](auto tag, size_t i) {
    decltype(tag) v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return v;
  };
  const bool is_float = dtype == DType::kFloat || dtype == DType::kDouble || dtype == DType::kFloat16 ||
                        dtype == DType::kBfloat16;
  if (is_float && !allow_float) return Diag::Msg(std::string("expected an integer type, got ") + DTypeName(dtype));
  for (size_t i = 0; i < n; ++i) {
    switch (dtype) {
      case DType::kInt8: out[i] = static_cast<Dst>(load(int8_t{}, i)); break;
      case DType::kUint8: out[i] = static_cast<Dst>(load(uint8_t{}, i)); break;
      case DType::kBool: out[i] = static_cast<Dst>(load(uint8_t{}, i) != 0); break;
      case DType::kInt16: out[i] = static_cast<Dst>(load(int16_t{}, i)); break;
      case DType::kUint16: out[i] = static_cast<Dst>(load(uint16_t{}, i)); break;
      case DType::kInt32: out[i] = static_cast<Dst>(load(int32_t{}, i)); break;
      case DType::kUint32: out[i] = static_cast<Dst>(load(uint32_t{}, i)); break;
      case DType::kInt64: out[i] = static_cast<Dst>(load(int64_t{}, i)); break;
      case DType::kUint64: out[i] = static_cast<Dst>(load(uint64_t{}, i)); break;
      case DType::kFloat: out[i] = static_cast<Dst>(load(float{}, i)); break;
      case DType::kDouble: out[i] = static_cast<Dst>(load(double{}, i)); break;
      case DType::kFloat16: out[i] = static_cast<Dst>(HalfToFloat(load(uint16_t{}, i))); break;
      case DType::kBfloat16: out[i] = static_cast<Dst>(Bfloat16ToFloat(load(uint16_t{}, i))); break;
      default: return Diag::Msg(std::string("type ") + DTypeName(dtype) + " is not numeric");
    }
  }
  return Status::OK();
}

Status ElementsToInt64(DType dtype, const void* data, size_t n, int64_t* out) {
  return ConvertElementsTo<int64_t>(dtype, data, n, false, out);
}

Status ElementsToDouble(DType dtype, const void* data, size_t n, double* out) {
  return ConvertElementsTo<double>(dtype, data, n, true, out);
}

template <class Dst>
static Expected<std::vector<Dst>> ConvertAll(const onnx::TensorProto& t) {
  auto bytes = TensorBytes(t);
  if (!bytes) return bytes.status();
  const DType dtype = static_cast<DType>(t.data_type());
  std::vector<Dst> out(bytes->size() / DTypeSize(dtype));
  Status s = std::is_same_v<Dst, int64_t>
                 ? ElementsToInt64(dtype, bytes->data(), out.size(), reinterpret_cast<int64_t*>(out.data()))
                 : ElementsToDouble(dtype, bytes->data(), out.size(), reinterpret_cast<double*>(out.data()));
  if (!s.ok()) return Diag::Msg("tensor '" + t.name() + "': " + s.diag().reason);
  return out;
}

Expected<std::vector<int64_t>> ReadTensorAsInt64(const onnx::TensorProto& t) { return ConvertAll<int64_t>(t); }

Expected<std::vector<double>> ReadTensorAsDouble(const onnx::TensorProto& t) { return ConvertAll<double>(t); }

onnx::TensorProto MakeTensor(const std::string& name, DType dtype, const std::vector<int64_t>& dims, const void* data,
                             size_t bytes) {
  NUPHAR_CHECK(bytes == static_cast<size_t>(NumElements(dims)) * DTypeSize(dtype), "payload size does not match dims");
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(static_cast<int32_t>(dtype));
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(static_cast<const char*>(data), bytes));
  return t;
}

template <class T>
onnx::TensorProto MakeTensor(const std::string& name, const std::vector<int64_t>& dims, const std::vector<T>& values) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(values.begin(), values.end());
    return MakeTensor(name, DType::kBool, dims, bytes.data(), bytes.size());
  } else {
    return MakeTensor(name, DTypeOf<T>::value, dims, values.data(), values.size() * sizeof(T));
  }
}

#define NUPHAR_INSTANTIATE(T)                                                         \
  template Expected<std::vector<T>> ReadTensor<T>(const onnx::TensorProto&);          \
  template onnx::TensorProto MakeTensor<T>(const std::string&, const std::vector<int64_t>&, const std::vector<T>&);
NUPHAR_INSTANTIATE(float)
NUPHAR_INSTANTIATE(double)
NUPHAR_INSTANTIATE(int8_t)
NUPHAR_INSTANTIATE(int16_t)
NUPHAR_INSTANTIATE(int32_t)
NUPHAR_INSTANTIATE(int64_t)
NUPHAR_INSTANTIATE(uint8_t)
NUPHAR_INSTANTIATE(uint16_t)
NUPHAR_INSTANTIATE(uint32_t)
NUPHAR_INSTANTIATE(uint64_t)
#undef NUPHAR_INSTANTIATE
template onnx::TensorProto MakeTensor<bool>(const std::string&, const std::vector<int64_t>&, const std::vector<bool>&);

float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: normalize
      exp = 127 - 15 + 1;
      while ((mant & 0x400u) == 0) {
        mant <<= 1;
        --exp;
      }
      mant &= 0x3ffu;
      bits = sign | (exp << 23) | (mant << 13);
    }
  } else if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t FloatToHalf(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0));
  if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (abs < 0x38800000u) {  // subnormal or zero in half
    if (abs < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t exp = abs >> 23;
    const uint32_t mant = (abs & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exp;  // 14 - (exp - 127) + 10 - 23 + 23
    uint32_t half_mant = mant >> (shift);
    const uint32_t rem = mant & ((1u << shift) - 1);
    const uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half_mant & 1u))) ++half_mant;
    return static_cast<uint16_t>(sign | half_mant);
  }
  uint32_t half = ((abs >> 13) - ((127 - 15) << 10));
  const uint32_t rem = abs & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;
  return static_cast<uint16_t>(sign | half);
}

float Bfloat16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

}  // namespace nuphar
