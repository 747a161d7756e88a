// The shared LSTM/GRU/RNN -> Scan driver and the hooks each op fills in (STYLE R8).
//
// The driver (rnn_to_scan_driver.cc) does, once for all three ops: attribute parsing and
// validation, constant folding of W/R/B/P, layout=1 transposes, the hoisted input projection
// X·Wᵀ + bias per direction, initial and default zero states, sequence_lens masking, one Scan
// per direction (reverse via scan directions), and the Y / Y_h / Y_c outputs.
// A cell (lstm_cell.cc, gru_cell.cc, rnn_cell.cc) only supplies the hooks below.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "editor/rnn_to_scan/scan_body_builder.h"
#include "graph/error.h"
#include "graph/pass.h"

namespace nuphar::editor {

/// The attributes of one LSTM/GRU/RNN node, validated.
struct RnnSpec {
  std::string op;
  int64_t hidden = 0;
  int num_directions = 1;
  bool reverse_only = false;  ///< direction == "reverse"
  std::vector<Activation> activations;  ///< k per direction, direction 0 first
  float clip = 0.f;                     ///< 0 = no clip
  bool input_forget = false;
  int64_t layout = 0;
  bool linear_before_reset = false;

  bool is_backward(int d) const { return num_directions == 2 ? d == 1 : reverse_only; }
  const Activation& act(int d, int k, int per_direction) const { return activations[d * per_direction + k]; }
};

/// Weights of one direction as stored by ONNX (row-major, gates stacked on rows).
struct DirectionWeights {
  int64_t input_size = 0;
  const float* w = nullptr;   ///< [G*H, I]
  const float* r = nullptr;   ///< [G*H, H]
  std::vector<float> wb, rb;  ///< [G*H] each, zeros when B is absent
  std::vector<float> p;       ///< [3H] (i, o, f) or empty
};

/// A weight matrix already transposed, [rows, cols] float32 as little-endian bytes (kept as a
/// byte string so it moves into the initializer's raw_data without another copy).
struct BodyMatrix {
  int64_t rows = 0, cols = 0;
  std::string bytes;
};

/// What a cell's EmitCell receives: the body, x_t and previous states, the direction's
/// weights and the names of the body matrices its SplitWeights produced.
struct CellInputs {
  const RnnSpec& spec;
  int direction;
  const DirectionWeights& weights;
  std::string x;                        ///< projected input slice [B, G*H]
  std::vector<std::string> states;      ///< previous states, StateNames() order
  std::vector<std::string> matrices;    ///< body initializers from SplitWeights, same order
};

/// What distinguishes the three ops before any equation: data, not hooks.
struct RnnCellTraits {
  const char* op_type;  ///< "LSTM", "GRU", "RNN"
  int num_gates;
  /// Recurrent states: {"h"} or {"h", "c"}; states[0] is always the hidden state.
  std::vector<std::string> state_names;
  std::vector<std::string> default_activations;
  bool has_peephole = false;  ///< input P (index 7): LSTM only
};

class RnnCell {
 public:
  explicit RnnCell(RnnCellTraits traits) : traits_(std::move(traits)) {}
  virtual ~RnnCell() = default;
  const char* OpType() const { return traits_.op_type; }
  int NumGates() const { return traits_.num_gates; }
  const std::vector<std::string>& StateNames() const { return traits_.state_names; }
  const std::vector<std::string>& DefaultActivations() const { return traits_.default_activations; }
  bool HasPeephole() const { return traits_.has_peephole; }
  /// Recurrent matrices the body multiplies h by, from R of one direction.
  virtual std::vector<BodyMatrix> SplitWeights(const RnnSpec& spec, const DirectionWeights& dw) const = 0;
  /// Bias added to the hoisted projection X·Wᵀ, [G*H]. Default: Wb + Rb (LSTM, RNN); GRU keeps
  /// Rb of the hidden gate out under linear_before_reset.
  virtual std::vector<float> SplitBias(const RnnSpec& spec, const DirectionWeights& dw) const;
  /// Emits the cell; returns the new states in StateNames() order (new h first).
  virtual Expected<std::vector<std::string>> EmitCell(ScanBodyBuilder& body, const CellInputs& in) const = 0;

 private:
  RnnCellTraits traits_;
};

const RnnCell& LstmCell();
const RnnCell& GruCell();
const RnnCell& SimpleRnnCell();

/// Rows [row0, row0 + nrows) of the row-major matrix m (`cols` wide), transposed: [cols, nrows].
BodyMatrix TransposedRows(const float* m, int64_t cols, int64_t row0, int64_t nrows);

struct RnnToScanOptions {
  bool zero_state_as_input = false;  ///< E1: keep the original's overridable zero-state inputs
};

/// Converts one LSTM/GRU/RNN node (the driver). The replacement goes into ctx.builder().
Expected<Effect> ConvertRnnToScan(RewriteContext& ctx, const onnx::NodeProto& node, const RnnCell& cell,
                                  const RnnToScanOptions& options);

}  // namespace nuphar::editor
