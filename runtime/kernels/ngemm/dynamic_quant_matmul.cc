// Fused dynamic-quantized MatMul (R3): prologue (row stats + quantization into scratch), the
// integer product on packed weights, epilogue (dequantization in the graph's order). Built with
// -ffp-contract=off: each float op must round on its own, as in the unfused graph.
#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"

#include <cmath>
#include <cstring>

#include "runtime/kernels/ngemm/dynamic_quant_internal.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"

namespace nuphar::ngemm {

namespace {

struct ScratchLayout {
  int64_t q_row_bytes;  // bytes per quantized row, 64-byte multiple
  uint8_t* q;
  RowStats* stats;
  int32_t* q_y;
};

ScratchLayout Layout(DynQuantScheme scheme, int64_t M, int64_t K, void* scratch) {
  ScratchLayout l;
  const int elem = scheme == DynQuantScheme::kSymm16 ? 2 : 1;
  l.q_row_bytes = RoundUp(K * elem, 64);
  auto* base = static_cast<uint8_t*>(scratch);
  l.q = base;
  l.stats = reinterpret_cast<RowStats*>(base + M * l.q_row_bytes);
  l.q_y = reinterpret_cast<int32_t*>(base + M * l.q_row_bytes + RoundUp(M * static_cast<int64_t>(sizeof(RowStats)), 64));
  return l;
}

}  // namespace

RowStats QuantizeRowRef(DynQuantScheme scheme, const float* x, int64_t K, const DynQuantConstants& c, void* q_out) {
  RowStats s;
  float delta;
  if (scheme == DynQuantScheme::kAsymm8) {
    float rmax = x[0], rmin = x[0];
    for (int64_t k = 1; k < K; ++k) {
      rmax = x[k] > rmax ? x[k] : rmax;
      rmin = x[k] < rmin ? x[k] : rmin;
    }
    delta = rmax - rmin;
    s.bias = rmin;
  } else {
    delta = std::fabs(x[0]);
    for (int64_t k = 1; k < K; ++k) delta = std::fabs(x[k]) > delta ? std::fabs(x[k]) : delta;
    s.bias = 0.0f;
  }
  const float inv = InverseDelta(delta, c);
  s.scale = delta * c.inv_range;
  s.qsum = QuantizeElements(scheme, x, 0, K, s.bias, inv, c, q_out);
  return s;
}

void DequantizeRowRef(DynQuantScheme scheme, const RowStats& s, const int32_t* q_y, int64_t N,
                      const DynQuantWeights& w, const DynQuantConstants& c, const float* bias_add, float* y) {
  if (scheme == DynQuantScheme::kSymm16) {
    for (int64_t n = 0; n < N; ++n) {
      float v = (w.step[n] * s.scale) * static_cast<float>(q_y[n]);
      if (bias_add) v = v + bias_add[n];
      y[n] = v;
    }
    return;
  }
  const float scale_qsum = s.scale * static_cast<float>(s.qsum);  // once per row, as the graph
  const float bias_k = s.bias * c.k_as_float;
  for (int64_t n = 0; n < N; ++n) {
    const float o0 = (w.step[n] * s.scale) * static_cast<float>(q_y[n]);
    const float o1 = (w.step[n] * s.bias) * w.qparam_rowsum[n];
    const float o2 = w.base[n] * scale_qsum;
    const float o3 = w.base[n] * bias_k;
    float v = ((o3 + o2) + o1) + o0;
    if (bias_add) v = v + bias_add[n];
    y[n] = v;
  }
}

size_t DynQuantMatMulScratchBytes(DynQuantScheme scheme, int64_t M, int64_t K, int64_t N) {
  const int elem = scheme == DynQuantScheme::kSymm16 ? 2 : 1;
  return static_cast<size_t>(M * RoundUp(K * elem, 64) + RoundUp(M * static_cast<int64_t>(sizeof(RowStats)), 64) +
                             RoundUp(M * N * 4, 64));
}

DynQuantRowScalars QuantizeActivationRow(DynQuantScheme scheme, const float* x, int64_t K, const DynQuantConstants& c,
                                         void* q, std::optional<IsaTier> tier) {
  const RowStats s = GetDynQuantRowFns(tier).quantize(scheme, x, K, c, q);
  DynQuantRowScalars r;
  r.scale = s.scale;
  r.bias = s.bias;
  r.scale_qsum = s.scale * static_cast<float>(s.qsum);  // as DequantizeRow*: once per row
  r.bias_k = s.bias * c.k_as_float;
  return r;
}

bool DynQuantMatMul(DynQuantScheme scheme, const float* X, int64_t M, int64_t K, int64_t ldx,
                    const DynQuantWeights& w, const DynQuantConstants& c, void* scratch, float* Y,
                    int64_t ldy, const float* add, int64_t ld_add, const NgemmTiles& tiles) {
  const bool symm = scheme == DynQuantScheme::kSymm16;
  if (w.packed == nullptr || w.step == nullptr || scratch == nullptr || K <= 0 || w.packed->K() != K) return false;
  if ((w.packed->type() == WeightType::kInt16) != symm) return false;
  if (!symm && (w.base == nullptr || w.qparam_rowsum == nullptr)) return false;
  if (reinterpret_cast<uintptr_t>(scratch) % 64 != 0) return false;
  if (M <= 0) return true;
  const int64_t N = w.packed->N();
  const ScratchLayout l = Layout(scheme, M, K, scratch);
  const DynQuantRowFns& fns = GetDynQuantRowFns(tiles.tier);
  for (int64_t m = 0; m < M; ++m) l.stats[m] = fns.quantize(scheme, X + m * ldx, K, c, l.q + m * l.q_row_bytes);

  if (symm) {
    NgemmS16S16(reinterpret_cast<const int16_t*>(l.q), M, K, l.q_row_bytes / 2, *w.packed, l.q_y, N, tiles);
  } else {
    NgemmParams p;
    p.tiles = tiles;
    // Clip(0, 127) -> Cast<u8> proves the 7-bit fast path (R2 a); other bounds stay exact.
    p.a_within_7bit = c.clip_min >= 0.0f && c.clip_max <= 127.0f;
    NgemmU8S8(l.q, M, K, l.q_row_bytes, *w.packed, l.q_y, N, p);
  }
  for (int64_t m = 0; m < M; ++m) fns.dequantize(scheme, l.stats[m], l.q_y + m * N, N, w, c, add ? add + m * ld_add : nullptr, Y + m * ldy);
  return true;
}

}  // namespace nuphar::ngemm
