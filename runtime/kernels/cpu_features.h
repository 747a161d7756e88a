// What the CPU can run, read once from CPUID. Only the dispatch files (gemm_dispatch.cc,
// vector_math.cc) ask; kernels never do (STYLE R11). NGEMM has its own check
// (kernels/ngemm/dispatch.cc) because it is a separate library.
#pragma once

namespace nuphar {

/// AVX2 and FMA: the ISA of every *_avx2.cc file in runtime/kernels.
inline bool CpuHasAvx2Fma() {
  static const bool has = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  }();
  return has;
}

}  // namespace nuphar
