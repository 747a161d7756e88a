// The graph tools on files, with options as "name=value" strings: what the C API and the Python
// module call (the CLI tools parse the same names with CLI11 and call the same libraries).
//
// Each entry loads the input, runs one library (editor, shape inference, quantizer), and saves
// the result through a temporary file, so the output is untouched on any error. Option names
// are the tools' long flags without the dashes; an unknown name or a bad value is kBadOption.
#pragma once

#include <string>
#include <vector>

#include "graph/error.h"

namespace nuphar::api {

enum class ToolError {
  kNone,
  kBadOption,   ///< unknown option name or a value that does not parse
  kFailed,      ///< I/O, an invalid model or a node the tool refuses
  kIncomplete,  ///< shape inference left values unknown, or the opset is unsupported
};

struct ToolResult {
  ToolError error = ToolError::kNone;
  Status status;  ///< the Diag when error != kNone
  bool ok() const { return error == ToolError::kNone; }
};

/// model_editor --mode MODE, then (unless skip_shape_inference) shape inference with auto_merge.
ToolResult EditModelFile(const std::string& input, const std::string& output, const std::string& mode,
                         const std::vector<std::string>& options);
/// symbolic_shape_infer; `output` may be empty (infer and report only).
ToolResult InferShapesFile(const std::string& input, const std::string& output,
                           const std::vector<std::string>& options);
/// model_quantizer.
ToolResult QuantizeModelFile(const std::string& input, const std::string& output,
                             const std::vector<std::string>& options);

}  // namespace nuphar::api
