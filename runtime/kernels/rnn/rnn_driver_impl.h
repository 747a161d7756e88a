// The template half of the RNN driver (rnn_driver.h); included only by the cell files
// (rnn_lstm.cc, rnn_gru.cc, rnn_simple.cc), each of which instantiates RnnKernel<ItsCell>.
#pragma once

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/kernels/rnn/rnn_driver.h"
#include "runtime/kernels/rnn/rnn_math.h"

namespace nuphar {
namespace rnn_detail {

/// Carves 64-byte-aligned sub-buffers out of one block of node scratch (KernelContext::Scratch,
/// owned by the frame and reused, so steady-state runs do not allocate).
template <class T>
class Carver {
 public:
  static size_t Round(size_t n) { return (n + 15) / 16 * 16; }
  explicit Carver(T* base) : next_(base) {}
  T* Take(size_t n) {
    T* p = next_;
    next_ += Round(n);
    return p;
  }

 private:
  T* next_;
};

}  // namespace rnn_detail

template <class Cell>
Status RnnKernel<Cell>::Compute(KernelContext& ctx) const {
  const Tensor* X = ctx.input(0);
  if (X && X->dtype() == DType::kDouble) return Run<double>(ctx);
  return Run<float>(ctx);
}

template <class Cell>
template <class T>
Status RnnKernel<Cell>::Run(KernelContext& ctx) const {
  constexpr int G = Cell::kGates;
  RnnProblem p;
  NUPHAR_RETURN_IF_ERROR(ResolveRnnProblem(ctx, attrs_, G, Cell::kHasCellState, &p));
  const int64_t S = p.seq, Bt = p.batch, I = p.input, H = p.hidden, ND = p.num_directions, GH = G * H;
  const bool batch_major = attrs_.layout == 1;
  const DType dt = DTypeOf<T>::value;

  Tensor* Y = nullptr;
  Tensor* Yh = nullptr;
  Tensor* Yc = nullptr;
  if (ctx.output_needed(0)) Y = ctx.Output(0, dt, batch_major ? std::vector<int64_t>{Bt, S, ND, H} : std::vector<int64_t>{S, ND, Bt, H});
  const std::vector<int64_t> state_shape = batch_major ? std::vector<int64_t>{Bt, ND, H} : std::vector<int64_t>{ND, Bt, H};
  if (ctx.output_needed(1)) Yh = ctx.Output(1, dt, state_shape);
  if (Cell::kHasCellState && ctx.output_needed(2)) Yc = ctx.Output(2, dt, state_shape);

  // Offsets of (t, d, b) in Y, of (d, b) in initial states / Y_h / Y_c, and of X's row (t, b).
  auto y_at = [&](int64_t t, int64_t d, int64_t b) {
    return batch_major ? ((b * S + t) * ND + d) * H : ((t * ND + d) * Bt + b) * H;
  };
  auto state_at = [&](int64_t d, int64_t b) { return batch_major ? (b * ND + d) * H : (d * Bt + b) * H; };
  auto x_row = [&](int64_t t, int64_t b) { return batch_major ? b * S + t : t * Bt + b; };

  using rnn_detail::Carver;
  const size_t scratch = static_cast<size_t>(cell_.ScratchElems(Bt, H));
  const size_t state = static_cast<size_t>(Bt * H);
  const size_t total = Carver<T>::Round(size_t(S * Bt * ND * GH)) + Carver<T>::Round(size_t(GH)) +
                       Carver<T>::Round(size_t(Bt * GH)) + 4 * Carver<T>::Round(state) + Carver<T>::Round(scratch);
  Carver<T> ws(static_cast<T*>(ctx.Scratch(total * sizeof(T))));
  T* xw = ws.Take(size_t(S * Bt * ND * GH));
  T* bias = ws.Take(size_t(GH));
  T* gates = ws.Take(size_t(Bt * GH));
  T* h[2] = {ws.Take(state), ws.Take(state)};
  T* c[2] = {ws.Take(state), ws.Take(state)};
  T* cell_scratch = ws.Take(scratch);

  // Step 1: the input projection of every step and direction in one GEMM (the packed one for a
  // constant float W on a tier that has it; Eigen otherwise).
  bool projected = false;
  if constexpr (std::is_same_v<T, float>) {
    // (The tier is checked again: a test may force another GEMM path after load.)
    if (const PackedGemvF32* w = attrs_.w_packed.get();
        w && PackedGemmF32Available() && w->K() == I && w->N() == ND * GH) {
      const int64_t blocks = (ND * GH + PackedGemvF32::kBlockCols - 1) / PackedGemvF32::kBlockCols;
      GemmF32Packed(p.X->data<float>(), S * Bt, I, *w, 0, blocks, nullptr, xw, ND * GH);
      projected = true;
    }
  }
  if (!projected) GemmABt(S * Bt, ND * GH, I, p.X->data<T>(), I, p.W->data<T>(), I, xw, ND * GH, false);

  // Sequence lengths (already range-checked); without the input every sequence is full length.
  auto len_of = [&](int64_t b) -> int64_t {
    if (!p.seq_lens) return S;
    return p.seq_lens->dtype() == DType::kInt32 ? p.seq_lens->template data<int32_t>()[b]
                                                : p.seq_lens->template data<int64_t>()[b];
  };
  int64_t max_len = 0;
  bool ragged = false;
  for (int64_t b = 0; b < Bt; ++b) {
    max_len = std::max(max_len, len_of(b));
    ragged |= len_of(b) != S;
  }
  if (Y && ragged && Y->bytes() > 0) std::memset(Y->raw(), 0, Y->bytes());  // zero beyond each length

  // Batch 1 with a constant float R: the recurrence runs the packed GEMV (r_packed_ is only read
  // after call_once, which orders it after the packing thread's writes).
  const std::vector<PackedGemvF32>* packed_r = nullptr;
  if constexpr (std::is_same_v<T, float>) {
    if (attrs_.r_is_constant && Bt == 1) {
      std::call_once(pack_once_, [&] {
        for (int64_t d = 0; d < ND; ++d)
          r_packed_.push_back(PackedGemvF32::FromNK(p.R->data<float>() + d * GH * H, H, GH, H));
      });
      packed_r = &r_packed_;
    }
  }
  const size_t row_bytes = size_t(H) * sizeof(T);
  for (int64_t d = 0; d < ND; ++d) {
    const bool reverse = attrs_.direction == RnnDirection::kReverse || d == 1;
    const T* Bd = p.B ? p.B->data<T>() + d * 2 * GH : nullptr;
    cell_.FoldBias(Bd, Bd ? Bd + GH : nullptr, H, bias);
    RnnDirectionWeights<T> w;
    w.R = p.R->data<T>() + d * GH * H;
    w.Rb = Bd ? Bd + GH : nullptr;
    w.P = p.P ? p.P->data<T>() + d * 3 * H : nullptr;
    w.act = attrs_.activations.data() + d * (attrs_.activations.size() / size_t(ND));
    w.clip = attrs_.clip;
    if (packed_r) w.R_packed = &(*packed_r)[size_t(d)];  // R is constant: its shape never changes
    for (int64_t b = 0; b < Bt; ++b) {
      T* hb = h[0] + b * H;
      T* cb = c[0] + b * H;
      if (p.initial_h) std::memcpy(hb, p.initial_h->data<T>() + state_at(d, b), row_bytes);
      else std::fill(hb, hb + H, T(0));
      if (p.initial_c) std::memcpy(cb, p.initial_c->data<T>() + state_at(d, b), row_bytes);
      else std::fill(cb, cb + H, T(0));
    }
    int cur = 0;
    for (int64_t s = 0; s < max_len; ++s) {
      // Step 2: gather this step's projections (per row: its own time index).
      for (int64_t b = 0; b < Bt; ++b) {
        const int64_t len = len_of(b);
        T* g = gates + b * GH;
        if (s >= len) {
          std::memcpy(g, bias, size_t(GH) * sizeof(T));  // any finite input; the result is discarded
          continue;
        }
        const int64_t t = reverse ? len - 1 - s : s;
        const T* src = xw + x_row(t, b) * ND * GH + d * GH;
        for (int64_t j = 0; j < GH; ++j) g[j] = src[j] + bias[j];
      }
      // Step 3: the cell.
      RnnStepBuffers<T> buf;
      buf.gates = gates;
      buf.h_prev = h[cur];
      buf.h_next = h[1 - cur];
      buf.c_prev = c[cur];
      buf.c_next = c[1 - cur];
      buf.scratch = cell_scratch;
      buf.batch = Bt;
      buf.hidden = H;
      cell_.Step(w, buf);
      for (int64_t b = 0; b < Bt; ++b) {
        const int64_t len = len_of(b);
        if (s < len) {
          if (Y) std::memcpy(Y->data<T>() + y_at(reverse ? len - 1 - s : s, d, b), h[1 - cur] + b * H, row_bytes);
        } else {  // finished sequences keep their state
          std::memcpy(h[1 - cur] + b * H, h[cur] + b * H, row_bytes);
          if (Cell::kHasCellState) std::memcpy(c[1 - cur] + b * H, c[cur] + b * H, row_bytes);
        }
      }
      cur = 1 - cur;
    }
    for (int64_t b = 0; b < Bt; ++b) {
      if (Yh) std::memcpy(Yh->data<T>() + state_at(d, b), h[cur] + b * H, row_bytes);
      if (Yc) std::memcpy(Yc->data<T>() + state_at(d, b), c[cur] + b * H, row_bytes);
    }
  }
  return Status::OK();
}

}  // namespace nuphar
