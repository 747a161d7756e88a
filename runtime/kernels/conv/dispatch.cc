// Conv kernel dispatch: the one table of the family's implementations per ISA tier (STYLE R11).
// AVX-512 VNNI runs the AVX-512 build, AVX-VNNI the AVX2 build (SelectForTier's fallback).
#include <atomic>

#include "runtime/kernels/conv/conv.h"
#include "runtime/platform/cpu_features.h"

namespace nuphar {
namespace {

// 0 = the process tier, else a forced ConvPath.
std::atomic<int> g_forced{0};

}  // namespace

const ConvKernels& GetConvKernels() {
  static const ConvKernels* const kByTier[kIsaTierCount] = {&ConvKernelsRef(), &ConvKernelsAvx2(), nullptr,
                                                            &ConvKernelsAvx512(), nullptr};
  IsaTier tier = ActiveIsaTier();
  switch (static_cast<ConvPath>(g_forced.load(std::memory_order_relaxed))) {
    case ConvPath::kAuto:
      break;
    case ConvPath::kRef:
      tier = IsaTier::kPortable;
      break;
    case ConvPath::kAvx2:
      tier = HostCpu().Supports(IsaTier::kAvx2) ? IsaTier::kAvx2 : IsaTier::kPortable;
      break;
    case ConvPath::kAvx512:
      tier = HostCpu().Supports(IsaTier::kAvx512) ? IsaTier::kAvx512
             : HostCpu().Supports(IsaTier::kAvx2) ? IsaTier::kAvx2
                                                  : IsaTier::kPortable;
      break;
  }
  return SelectForTier(kByTier, tier);
}

void SetConvPathForTesting(ConvPath path) { g_forced.store(static_cast<int>(path), std::memory_order_relaxed); }

}  // namespace nuphar
