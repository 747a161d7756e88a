// RNN math dispatch: the only place that knows which RnnMath implementations exist (R11).
#include "runtime/kernels/rnn_math.h"

#include <atomic>

namespace nuphar {
namespace {

bool CpuHasAvx2Fma() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

const RnnMath* Pick(RnnMathPath path) {
  static const bool has_avx2 = CpuHasAvx2Fma();
  if (path == RnnMathPath::kRef || !has_avx2) return &RnnMathRef();
  return &RnnMathAvx2();
}

std::atomic<const RnnMath*>& Current() {
  static std::atomic<const RnnMath*> current{Pick(RnnMathPath::kAuto)};
  return current;
}

}  // namespace

const RnnMath& GetRnnMath() { return *Current().load(std::memory_order_relaxed); }

void SetRnnMathPathForTesting(RnnMathPath path) { Current().store(Pick(path), std::memory_order_relaxed); }

}  // namespace nuphar
