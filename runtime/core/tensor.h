// The runtime's tensor: dtype, shape and a shared, 64-byte-aligned buffer.
//
// Copies are shallow (they share the buffer). A kernel never writes into a buffer it did not
// obtain through KernelContext::Output, which reuses an output slot's buffer only when the
// slot is its sole owner; so sharing is safe and steady-state execution does not allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/error.h"
#include "graph/tensor_data.h"

namespace nuphar {

/// 64-byte-aligned heap block. Capacity never shrinks.
class Buffer {
 public:
  explicit Buffer(size_t bytes);
  ~Buffer();
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  void* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  /// Buffers created by this process so far: tests use it to prove that steady-state
  /// execution (a second Run, every Scan step after the first) does not allocate.
  static uint64_t AllocationCount();

 private:
  void* data_ = nullptr;
  size_t capacity_ = 0;
};

class Tensor {
 public:
  Tensor() = default;
  /// Uninitialized storage for `shape` elements of `dtype`.
  Tensor(DType dtype, std::vector<int64_t> shape);

  template <class T>
  static Tensor FromVector(std::vector<int64_t> shape, const std::vector<T>& values);
  template <class T>
  static Tensor Scalar(T value) { return FromVector<T>({}, {value}); }

  bool defined() const { return dtype_ != DType::kUndefined; }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  int64_t dim(int64_t i) const { return shape_[static_cast<size_t>(i)]; }
  int64_t size() const { return numel_; }
  size_t bytes() const { return static_cast<size_t>(numel_) * DTypeSize(dtype_); }

  void* raw() { return buf_ ? buf_->data() : nullptr; }
  const void* raw() const { return buf_ ? buf_->data() : nullptr; }
  template <class T>
  T* data() { return static_cast<T*>(raw()); }
  template <class T>
  const T* data() const { return static_cast<const T*>(raw()); }
  template <class T>
  std::span<const T> span() const { return {data<T>(), static_cast<size_t>(numel_)}; }

  /// Makes this tensor hold `dtype` x `shape`, reusing the buffer when this tensor is its only
  /// owner and it is large enough. Contents are unspecified afterwards.
  void Resize(DType dtype, std::span<const int64_t> shape);
  /// Changes the shape only (same element count); shares the buffer.
  Tensor Reshaped(std::vector<int64_t> shape) const;
  /// Deep copy.
  Tensor Clone() const;
  /// Elements as int64 (any integer or bool dtype) for shape-like inputs.
  Expected<std::vector<int64_t>> ToInt64Vector() const;
  /// Elements as double (any numeric dtype).
  Expected<std::vector<double>> ToDoubleVector() const;

  bool SharesBufferWith(const Tensor& other) const { return buf_ && buf_ == other.buf_; }

 private:
  DType dtype_ = DType::kUndefined;
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  std::shared_ptr<Buffer> buf_;
};

std::string ShapeToString(std::span<const int64_t> shape);

}  // namespace nuphar
