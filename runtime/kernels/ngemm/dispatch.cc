// Dispatch (R11): the only file that knows which implementations exist. CPUID is read once; the
// record is const; tests may force the reference path (or AVX2 where the CPU has it).
#include <atomic>

#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/kernels/ngemm/dynamic_quant_internal.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

constexpr NgemmDispatch kRefDispatch{PackBRef, KernelRef, GemvRef, 4, 1, "ref"};
constexpr NgemmDispatch kAvx2Dispatch{PackBAvx2, KernelAvx2, GemvAvx2, 4, 4, "avx2"};
constexpr NgemmDispatch kAvxVnniDispatch{PackBAvx2, KernelAvxVnni, GemvAvxVnni, 4, 6, "avxvnni"};

constexpr DynQuantRowFns kRefRowFns{QuantizeRowRef, DequantizeRowRef};
constexpr DynQuantRowFns kAvx2RowFns{QuantizeRowAvx2, DequantizeRowAvx2};

std::atomic<const NgemmDispatch*> g_forced{nullptr};

const NgemmDispatch& DetectOnce() {
  static const NgemmDispatch& chosen =
      CpuHasAvxVnni() ? kAvxVnniDispatch : (CpuHasAvx2() ? kAvx2Dispatch : kRefDispatch);
  return chosen;
}

}  // namespace

bool CpuHasAvx2() {
  // __builtin_cpu_supports also checks that the OS saves the ymm state (XCR0).
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}

bool CpuHasAvxVnni() {
  static const bool has = CpuHasAvx2() && __builtin_cpu_supports("avxvnni");
  return has;
}

const NgemmDispatch& GetNgemmDispatch() {
  const NgemmDispatch* forced = g_forced.load(std::memory_order_acquire);
  return forced != nullptr ? *forced : DetectOnce();
}

const DynQuantRowFns& GetDynQuantRowFns() {
  return &GetNgemmDispatch() == &kRefDispatch ? kRefRowFns : kAvx2RowFns;
}

bool SetNgemmPathForTesting(NgemmPath path) {
  switch (path) {
    case NgemmPath::kAuto: g_forced.store(nullptr, std::memory_order_release); return true;
    case NgemmPath::kRef: g_forced.store(&kRefDispatch, std::memory_order_release); return true;
    case NgemmPath::kAvx2:
      if (!CpuHasAvx2()) return false;
      g_forced.store(&kAvx2Dispatch, std::memory_order_release);
      return true;
    case NgemmPath::kAvxVnni:
      if (!CpuHasAvxVnni()) return false;
      g_forced.store(&kAvxVnniDispatch, std::memory_order_release);
      return true;
  }
  return false;
}

}  // namespace nuphar::ngemm
