// The runtime side of the generated code's C ABI (jit_runtime_abi.h).
#include "runtime/jit/jit_runtime_abi.h"

#include "runtime/core/op_kernel.h"
#include "runtime/kernels/math/vector_math.h"

extern "C" {
void nuphar_jit_sigmoid_f32(const float* x, float* y, int64_t n) { nuphar::GetVectorMath().sigmoid_f32(x, y, n); }
void nuphar_jit_tanh_f32(const float* x, float* y, int64_t n) { nuphar::GetVectorMath().tanh_f32(x, y, n); }
void nuphar_jit_softmax_f32(const float* x, float* y, int64_t n) { nuphar::GetVectorMath().softmax_f32(x, y, n); }
void nuphar_jit_log_f32(const float* x, float* y, int64_t n) { nuphar::GetVectorMath().log_f32(x, y, n); }
void nuphar_jit_product_f32(const void* call, const float* x, const int64_t*, int64_t, float* y, void* scratch) {
  const auto* invocation = static_cast<const nuphar::ProductInvocation*>(call);
  invocation->call->run(invocation->call->state, invocation->plan, x, y, scratch);
}
}

namespace nuphar::jit {

void* const* RuntimeAbiTable() {
  static void* const table[kAbiSlots] = {
      reinterpret_cast<void*>(&nuphar_jit_sigmoid_f32),
      reinterpret_cast<void*>(&nuphar_jit_tanh_f32),
      reinterpret_cast<void*>(&nuphar_jit_softmax_f32),
      reinterpret_cast<void*>(&nuphar_jit_log_f32),
      reinterpret_cast<void*>(&nuphar_jit_product_f32),
  };
  return table;
}

}  // namespace nuphar::jit
