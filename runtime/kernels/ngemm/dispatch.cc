// Dispatch (R7, R11): the only file that knows which NGEMM implementations exist. One record per
// ISA tier, filled in tier order; the tier comes from runtime/platform (CPUID once, or
// NUPHAR_CODEGEN_TARGET), or from the session (NgemmTiles::tier), or is forced by a test.
#include <atomic>

#include "runtime/kernels/ngemm/dynamic_quant_internal.h"
#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

constexpr NgemmDispatch kRefDispatch{PackBRef, KernelRef, GemvRef, 4, 1, "ref"};
constexpr NgemmDispatch kAvx2Dispatch{PackBAvx2, KernelAvx2, GemvAvx2, 4, 4, "avx2"};
constexpr NgemmDispatch kAvxVnniDispatch{PackBAvx2, KernelAvxVnni, GemvAvxVnni, 4, 6, "avxvnni"};
constexpr NgemmDispatch kAvx512Dispatch{PackBAvx2, KernelAvx512, GemvAvx512, 4, 6, "avx512"};
constexpr NgemmDispatch kAvx512VnniDispatch{PackBAvx2, KernelAvx512Vnni, GemvAvx512Vnni, 4, 8, "avx512vnni"};

// Indexed by IsaTier; every tier has its own kernels.
constexpr const NgemmDispatch* kByTier[kIsaTierCount] = {&kRefDispatch, &kAvx2Dispatch, &kAvxVnniDispatch,
                                                         &kAvx512Dispatch, &kAvx512VnniDispatch};

constexpr DynQuantRowFns kRefRowFns{QuantizeRowRef, DequantizeRowRef};
constexpr DynQuantRowFns kAvx2RowFns{QuantizeRowAvx2, DequantizeRowAvx2};
// Only the quantization row has zmm code: zmm gave no gain on the dequantization row (docs/ngemm.md).
constexpr DynQuantRowFns kAvx512RowFns{QuantizeRowAvx512, DequantizeRowAvx2};
constexpr const DynQuantRowFns* kRowFnsByTier[kIsaTierCount] = {&kRefRowFns, &kAvx2RowFns, nullptr, &kAvx512RowFns,
                                                                nullptr};

std::atomic<const NgemmDispatch*> g_forced{nullptr};

std::optional<IsaTier> TierOfPath(NgemmPath path) {
  switch (path) {
    case NgemmPath::kAuto: return std::nullopt;
    case NgemmPath::kRef: return IsaTier::kPortable;
    case NgemmPath::kAvx2: return IsaTier::kAvx2;
    case NgemmPath::kAvxVnni: return IsaTier::kAvxVnni;
    case NgemmPath::kAvx512: return IsaTier::kAvx512;
    case NgemmPath::kAvx512Vnni: return IsaTier::kAvx512Vnni;
  }
  return std::nullopt;
}

}  // namespace

const NgemmDispatch& GetNgemmDispatch(std::optional<IsaTier> session_tier) {
  const NgemmDispatch* forced = g_forced.load(std::memory_order_acquire);
  if (forced != nullptr) return *forced;
  return SelectForTier(kByTier, session_tier ? *session_tier : ActiveIsaTier());
}

const DynQuantRowFns& GetDynQuantRowFns(std::optional<IsaTier> session_tier) {
  const NgemmDispatch& d = GetNgemmDispatch(session_tier);
  for (int t = 0; t < kIsaTierCount; ++t) {
    if (kByTier[t] == &d) return SelectForTier(kRowFnsByTier, static_cast<IsaTier>(t));
  }
  return kRefRowFns;
}

bool SetNgemmPathForTesting(NgemmPath path) {
  const std::optional<IsaTier> tier = TierOfPath(path);
  if (!tier) {
    g_forced.store(nullptr, std::memory_order_release);
    return true;
  }
  if (!HostCpu().Supports(*tier)) return false;
  g_forced.store(kByTier[static_cast<int>(*tier)], std::memory_order_release);
  return true;
}

bool NgemmPathAvailable(NgemmPath path) {
  const std::optional<IsaTier> tier = TierOfPath(path);
  return !tier || HostCpu().Supports(*tier);
}

}  // namespace nuphar::ngemm
