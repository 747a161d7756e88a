// Vector math dispatch: the only place that knows which VectorMath implementations exist (R11).
#include "runtime/kernels/vector_math.h"

#include <atomic>

#include "runtime/kernels/cpu_features.h"

namespace nuphar {
namespace {

const VectorMath* Pick(VectorMathPath path) {
  if (path == VectorMathPath::kRef || !CpuHasAvx2Fma()) return &VectorMathRef();
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
