// Tensor storage (runtime/core/tensor.h).
#include "runtime/core/tensor.h"

#include "runtime/core/tensor_budget.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace nuphar {

namespace {
std::atomic<uint64_t> g_buffer_allocations{0};
thread_local size_t t_tensor_byte_limit = 0;
}  // namespace

size_t TensorByteLimit() { return t_tensor_byte_limit; }
ScopedTensorByteLimit::ScopedTensorByteLimit(size_t limit) : previous_(t_tensor_byte_limit) { t_tensor_byte_limit = limit; }
ScopedTensorByteLimit::~ScopedTensorByteLimit() { t_tensor_byte_limit = previous_; }

uint64_t Buffer::AllocationCount() { return g_buffer_allocations.load(std::memory_order_relaxed); }

Buffer::Buffer(size_t bytes) {
  if (t_tensor_byte_limit != 0 && bytes > t_tensor_byte_limit) throw TensorTooLarge(bytes, t_tensor_byte_limit);
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
  if (buf_ && buf_.use_count() == 1 && buf_->capacity() >= need) {
    // use_count() is a relaxed read; the fence orders this thread's coming writes after the last
    // reads of another owner that has just released the buffer (its decrement is a release).
    std::atomic_thread_fence(std::memory_order_acquire);
    return;
  }
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

Expected<std::vector<int64_t>> Tensor::ToInt64Vector() const {
  std::vector<int64_t> out(static_cast<size_t>(numel_));
  NUPHAR_RETURN_IF_ERROR(ElementsToInt64(dtype_, raw(), out.size(), out.data()));
  return out;
}

Expected<std::vector<double>> Tensor::ToDoubleVector() const {
  std::vector<double> out(static_cast<size_t>(numel_));
  NUPHAR_RETURN_IF_ERROR(ElementsToDouble(dtype_, raw(), out.size(), out.data()));
  return out;
}

std::string ShapeToString(std::span<const int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace nuphar
