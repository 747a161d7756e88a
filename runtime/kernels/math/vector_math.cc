// Vector math dispatch: the only place that knows which VectorMath implementations exist (R7,
// R11). The table is filled per ISA tier; tiers without their own code run their fallback's
// (runtime/platform/cpu_features.h).
#include "runtime/kernels/math/vector_math.h"

#include <atomic>

#include "runtime/platform/cpu_features.h"

namespace nuphar {
namespace {

const VectorMath* Pick(VectorMathPath path) {
  if (path == VectorMathPath::kRef) return &VectorMathRef();
  if (path == VectorMathPath::kAvx2) return HostCpu().Supports(IsaTier::kAvx2) ? &VectorMathAvx2() : &VectorMathRef();
  if (path == VectorMathPath::kAvx512)
    return HostCpu().Supports(IsaTier::kAvx512) ? &VectorMathAvx512() : &VectorMathRef();
  const VectorMath* const by_tier[kIsaTierCount] = {&VectorMathRef(), &VectorMathAvx2(), nullptr, &VectorMathAvx512(),
                                                    nullptr};
  return &SelectForTier(by_tier, ActiveIsaTier());
}

std::atomic<const VectorMath*>& Current() {
  static std::atomic<const VectorMath*> current{Pick(VectorMathPath::kAuto)};
  return current;
}

}  // namespace

const VectorMath& GetVectorMath() { return *Current().load(std::memory_order_relaxed); }

void SetVectorMathPathForTesting(VectorMathPath path) { Current().store(Pick(path), std::memory_order_relaxed); }

}  // namespace nuphar
