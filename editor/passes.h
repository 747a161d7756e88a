// The editor's pass registry (STYLE R7): one factory per pass, and the mode -> pipeline table
// lives in editor.cc. Each pass is one file with its Before/After/Refused banner.
#pragma once

#include <memory>

#include "editor/editor.h"
#include "graph/pass.h"

namespace nuphar::editor {

/// to_scan: LSTM/GRU/RNN -> Scan (editor/rnn_to_scan/).
std::unique_ptr<GraphPass> CreateRnnToScanPass(const EditorOptions& options);
/// loop_to_scan: Loops that index their data with the iteration number -> Scan.
std::unique_ptr<GraphPass> CreateLoopToScanPass(const EditorOptions& options);
/// opt_inproj: MatMul(Concat(x_t, h), W) in Scan bodies -> hoisted x·Wx + h·Wh in the body.
std::unique_ptr<GraphPass> CreateOptInprojPass(const EditorOptions& options);
/// opt_inproj's first step: MatMuls of two initializers folded into one initializer.
std::unique_ptr<GraphPass> CreateFoldConstantMatMulPass(const EditorOptions& options);
/// gemm_to_matmul: Gemm -> MatMul (+ Mul/Transpose/Add).
std::unique_ptr<GraphPass> CreateGemmToMatMulPass(const EditorOptions& options);
/// remove_initializers_from_inputs: drop main-graph inputs backed by main-graph initializers.
std::unique_ptr<GraphPass> CreateRemoveInitializersFromInputsPass(const EditorOptions& options);

}  // namespace nuphar::editor
