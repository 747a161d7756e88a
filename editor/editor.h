// model_editor's library entry: run one editor mode on a model in memory (spec §2, E1–E7).
//
//   nuphar::editor::EditorOptions options;
//   Status s = nuphar::editor::RunEditor("to_scan", &model, options);
//
// Modes: to_scan, loop_to_scan, opt_inproj, gemm_to_matmul, remove_initializers_from_inputs
// (EditorModes() lists them with the tool's help text). Every mode converts nodes in every
// graph (If branches, Loop/Scan bodies at any depth). On error the model may be partly
// edited; callers that write files keep the input untouched (the tool saves atomically).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "graph/error.h"

namespace onnx {
class ModelProto;
}

namespace nuphar::editor {

struct EditorOptions {
  bool keep_unconvertible_loop_ops = false;  ///< loop_to_scan: keep such Loops with a warning
  bool zero_state_as_input = false;          ///< to_scan: list zero-state initializers as graph inputs (E1)
  std::vector<std::string> remain_inputs;    ///< remove_initializers_from_inputs: inputs to keep (E6)
  bool verbose = false;                      ///< log a reason for every skipped candidate
  std::function<void(const std::string&)> log;  ///< warnings and verbose lines (default: stderr)
};

struct ModeInfo {
  std::string name;     ///< the --mode value
  std::string message;  ///< the original tool's stdout line for this mode
  std::string help;     ///< one-paragraph description for --help
};

const std::vector<ModeInfo>& EditorModes();

/// Runs `mode` on `model`. Unknown modes and unconvertible nodes come back as errors (E4).
Status RunEditor(const std::string& mode, onnx::ModelProto* model, const EditorOptions& options);

}  // namespace nuphar::editor
