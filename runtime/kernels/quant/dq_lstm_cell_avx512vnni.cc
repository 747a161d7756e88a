// The fused int8 LSTM step on AVX-512 VNNI (runtime/kernels/quant/dq_lstm_cell.h).
//
// Per chunk u of 32 hidden units: 8 zmm of int32 sums (gates i, o, f, c x 32 columns), built by
// vpdpbusd over the chunk's packed weights, 512 bytes per group of 4 k. The chunk's k loop is cut
// in 16 parts; after each part runs one piece of chunk u-1's gate math (below), so the FP work
// sits between weight loads in the instruction stream and overlaps the L2 stream. The last
// chunk's gate math runs after the loop. Chunks run in ascending or descending order
// (LstmCellStep::descending, alternate calls: runtime/platform/alternating_sweep.h), so a matrix
// larger than L2 starts each step on what the previous step read last.
//
// Numerics: the same op sequence per element as the unfused nodes: the dequantization in
// DequantizeRow's order (spec R3), the following Add, Sigmoid and Tanh from vector_math_lanes.inc
// (compiled with the same flags as VectorMath's AVX-512 build, which gives the AVX2 build's
// floats), then c = f*c_prev + i*g and h = o*tanh(c) as separate Mul and Add roundings.
// NoContract keeps GCC from fusing this file's own Mul/Add pairs into FMAs.
#include <immintrin.h>

#include <cstring>

#include "runtime/kernels/quant/dq_lstm_cell.h"

#pragma GCC diagnostic ignored "-Wpsabi"

namespace nuphar::quant {
namespace {

#define NUPHAR_VECTOR_MATH_WIDTH 16
#include "runtime/kernels/math/vector_math_lanes.inc"
#undef NUPHAR_VECTOR_MATH_WIDTH

inline __m512 NoContract(__m512 x) {
  asm("" : "+v"(x));
  return x;
}
inline __m512 Sigmoid(__m512 x) { return (__m512)SigmoidV((vf)x); }
inline __m512 Tanh(__m512 x) { return (__m512)TanhV((vf)x); }

constexpr int kPieces = 16;  // pieces of gate math per chunk: 8 per half (16 units)

// The gate math of one chunk, done piece by piece; `sums` are the chunk's 128 int32 sums in
// packed order (gate r's 32 columns at r * 32).
struct ChunkGates {
  const int32_t* sums = nullptr;
  int64_t unit0 = 0;
  __m512 pre[4];  // dequantized gate inputs of the current half: i, o, f, c
  __m512 i, f, o, g, c, tc;
};

inline __m512 Dequantize(const LstmCellStep& s, __m512i sums, int64_t col) {
  const __m512 step = _mm512_loadu_ps(s.step + col), base = _mm512_loadu_ps(s.base + col);
  const __m512 qy = _mm512_cvtepi32_ps(sums);
  const __m512 o0 = NoContract(_mm512_mul_ps(NoContract(_mm512_mul_ps(step, _mm512_set1_ps(s.row.scale))), qy));
  const __m512 o1 = NoContract(
      _mm512_mul_ps(NoContract(_mm512_mul_ps(step, _mm512_set1_ps(s.row.bias))), _mm512_loadu_ps(s.rowsum + col)));
  const __m512 o2 = NoContract(_mm512_mul_ps(base, _mm512_set1_ps(s.row.scale_qsum)));
  const __m512 o3 = NoContract(_mm512_mul_ps(base, _mm512_set1_ps(s.row.bias_k)));
  __m512 v = NoContract(_mm512_add_ps(NoContract(_mm512_add_ps(NoContract(_mm512_add_ps(o3, o2)), o1)), o0));
  if (s.add) v = NoContract(_mm512_add_ps(v, _mm512_loadu_ps(s.add + col)));
  return v;
}

template <int P>
inline void GatePiece(ChunkGates& e, const LstmCellStep& s) {
  constexpr int half = P / 8, piece = P % 8;
  const int64_t unit = e.unit0 + 16 * half;
  auto dequantize = [&](int r) {
    const __m512i sums = _mm512_loadu_si512(e.sums + r * kLstmChunkUnits + 16 * half);
    e.pre[r] = Dequantize(s, sums, s.gate_parts[r] * s.H + unit);
  };
  if constexpr (piece == 0) {
    dequantize(0), dequantize(1);
  } else if constexpr (piece == 1) {
    dequantize(2), dequantize(3);
  } else if constexpr (piece == 2) {
    e.i = Sigmoid(e.pre[0]);
  } else if constexpr (piece == 3) {
    e.f = Sigmoid(e.pre[2]);
  } else if constexpr (piece == 4) {
    e.g = Tanh(e.pre[3]);
  } else if constexpr (piece == 5) {
    const __m512 fc = NoContract(_mm512_mul_ps(e.f, _mm512_loadu_ps(s.c_prev + unit)));
    const __m512 ig = NoContract(_mm512_mul_ps(e.i, e.g));
    e.c = NoContract(_mm512_add_ps(fc, ig));
    _mm512_storeu_ps(s.c + unit, e.c);
    e.o = Sigmoid(e.pre[1]);
  } else if constexpr (piece == 6) {
    e.tc = Tanh(e.c);
  } else {
    _mm512_storeu_ps(s.h + unit, NoContract(_mm512_mul_ps(e.o, e.tc)));
  }
}

template <int P>
inline void AllGatePieces(ChunkGates& e, const LstmCellStep& s) {
  GatePiece<P>(e, s);
  if constexpr (P + 1 < kPieces) AllGatePieces<P + 1>(e, s);
}

struct Sums {
  __m512i v[8];
};

// Part P of a chunk's k loop (groups [groups * P / 16, groups * (P + 1) / 16)), then piece P of
// the previous chunk's gates.
template <int P>
inline void ChunkPart(const LstmCellStep& s, const uint8_t*& w, int64_t groups, Sums& acc, ChunkGates* prev) {
  const int64_t begin = groups * P / kPieces, end = groups * (P + 1) / kPieces;
  for (int64_t g = begin; g < end; ++g) {
    int32_t a4;
    std::memcpy(&a4, s.q + 4 * g, 4);
    const __m512i a = _mm512_set1_epi32(a4);
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) acc.v[j] = _mm512_dpbusd_epi32(acc.v[j], a, _mm512_load_si512(w + 64 * j));
    w += 512;
  }
  if (prev) GatePiece<P>(*prev, s);
  if constexpr (P + 1 < kPieces) ChunkPart<P + 1>(s, w, groups, acc, prev);
}

}  // namespace

void LstmCellStepAvx512Vnni(const LstmCellStep& s) {
  const int64_t groups = (s.K + 3) / 4, chunks = s.H / kLstmChunkUnits;
  alignas(64) int32_t sums[2][4 * kLstmChunkUnits];
  ChunkGates gates[2];
  for (int64_t n = 0; n < chunks; ++n) {
    const int64_t u = s.descending ? chunks - 1 - n : n;
    const uint8_t* w = s.packed + u * groups * 4 * (4 * kLstmChunkUnits);
    Sums acc;
#pragma GCC unroll 8
    for (auto& v : acc.v) v = _mm512_setzero_si512();
    ChunkPart<0>(s, w, groups, acc, n > 0 ? &gates[(n - 1) & 1] : nullptr);
    int32_t* out = sums[n & 1];
#pragma GCC unroll 8
    for (int j = 0; j < 8; ++j) _mm512_store_si512(out + 16 * j, acc.v[j]);
    gates[n & 1].sums = out;
    gates[n & 1].unit0 = u * kLstmChunkUnits;
  }
  if (chunks > 0) AllGatePieces<0>(gates[(chunks - 1) & 1], s);
}

}  // namespace nuphar::quant
