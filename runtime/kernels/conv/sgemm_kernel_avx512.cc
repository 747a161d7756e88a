// Conv GEMM micro-kernel, AVX-512 (this file alone gets the avx512 flags, R10): C[rows, cols] =
// A_panel x B for one packed panel of kMr = 12 output channels, 32 columns per tile (24 zmm
// accumulators), a masked tile for the last < 16 columns, and rows across the lanes for <= 8
// columns (two panels at once for <= 6). See sgemm_pack.cc for the panel layout.
#include <immintrin.h>

#include <type_traits>
#include <utility>

#include "graph/error.h"
#include "runtime/kernels/conv/sgemm_internal.h"
#include "runtime/kernels/conv/sgemm_tile.h"

namespace nuphar::conv_avx512 {
namespace {

constexpr int kMr = 12;

// 16 floats per zmm register (sgemm_tile.h).
struct Zmm {
  using Reg = __m512;
  using Mask = __mmask16;
  static constexpr int kLanes = 16;
  static Reg Zero() { return _mm512_setzero_ps(); }
  static Reg Load(const float* p) { return _mm512_loadu_ps(p); }
  static Reg MaskLoad(const float* p, Mask m) { return _mm512_maskz_loadu_ps(m, p); }
  static Reg Broadcast(const float* p) { return _mm512_set1_ps(*p); }
  static Reg Fma(Reg a, Reg b, Reg acc) { return _mm512_fmadd_ps(a, b, acc); }
  static void Store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static void MaskStore(float* p, Mask m, Reg v) { _mm512_mask_storeu_ps(p, m, v); }
  static Mask NoMask() { return 0; }
  static Mask TailMask(int left) { return static_cast<Mask>((1u << left) - 1); }
};

// Few columns (a filter bank over a short frame: openWakeWord's melspectrogram has 5): a
// column tile would leave most lanes idle, so the panel's 12 rows go across the lanes instead
// (the [K][12] panel layout makes them one masked load per k) and each column is one broadcast.
template <int NC>
inline void FewColumns(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc,
                       int64_t rows) {
  const __mmask16 lanes = static_cast<__mmask16>((1u << kMr) - 1);
  // Two sets of accumulators over even and odd k: NC chains alone would wait on the FMA latency.
  __m512 acc0[NC], acc1[NC];
#pragma GCC unroll 8
  for (int n = 0; n < NC; ++n) acc0[n] = acc1[n] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 2 <= K; k += 2) {
    const __m512 w0 = _mm512_maskz_loadu_ps(lanes, a + k * kMr), w1 = _mm512_maskz_loadu_ps(lanes, a + (k + 1) * kMr);
    const float* b0 = b[k] + n0;
    const float* b1 = b[k + 1] + n0;
#pragma GCC unroll 8
    for (int n = 0; n < NC; ++n) {
      acc0[n] = _mm512_fmadd_ps(w0, _mm512_set1_ps(b0[n]), acc0[n]);
      acc1[n] = _mm512_fmadd_ps(w1, _mm512_set1_ps(b1[n]), acc1[n]);
    }
  }
  if (k < K) {
    const __m512 w0 = _mm512_maskz_loadu_ps(lanes, a + k * kMr);
    const float* b0 = b[k] + n0;
#pragma GCC unroll 8
    for (int n = 0; n < NC; ++n) acc0[n] = _mm512_fmadd_ps(w0, _mm512_set1_ps(b0[n]), acc0[n]);
  }
  alignas(64) float out[NC][16];
#pragma GCC unroll 8
  for (int n = 0; n < NC; ++n) _mm512_store_ps(out[n], _mm512_add_ps(acc0[n], acc1[n]));
  for (int64_t i = 0; i < rows; ++i)
    for (int n = 0; n < NC; ++n) c[i * ldc + n] = out[n][i];
}

// Two consecutive panels (24 output channels) per pass, for up to 6 columns: each broadcast of
// B feeds both panels, so a k costs two weight loads and NC broadcasts for 2 NC FMAs, where
// FewColumns spends one load and NC broadcasts on NC FMAs (its loads, not its FMAs, bound it;
// Silero's encoder convs have 1 to 4 columns). Each output accumulates exactly as in FewColumns
// (even and odd k apart, the odd last k into the even set, summed at the end): the same bits.
template <int NC>
inline void FewColumnsPair(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc,
                           int64_t rows2) {
  const __mmask16 lanes = static_cast<__mmask16>((1u << kMr) - 1);
  const float* a2 = a + K * kMr;
  __m512 p0e[NC], p0o[NC], p1e[NC], p1o[NC];
#pragma GCC unroll 8
  for (int n = 0; n < NC; ++n) p0e[n] = p0o[n] = p1e[n] = p1o[n] = _mm512_setzero_ps();
  int64_t k = 0;
  for (; k + 2 <= K; k += 2) {
    const __m512 w0 = _mm512_maskz_loadu_ps(lanes, a + k * kMr), w1 = _mm512_maskz_loadu_ps(lanes, a + (k + 1) * kMr);
    const __m512 v0 = _mm512_maskz_loadu_ps(lanes, a2 + k * kMr), v1 = _mm512_maskz_loadu_ps(lanes, a2 + (k + 1) * kMr);
    const float* b0 = b[k] + n0;
    const float* b1 = b[k + 1] + n0;
#pragma GCC unroll 8
    for (int n = 0; n < NC; ++n) {
      const __m512 x0 = _mm512_set1_ps(b0[n]), x1 = _mm512_set1_ps(b1[n]);
      p0e[n] = _mm512_fmadd_ps(w0, x0, p0e[n]);
      p0o[n] = _mm512_fmadd_ps(w1, x1, p0o[n]);
      p1e[n] = _mm512_fmadd_ps(v0, x0, p1e[n]);
      p1o[n] = _mm512_fmadd_ps(v1, x1, p1o[n]);
    }
  }
  if (k < K) {
    const __m512 w0 = _mm512_maskz_loadu_ps(lanes, a + k * kMr), v0 = _mm512_maskz_loadu_ps(lanes, a2 + k * kMr);
    const float* b0 = b[k] + n0;
#pragma GCC unroll 8
    for (int n = 0; n < NC; ++n) {
      const __m512 x0 = _mm512_set1_ps(b0[n]);
      p0e[n] = _mm512_fmadd_ps(w0, x0, p0e[n]);
      p1e[n] = _mm512_fmadd_ps(v0, x0, p1e[n]);
    }
  }
  alignas(64) float out0[NC][16], out1[NC][16];
#pragma GCC unroll 8
  for (int n = 0; n < NC; ++n) {
    _mm512_store_ps(out0[n], _mm512_add_ps(p0e[n], p0o[n]));
    _mm512_store_ps(out1[n], _mm512_add_ps(p1e[n], p1o[n]));
  }
  for (int64_t i = 0; i < kMr; ++i)
    for (int n = 0; n < NC; ++n) c[i * ldc + n] = out0[n][i];
  float* c2 = c + kMr * ldc;
  for (int64_t i = 0; i < rows2; ++i)
    for (int n = 0; n < NC; ++n) c2[i * ldc + n] = out1[n][i];
}

// Calls f(std::integral_constant<int, cols>) when 1 <= cols <= Max (the column count as a
// template argument of the few-column kernels); false otherwise.
template <int Max, class F>
bool WithColumnCount(int64_t cols, F&& f) {
  return [&]<int... I>(std::integer_sequence<int, I...>) {
    return ((cols == I + 1 ? (f(std::integral_constant<int, I + 1>{}), true) : false) || ...);
  }(std::make_integer_sequence<int, Max>{});
}

}  // namespace

void SgemmPanelPair(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows2,
                    int64_t cols) {
  const bool done = WithColumnCount<6>(cols, [&](auto nc) { FewColumnsPair<decltype(nc)::value>(a, K, b, n0, c, ldc, rows2); });
  NUPHAR_CHECK(done, "SgemmPanelPair: 1 to 6 columns");
}

void SgemmPanel(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows,
                int64_t cols) {
  if (WithColumnCount<8>(cols, [&](auto nc) { FewColumns<decltype(nc)::value>(a, K, b, n0, c, ldc, rows); })) return;
  conv::SgemmColumns<Zmm, kMr>(a, K, b, n0, c, ldc, rows, cols);
}

}  // namespace nuphar::conv_avx512
