// fp32 product dispatch: picks the AVX2+FMA or the baseline copy of the Eigen GEMM and of the
// packed GEMV (gemv_f32.h) per ISA tier (R7, R11); AVX-512 tiers run the AVX-512 copies of both
// (the AVX-512 GEMV is bit-identical to the AVX2 one).
#include "runtime/kernels/math/gemm_eigen.h"

#include <atomic>
#include <cstdlib>

#include "runtime/kernels/math/gemm_eigen_internal.h"
#include "runtime/kernels/math/gemv_f32_internal.h"
#include "runtime/platform/cpu_features.h"

namespace nuphar {
namespace {

struct F32Products {
  decltype(&gemm_ref::GemmF32) gemm_f32;
  decltype(&gemm_ref::GemmF64) gemm_f64;
  decltype(&gemv_ref::GemvF32PackedBlocks) gemv_f32_packed;
  decltype(&gemv_avx512::GemmF32PackedBlocks) gemm_f32_packed;  ///< null: MatMul keeps Eigen
  const char* name;
};
constexpr F32Products kRef{gemm_ref::GemmF32, gemm_ref::GemmF64, gemv_ref::GemvF32PackedBlocks, nullptr, "ref"};
constexpr F32Products kAvx2{gemm_avx2::GemmF32, gemm_avx2::GemmF64, gemv_avx2::GemvF32PackedBlocks, nullptr, "avx2"};
constexpr F32Products kAvx512{gemm_avx512::GemmF32, gemm_avx512::GemmF64, gemv_avx512::GemvF32PackedBlocks,
                              gemv_avx512::GemmF32PackedBlocks, "avx512"};
constexpr const F32Products* kByTier[kIsaTierCount] = {&kRef, &kAvx2, nullptr, &kAvx512, nullptr};

// 0 = the process tier, 1 = forced ref, 2 = forced avx2 (if the CPU has it).
std::atomic<int> g_forced_path{0};

const F32Products& Current() {
  const int forced = g_forced_path.load(std::memory_order_relaxed);
  if (forced == 1) return kRef;
  if (forced == 2 && HostCpu().Supports(IsaTier::kAvx2)) return kAvx2;
  return SelectForTier(kByTier, ActiveIsaTier());
}

}  // namespace

void GemmF32(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
             int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  Current().gemm_f32(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void GemmF64(bool trans_a, bool trans_b, int64_t M, int64_t N, int64_t K, double alpha, const double* A,
             int64_t lda, const double* B, int64_t ldb, double beta, double* C, int64_t ldc) {
  Current().gemm_f64(trans_a, trans_b, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

void GemvF32Packed(const float* a, const PackedGemvF32& b, float* y, bool accumulate) {
  const auto kernel = Current().gemv_f32_packed;
  const int64_t blocks = (b.N() + PackedGemvF32::kBlockCols - 1) / PackedGemvF32::kBlockCols;
  // Every other call sweeps the blocks backwards, starting on those still in L2 (no result
  // depends on the order: each column is the same kernel code).
  AlternatingSweep::ForEachChunk(0, blocks, b.sweep().NextIsDescending(blocks),
                                 [&](int64_t first, int64_t end) { kernel(a, b, first, end, y, accumulate); });
}

bool PackedGemmF32Available() { return Current().gemm_f32_packed != nullptr; }

void GemmF32Packed(const float* a, int64_t M, int64_t lda, const PackedGemvF32& b, int64_t first_block,
                   int64_t end_block, const float* bias, float* c, int64_t ldc) {
  const auto kernel = Current().gemm_f32_packed;
  if (kernel == nullptr) std::abort();  // invariant: callers check PackedGemmF32Available()
  kernel(a, M, lda, b, first_block, end_block, bias, c, ldc);
}

const char* GemmPathName() { return Current().name; }

void SetGemmPathForTesting(GemmPath path) {
  g_forced_path.store(path == GemmPath::kRef ? 1 : path == GemmPath::kAvx2 ? 2 : 0, std::memory_order_relaxed);
}

}  // namespace nuphar
