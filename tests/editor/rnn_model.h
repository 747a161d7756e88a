// RnnCase: LSTM/GRU/RNN test models built in code (the editor tests' model library).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "runtime/session.h"

namespace nuphar::editor::testing {

struct RnnCase {
  std::string op = "LSTM";  ///< LSTM, GRU, RNN
  bool linear_before_reset = false;
  std::string direction = "forward";
  int layers = 1;
  bool seq_lens = false;          ///< ragged [5, 2, 3] (batch 3, T 5) as an initializer
  std::string init = "none";      ///< none | input | initializer
  bool symbolic_batch = false;
  int opset = 13;
  // features beyond the matrix
  int layout = 0;
  bool peephole = false;
  float clip = 0.f;
  bool input_forget = false;
  bool no_bias = false;
  std::vector<std::string> activations;  ///< empty = defaults
  std::vector<float> alpha, beta;
  bool weights_as_constant_chain = false;  ///< W = Unsqueeze(Constant) (spox-style exports)
  int64_t hidden = 3, input = 4, batch = 3, seq = 5;
};

onnx::ModelProto MakeRnnModel(const RnnCase& c, uint32_t seed = 0);
/// Random X (and initial states when they are graph inputs) for the case.
NamedTensors MakeRnnInputs(const RnnCase& c, uint32_t seed = 1);
std::string CaseName(const RnnCase& c);

}  // namespace nuphar::editor::testing
