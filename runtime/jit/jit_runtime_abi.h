// The plain C ABI between generated code and the runtime (spec runtime.md §8.2(2)): functions
// the generated kernels call, registered by name in every engine (jit_engine.cc). Generated code
// declares them by these names; nothing else crosses the border.
#pragma once

#include <cstdint>
#include <vector>

extern "C" {
/// y[i] = sigmoid(x[i]) / tanh(x[i]) for i < n, through the reference's vector math
/// (runtime/kernels/math/vector_math.h), so generated kernels round exactly like the reference.
void nuphar_jit_sigmoid_f32(const float* x, float* y, int64_t n);
void nuphar_jit_tanh_f32(const float* x, float* y, int64_t n);
}

namespace nuphar::jit {

struct AbiSymbol {
  const char* name;
  void* address;
};

/// Every function above, for the engine's symbol table.
const std::vector<AbiSymbol>& RuntimeAbiSymbols();

}  // namespace nuphar::jit
