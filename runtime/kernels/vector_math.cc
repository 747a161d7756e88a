// Vector math dispatch: the only place that knows which VectorMath implementations exist (R11).
#include "runtime/kernels/vector_math.h"

#include <atomic>

namespace nuphar {
namespace {

bool CpuHasAvx2Fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

const VectorMath* Pick(VectorMathPath path) {
  static const bool has_avx2 = CpuHasAvx2Fma();
  if (path == VectorMathPath::kRef || !has_avx2) return &VectorMathRef();
  return &VectorMathAvx2();
}

std::atomic<const VectorMath*>& Current() {
  static std::atomic<const VectorMath*> current{Pick(VectorMathPath::kAuto)};
  return current;
}

}  // namespace

const VectorMath& GetVectorMath() { return *Current().load(std::memory_order_relaxed); }

void SetVectorMathPathForTesting(VectorMathPath path) { Current().store(Pick(path), std::memory_order_relaxed); }

}  // namespace nuphar
