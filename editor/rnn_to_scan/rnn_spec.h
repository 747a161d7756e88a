// Parsing and validating the attributes of an LSTM/GRU/RNN node into an RnnSpec.
#pragma once

#include "editor/rnn_to_scan/rnn_to_scan_driver.h"

namespace nuphar::editor {

/// Reads direction, hidden_size, activations (+ alpha/beta, spec E3), clip, input_forget,
/// layout and linear_before_reset; E4 errors name the node.
Expected<RnnSpec> ParseRnnSpec(const onnx::NodeProto& node, const RnnCell& cell);

}  // namespace nuphar::editor
