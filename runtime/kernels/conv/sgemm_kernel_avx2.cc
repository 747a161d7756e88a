// Conv GEMM micro-kernel, AVX2+FMA (this file alone gets the avx2 flags, R10): C[rows, cols] =
// A_panel x B for one packed panel of kMr = 6 output channels, 16 columns per tile (12 ymm
// accumulators), a masked tile for the last < 8 columns. See sgemm_pack.cc for the panel layout.
#include <immintrin.h>

#include "runtime/kernels/conv/sgemm_internal.h"
#include "runtime/kernels/conv/sgemm_tile.h"

namespace nuphar::conv_avx2 {
namespace {

constexpr int kMr = 6;

// 8 floats per ymm register (sgemm_tile.h).
struct Ymm {
  using Reg = __m256;
  using Mask = __m256i;
  static constexpr int kLanes = 8;
  static Reg Zero() { return _mm256_setzero_ps(); }
  static Reg Load(const float* p) { return _mm256_loadu_ps(p); }
  static Reg MaskLoad(const float* p, Mask m) { return _mm256_maskload_ps(p, m); }
  static Reg Broadcast(const float* p) { return _mm256_broadcast_ss(p); }
  static Reg Fma(Reg a, Reg b, Reg acc) { return _mm256_fmadd_ps(a, b, acc); }
  static void Store(float* p, Reg v) { _mm256_storeu_ps(p, v); }
  static void MaskStore(float* p, Mask m, Reg v) { _mm256_maskstore_ps(p, m, v); }
  static Mask NoMask() { return Mask{}; }
  static Mask TailMask(int left) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(left), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
};

}  // namespace

void SgemmPanel(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows,
                int64_t cols) {
  conv::SgemmColumns<Ymm, kMr>(a, K, b, n0, c, ldc, rows, cols);
}

}  // namespace nuphar::conv_avx2
