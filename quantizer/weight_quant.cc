// Per-column static weight quantization: the numeric core of the quantizer (see the header
// for the exact float32 recipe). Built with -ffp-contract=off; loops run row by row so the
// per-column vectors stay in cache and the inner loops vectorise.
#include "quantizer/weight_quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace nuphar::quant {
namespace {

/// Quantizes row by row straight into the storage type; one row of floats as scratch.
template <class Q>
void QuantizeRows(const float* w, const std::vector<float>& fscale, float range, float q_min, float q_max,
                  QuantizedWeight* qw) {
  const int64_t k = qw->k, n = qw->n;
  qw->q_bytes.resize(static_cast<size_t>(k * n) * sizeof(Q));
  Q* out = reinterpret_cast<Q*>(qw->q_bytes.data());
  const float* base = qw->base.data();
  float* rowsum = qw->rowsum.data();
  // Where fscale == 0 the column equals base (up to a denormal when (fmax - fmin) / 2 underflows),
  // so (W - base) / 1 rounds to q = 0, the original's result, without a per-element branch
  // (which would keep the loop from vectorising).
  std::vector<float> divisor(n);
  for (int64_t j = 0; j < n; ++j) divisor[j] = fscale[j] != 0.0f ? fscale[j] : 1.0f;
  std::vector<float> row_q(n);
  std::vector<int32_t> row_i(n);
  for (int64_t r = 0; r < k; ++r) {
    const float* row = w + r * n;
    for (int64_t j = 0; j < n; ++j) {
      // A true division (not a reciprocal multiply), as the original's float32 np.divide.
      const float norm = (row[j] - base[j]) / divisor[j];
      const float scaled = std::min(std::max(norm * range, q_min), q_max);
      row_q[j] = RoundHalfEvenSmall(scaled);
    }
    Q* out_row = out + r * n;
    // Two simple loops (float -> int32, int32 -> Q) vectorise where float -> int8 does not.
    for (int64_t j = 0; j < n; ++j) {
      rowsum[j] += row_q[j];
      row_i[j] = static_cast<int32_t>(row_q[j]);
    }
    for (int64_t j = 0; j < n; ++j) out_row[j] = static_cast<Q>(row_i[j]);
  }
}

template <class Q>
double LoadQ(const std::string& bytes, int64_t i) {
  Q v;
  std::memcpy(&v, bytes.data() + i * sizeof(Q), sizeof(Q));
  return static_cast<double>(v);
}

}  // namespace

Expected<QuantizedWeight> QuantizeWeightPerColumn(const float* w, int64_t k, int64_t n,
                                                  const QuantizeConfig& cfg, bool symmetric) {
  NUPHAR_CHECK(k > 0 && n > 0, "weight must not be empty");
  // Exponent bits all ones = Inf or NaN; an OR-reduction over the bits vectorises, isfinite does not.
  uint32_t non_finite = 0;
  for (int64_t i = 0; i < k * n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, w + i, sizeof(bits));
    non_finite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  if (non_finite) return Diag::Msg("the weight holds a non-finite value");
  const float range = static_cast<float>(cfg.q_range());
  const float q_min = static_cast<float>(cfg.q_min());
  const float q_max = static_cast<float>(cfg.q_max());

  QuantizedWeight qw;
  qw.k = k;
  qw.n = n;
  std::vector<float> fscale(n);
  qw.step.resize(n);
  qw.base.assign(n, 0.0f);
  if (symmetric) {
    std::vector<float> amax(w, w + n);
    for (int64_t j = 0; j < n; ++j) amax[j] = std::fabs(amax[j]);
    for (int64_t r = 1; r < k; ++r) {
      const float* row = w + r * n;
      for (int64_t j = 0; j < n; ++j) amax[j] = std::max(amax[j], std::fabs(row[j]));
    }
    for (int64_t j = 0; j < n; ++j) {
      fscale[j] = amax[j];
      qw.step[j] = fscale[j] / range;
    }
  } else {
    std::vector<float> fmin(w, w + n), fmax(w, w + n);
    for (int64_t r = 1; r < k; ++r) {
      const float* row = w + r * n;
      for (int64_t j = 0; j < n; ++j) {
        fmin[j] = std::min(fmin[j], row[j]);
        fmax[j] = std::max(fmax[j], row[j]);
      }
    }
    const float divisor = cfg.is_signed ? 2.0f : 1.0f;
    for (int64_t j = 0; j < n; ++j) {
      fscale[j] = (fmax[j] - fmin[j]) / divisor;
      qw.step[j] = fscale[j] / range;
      qw.base[j] = cfg.is_signed ? ((fmax[j] + fmin[j]) + qw.step[j]) * 0.5f : fmin[j];
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    if (!std::isfinite(fscale[j]) || !std::isfinite(qw.step[j]) || !std::isfinite(qw.base[j])) {
      return Diag::Msg("the range of weight column " + std::to_string(j) + " overflows float32");
    }
  }

  // q = clamp(round_half_even(norm * R)). Clamping before rounding gives the same result
  // (the bounds are integers and rounding is monotonic) and keeps |x| small for the magic add.
  qw.rowsum.assign(n, 0.0f);
  if (cfg.type_bits == 8) {
    cfg.is_signed ? QuantizeRows<int8_t>(w, fscale, range, q_min, q_max, &qw) : QuantizeRows<uint8_t>(w, fscale, range, q_min, q_max, &qw);
  } else {
    NUPHAR_CHECK(cfg.type_bits == 16, "config validated before quantization");
    cfg.is_signed ? QuantizeRows<int16_t>(w, fscale, range, q_min, q_max, &qw) : QuantizeRows<uint16_t>(w, fscale, range, q_min, q_max, &qw);
  }
  return qw;
}

double QuantizedValue(const QuantizedWeight& qw, const QuantizeConfig& cfg, int64_t i) {
  if (cfg.type_bits == 8) return cfg.is_signed ? LoadQ<int8_t>(qw.q_bytes, i) : LoadQ<uint8_t>(qw.q_bytes, i);
  return cfg.is_signed ? LoadQ<int16_t>(qw.q_bytes, i) : LoadQ<uint16_t>(qw.q_bytes, i);
}

WeightError MeasureWeightError(const float* w, const QuantizedWeight& qw, const QuantizeConfig& cfg) {
  WeightError e;
  double err_sq = 0, ref_sq = 0;
  for (int64_t r = 0; r < qw.k; ++r) {
    for (int64_t j = 0; j < qw.n; ++j) {
      const int64_t i = r * qw.n + j;
      const double deq = static_cast<double>(qw.base[j]) + static_cast<double>(qw.step[j]) * QuantizedValue(qw, cfg, i);
      const double d = std::fabs(static_cast<double>(w[i]) - deq);
      e.max_abs_error = std::max(e.max_abs_error, d);
      e.max_abs = std::max(e.max_abs, std::fabs(static_cast<double>(w[i])));
      err_sq += d * d;
      ref_sq += static_cast<double>(w[i]) * w[i];
    }
  }
  e.rel_l2_error = ref_sq > 0 ? std::sqrt(err_sq / ref_sq) : 0.0;
  return e;
}

}  // namespace nuphar::quant
