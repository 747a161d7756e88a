// # The memory budget of one tensor (setting nuphar_max_tensor_bytes)
//
// A hostile model that declares a 1 GiB ConstantOfShape, or an Expand to 2^40 elements, fails
// with an error naming the node instead of exhausting the machine.
//
// Why a thread-local limit and an exception: every kernel sizes its outputs through
// Tensor::Resize, which returns no Status; threading one through every kernel for a limit only
// hostile models reach would cost each kernel a check and a branch. Instead Buffer throws
// TensorTooLarge, and the executor (graph_plan.cc: each node's Compute and load-time folding)
// is the only place that catches it, turning it into a Diag for the node. The exception never
// leaves runtime/core. The executor hands the limit to the threads it runs nodes on, so nodes
// run side by side on a worker are limited too.
#pragma once

#include <cstddef>
#include <new>

namespace nuphar {

/// Default of nuphar_max_tensor_bytes: 1 GiB per tensor (the largest weight of the RNN models
/// this runtime targets is tens of MB). 0 in the setting means no limit.
inline constexpr size_t kDefaultMaxTensorBytes = size_t{1} << 30;

class TensorTooLarge : public std::bad_alloc {
 public:
  TensorTooLarge(size_t bytes, size_t limit) : bytes(bytes), limit(limit) {}
  const char* what() const noexcept override { return "tensor above nuphar_max_tensor_bytes"; }
  size_t bytes, limit;
};

/// The calling thread's limit; 0 (no limit) on a thread that runs no session code.
size_t TensorByteLimit();

/// Sets the calling thread's limit for its lifetime and restores the previous one.
class ScopedTensorByteLimit {
 public:
  explicit ScopedTensorByteLimit(size_t limit);
  ~ScopedTensorByteLimit();
  ScopedTensorByteLimit(const ScopedTensorByteLimit&) = delete;
  ScopedTensorByteLimit& operator=(const ScopedTensorByteLimit&) = delete;

 private:
  size_t previous_;
};

}  // namespace nuphar
