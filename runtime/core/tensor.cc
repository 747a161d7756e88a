// Tensor storage (runtime/core/tensor.h).
#include "runtime/core/tensor.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace nuphar {

namespace {
std::atomic<uint64_t> g_buffer_allocations{0};
}  // namespace

uint64_t Buffer::AllocationCount() { return g_buffer_allocations.load(std::memory_order_relaxed); }

Buffer::Buffer(size_t bytes) {
  g_buffer_allocations.fetch_add(1, std::memory_order_relaxed);
  capacity_ = (bytes + 63) & ~size_t{63};
  if (capacity_ == 0) capacity_ = 64;  // every tensor has a valid, aligned pointer
  data_ = std::aligned_alloc(64, capacity_);
  if (!data_) throw std::bad_alloc();
}

Buffer::~Buffer() { std::free(data_); }

Tensor::Tensor(DType dtype, std::vector<int64_t> shape) : dtype_(dtype), shape_(std::move(shape)) {
  numel_ = NumElements(shape_);
  buf_ = std::make_shared<Buffer>(bytes());
}

template <class T>
Tensor Tensor::FromVector(std::vector<int64_t> shape, const std::vector<T>& values) {
  Tensor t(DTypeOf<T>::value, std::move(shape));
  NUPHAR_CHECK(static_cast<int64_t>(values.size()) == t.size(), "FromVector: value count does not match shape");
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < values.size(); ++i) t.data<bool>()[i] = values[i];
  } else if (!values.empty()) {
    std::memcpy(t.raw(), values.data(), t.bytes());
  }
  return t;
}

#define NUPHAR_INSTANTIATE(T) template Tensor Tensor::FromVector<T>(std::vector<int64_t>, const std::vector<T>&);
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
NUPHAR_INSTANTIATE(bool)
#undef NUPHAR_INSTANTIATE

void Tensor::Resize(DType dtype, std::span<const int64_t> shape) {
  dtype_ = dtype;
  shape_.assign(shape.begin(), shape.end());
  numel_ = NumElements(shape_);
  const size_t need = bytes();
  if (buf_ && buf_.use_count() == 1 && buf_->capacity() >= need) return;
  buf_ = std::make_shared<Buffer>(need);
}

Tensor Tensor::Reshaped(std::vector<int64_t> shape) const {
  NUPHAR_CHECK(NumElements(shape) == numel_, "Reshaped: element count changes");
  Tensor t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Tensor Tensor::Clone() const {
  if (!defined()) return Tensor();
  Tensor t(dtype_, shape_);
  if (bytes() > 0) std::memcpy(t.raw(), raw(), bytes());
  return t;
}

namespace {
template <class Dst>
Expected<std::vector<Dst>> ConvertElements(const Tensor& t, bool allow_float) {
  std::vector<Dst> out(static_cast<size_t>(t.size()));
  for (int64_t i = 0; i < t.size(); ++i) {
    switch (t.dtype()) {
      case DType::kInt8: out[i] = static_cast<Dst>(t.data<int8_t>()[i]); break;
      case DType::kUint8: out[i] = static_cast<Dst>(t.data<uint8_t>()[i]); break;
      case DType::kBool: out[i] = static_cast<Dst>(t.data<uint8_t>()[i] != 0); break;
      case DType::kInt16: out[i] = static_cast<Dst>(t.data<int16_t>()[i]); break;
      case DType::kUint16: out[i] = static_cast<Dst>(t.data<uint16_t>()[i]); break;
      case DType::kInt32: out[i] = static_cast<Dst>(t.data<int32_t>()[i]); break;
      case DType::kUint32: out[i] = static_cast<Dst>(t.data<uint32_t>()[i]); break;
      case DType::kInt64: out[i] = static_cast<Dst>(t.data<int64_t>()[i]); break;
      case DType::kUint64: out[i] = static_cast<Dst>(t.data<uint64_t>()[i]); break;
      case DType::kFloat:
        if (!allow_float) return Diag::Msg("expected an integer tensor, got float");
        out[i] = static_cast<Dst>(t.data<float>()[i]);
        break;
      case DType::kDouble:
        if (!allow_float) return Diag::Msg("expected an integer tensor, got double");
        out[i] = static_cast<Dst>(t.data<double>()[i]);
        break;
      case DType::kFloat16:
        if (!allow_float) return Diag::Msg("expected an integer tensor, got float16");
        out[i] = static_cast<Dst>(HalfToFloat(t.data<uint16_t>()[i]));
        break;
      default: return Diag::Msg(std::string("unsupported element type ") + DTypeName(t.dtype()));
    }
  }
  return out;
}
}  // namespace

Expected<std::vector<int64_t>> Tensor::ToInt64Vector() const { return ConvertElements<int64_t>(*this, false); }
Expected<std::vector<double>> Tensor::ToDoubleVector() const { return ConvertElements<double>(*this, true); }

std::string ShapeToString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace nuphar
