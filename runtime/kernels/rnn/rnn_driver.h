// LSTM, GRU and RNN share one driver (STYLE R8): it handles the direction (forward, reverse,
// bidirectional), sequence_lens, initial states, the Y/Y_h/Y_c outputs in both layouts, and the
// input projection; each op only supplies a cell through the hooks below.
//
// # How a run proceeds
// 1. X * W^T for every step and both directions in one GEMM: X viewed as [S*B, I] and W as
//    [num_directions*G*H, I] (G gates), into a workspace XW.
// 2. Per direction, per step s, per batch row b: the row is active while s < len[b]; its time
//    index is t = s (forward) or t = len[b]-1-s (reverse, so each sequence starts at its own last
//    valid step). gates[b] = XW[t, b, this direction] + the bias the cell folded (FoldBias).
// 3. The cell's Step adds the recurrence (h * R^T, its own GEMMs) and applies the equations,
//    writing h_next (and c_next). Inactive rows keep their state, so Y_h/Y_c end up holding each
//    sequence's state at its last valid step; Y is zero beyond a sequence's length.
//
// # Hooks a cell provides
//   static constexpr int kGates;             gate blocks in W/R (LSTM 4 iofc, GRU 3 zrh, RNN 1)
//   static constexpr bool kHasCellState;     LSTM only: initial_c input 6, Y_c output 2, P input 7
//   static std::vector<std::string> DefaultActivations();   per direction
//   template <class T> void FoldBias(const T* Wb, const T* Rb, int64_t H, T* out) const;
//       out[G*H] = the bias added to the x projection; Wb/Rb are null when B is absent.
//   int64_t ScratchElems(int64_t batch, int64_t H) const;
//   template <class T> void Step(const RnnDirectionWeights<T>&, const RnnStepBuffers<T>&) const;
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "runtime/kernels/math/gemv_f32.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/rnn/rnn_activation.h"

namespace nuphar {

enum class RnnDirection { kForward, kReverse, kBidirectional };

/// Attributes every RNN op shares, validated at load time.
struct RnnAttributes {
  RnnDirection direction = RnnDirection::kForward;
  int num_directions = 1;
  int64_t hidden_size = -1;  ///< -1: taken from R at run time
  int layout = 0;            ///< 0: [S, B, ...] (seq-major), 1: [B, S, ...] (batch-major, opset 14)
  float clip = 0;            ///< <= 0: no clip
  std::vector<RnnActivation> activations;  ///< num_directions x per-direction functions
  bool r_is_constant = false;  ///< R is an initializer: the driver may pack it (gemv_f32.h)
  /// A constant float W packed at load for the whole-sequence input projection (all directions as
  /// one [num_directions * gates * hidden, input] B^T) where the tier has the packed GEMM (AVX-512);
  /// else null and the projection runs Eigen. Eigen repacked W on every call: 3.6 us on Silero
  /// v3.1's 7 x 256 x 64 projection, 5% of that model's Run.
  std::shared_ptr<const PackedGemvF32> w_packed;
};

/// Parses direction, hidden_size, layout, clip and the activations; checks declared input types.
Expected<RnnAttributes> ParseRnnAttributes(const NodeInfo& node, int num_gates,
                                           const std::vector<std::string>& default_activations);

/// The per-direction constants a cell step reads.
template <class T>
struct RnnDirectionWeights {
  const T* R = nullptr;   ///< [G*H, H]
  const T* Rb = nullptr;  ///< [G*H] recurrence bias, null without B
  const T* P = nullptr;   ///< LSTM peepholes [3*H] (i, o, f), null without P
  const RnnActivation* act = nullptr;  ///< this direction's activation functions
  float clip = 0;
  const PackedGemvF32* R_packed = nullptr;  ///< the whole R packed (float, batch 1, constant R), else null
};

/// out[:G*H] (+)= h x R^T over the whole R through the packed GEMV when the driver packed R;
/// returns false when it did not (double, batch > 1, computed R), and the cell uses GemmABt.
template <class T>
bool PackedRecurrence(const RnnDirectionWeights<T>& w, int64_t batch, const T* h, T* out, bool accumulate) {
  if constexpr (std::is_same_v<T, float>) {
    if (w.R_packed != nullptr && batch == 1) {
      GemvF32Packed(h, *w.R_packed, out, accumulate);
      return true;
    }
  }
  return false;
}

/// The per-step buffers; all are [batch, ...] row-major and do not alias each other.
template <class T>
struct RnnStepBuffers {
  T* gates = nullptr;  ///< [batch, G*H]: x projection + folded bias on entry; the cell may overwrite
  const T* h_prev = nullptr;
  T* h_next = nullptr;
  const T* c_prev = nullptr;  ///< LSTM only
  T* c_next = nullptr;        ///< LSTM only
  T* scratch = nullptr;       ///< ScratchElems(batch, H) elements
  int64_t batch = 0;
  int64_t hidden = 0;
};

/// The kernel for one cell type; Compute is defined in rnn_driver_impl.h and instantiated by
/// each cell's file.
template <class Cell>
class RnnKernel final : public OpKernel {
 public:
  RnnKernel(RnnAttributes attrs, Cell cell) : attrs_(std::move(attrs)), cell_(std::move(cell)) {}
  Status Compute(KernelContext& ctx) const override;

 private:
  template <class T>
  Status Run(KernelContext& ctx) const;
  RnnAttributes attrs_;
  Cell cell_;
  // A constant float R packed per direction on the first batch-1 run (once, thread-safe), so a
  // model always run with larger batches does not store R twice.
  mutable std::once_flag pack_once_;
  mutable std::vector<PackedGemvF32> r_packed_;
};

/// Run-time sizes and inputs, checked against each other (rnn_driver.cc).
struct RnnProblem {
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, num_directions = 1;
  const Tensor *X = nullptr, *W = nullptr, *R = nullptr, *B = nullptr, *seq_lens = nullptr;
  const Tensor *initial_h = nullptr, *initial_c = nullptr, *P = nullptr;
};
Status ResolveRnnProblem(const KernelContext& ctx, const RnnAttributes& attrs, int num_gates, bool has_cell_state,
                         RnnProblem* p);

}  // namespace nuphar
