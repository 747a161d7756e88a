// fp32 product dispatch: picks the AVX2+FMA or the baseline copy of the Eigen GEMM and of the
// packed GEMV (gemv_f32.h) once from CPUID (STYLE R11).
#include "runtime/kernels/gemm_eigen.h"

#include <atomic>

#include "runtime/kernels/cpu_features.h"
#include "runtime/kernels/gemm_eigen_internal.h"
#include "runtime/kernels/gemv_f32_internal.h"

namespace nuphar {
namespace {

// 0 = auto (CPUID), 1 = forced ref, 2 = forced avx2 (if the CPU has it).
std::atomic<int> g_forced_path{0};

bool UseAvx2() {
  const int forced = g_forced_path.load(std::memory_order_relaxed);
  if (forced == 1) return false;
  return CpuHasAvx2Fma();
}

}  // namespace

void GemmF32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
             int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (UseAvx2()) gemm_avx2::GemmF32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else gemm_ref::GemmF32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void GemmF64(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
             int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  if (UseAvx2()) gemm_avx2::GemmF64(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
  else gemm_ref::GemmF64(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void GemvF32Packed(const float* a, const PackedGemvF32& b, float* y, bool accumulate) {
  if (UseAvx2()) gemv_avx2::GemvF32Packed(a, b, y, accumulate);
  else gemv_ref::GemvF32Packed(a, b, y, accumulate);
}

const char* GemmPathName() { return UseAvx2() ? "avx2" : "ref"; }

void SetGemmPathForTesting(GemmPath path) {
  g_forced_path.store(path == GemmPath::kRef ? 1 : path == GemmPath::kAvx2 ? 2 : 0, std::memory_order_relaxed);
}

}  // namespace nuphar
