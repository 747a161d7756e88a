// The plain C ABI between generated code and the runtime (spec runtime.md §8.2(2)): the functions
// generated kernels call. Generated code never names them: every entry point receives the table
// RuntimeAbiTable() as an argument and calls through its slots, so an object from the kernel cache
// or an AOT library (kernel_cache.h) has no undefined symbol of the runtime's (only libm's) and
// links into any process, whatever the runtime's symbol visibility.
#pragma once

#include <cstdint>

extern "C" {
/// y[i] = sigmoid(x[i]) / tanh(x[i]) for i < n, through the reference's vector math
/// (runtime/kernels/math/vector_math.h), so generated kernels round exactly like the reference.
void nuphar_jit_sigmoid_f32(const float* x, float* y, int64_t n);
void nuphar_jit_tanh_f32(const float* x, float* y, int64_t n);
/// One Softmax row of n elements through the reference's vector softmax (the Softmax kernel's
/// float rows), so generated Softmax kernels round exactly like the reference.
void nuphar_jit_softmax_f32(const float* x, float* y, int64_t n);
/// y[i] = log(x[i]) for i < n through the reference's vector math (the Log op kernel's).
void nuphar_jit_log_f32(const float* x, float* y, int64_t n);
/// y = the product of x (FusedConv, ConvTranspose, MatMul/MatMulAddBias by a constant matrix): `call` is a
/// nuphar::ProductInvocation (core/op_kernel.h): the product kernel's ProductCall (its state holds
/// the weights packed at load) and the plan its prepare wrote for x; scratch the 64-byte-aligned
/// bytes prepare asked for. x_dims and rank (x's dims) are unused since the plan carries what run
/// needs of them; they stay in the signature because the generated code, cached objects included,
/// passes them.
void nuphar_jit_product_f32(const void* call, const float* x, const int64_t* x_dims, int64_t rank, float* y,
                            void* scratch);
}

namespace nuphar::jit {

/// Slots of the table. Appending a slot is compatible; changing one bumps kCacheVersion.
enum AbiSlot : int {
  kAbiSigmoidF32 = 0,  ///< nuphar_jit_sigmoid_f32
  kAbiTanhF32 = 1,     ///< nuphar_jit_tanh_f32
  kAbiSoftmaxF32 = 2,  ///< nuphar_jit_softmax_f32
  kAbiLogF32 = 3,      ///< nuphar_jit_log_f32
  kAbiProductF32 = 4,  ///< nuphar_jit_product_f32
  kAbiSlots
};

/// The table every generated entry point receives.
void* const* RuntimeAbiTable();

}  // namespace nuphar::jit
