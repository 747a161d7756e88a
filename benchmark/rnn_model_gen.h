// Stacked LSTM/GRU/RNN models as the original rnn_benchmark.py generated them (spec
// editor_quantizer.md §5.1), built in C++ so the benchmark needs no Python.
//
// # Layout (the same graph as ../shared/peer/make_rnn_model.py)
//   input [seq, batch, input_dim] -> per layer i:
//     OP `<op><i>` (X, W<i>, R<i>, B<i>) -> layer_output_<i> [seq, nd, batch, H]
//     Transpose `transpose<i>` perm (0,2,1,3) -> transposed_output_<i> [seq, batch, nd, H]
//     Reshape `reshape<i>` (shape = [0, 0, -1]) -> reshaped_output_<i> [seq, batch, nd*H]
//   output: reshaped_output_<L-1>
// Every intermediate value gets its value_info (what onnx.shape_inference adds in the original),
// which to_scan needs for the X of layers >= 1.
//
// # Weights
// W, R, B drawn from numpy.random.RandomState(seed) in the order W0, R0, B0, W1, ...: uniform
// U(-1/sqrt(H), 1/sqrt(H)) by default (activations stay out of saturation, so int8 errors mean
// something), or U(0, 1) as the original's unseeded np.random.rand. Bit-identical to
// make_rnn_model.py with the same options (tests/benchmark/rnn_model_gen_test.cc).
#pragma once

#include <cstdint>
#include <string>

#include "graph/error.h"

namespace onnx {
class ModelProto;
}

namespace nuphar::bench {

struct RnnModelSpec {
  std::string op = "lstm";  ///< lstm, gru or rnn (case-insensitive)
  int64_t input_dim = 80;
  int64_t hidden_dim = 256;
  int64_t layers = 1;
  bool bidirectional = false;
  bool linear_before_reset = false;  ///< GRU only
  /// A dim is a number ("100", fixed) or a symbol name ("seq").
  std::string seq_len = "seq";
  std::string batch = "1";
  int64_t opset = 11;
  uint32_t seed = 0;
  bool rand01 = false;  ///< U(0, 1) weights as the original instead of U(-1/sqrt(H), 1/sqrt(H))
};

/// The model, or an error naming the bad field (unknown op, a size < 1, opset < 7).
Expected<onnx::ModelProto> MakeRnnModel(const RnnModelSpec& spec);

/// The original's file name scheme: "{op}_i{I}_h{H}_{bi|}_l{L}_{batched|no_batch}".
std::string RnnModelBaseName(const RnnModelSpec& spec);

}  // namespace nuphar::bench
