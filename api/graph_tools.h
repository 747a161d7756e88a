// The graph tools on files: load, run one library (editor, shape inference, quantizer), save.
// The CLI tools (tools/*/main.cc) call the typed entries after parsing their flags; the C API
// and the Python module call the "name=value" entries, whose names are the CLI's long flags
// without the dashes. Outputs are written through a temporary file and rename, so an output
// is untouched on any error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "editor/editor.h"
#include "graph/error.h"
#include "graph/model_io.h"
#include "quantizer/quantizer.h"
#include "shape_infer/shape_infer.h"

namespace nuphar::api {

enum class ToolError {
  kNone,
  kBadOption,         ///< unknown option name, a value that does not parse, an unknown mode or preset
  kFailed,            ///< I/O, an invalid model or a node the tool refuses
  kIncomplete,        ///< shape inference left values unknown
  kUnsupportedOpset,  ///< shape inference: default-domain opset missing or < 7
};

struct ToolResult {
  ToolError error = ToolError::kNone;
  Status status;  ///< the Diag when error != kNone
  bool ok() const { return error == ToolError::kNone; }
};

/// Called between steps with "edit" / "shape_inference" / "save", so the CLI prints its progress
/// lines where the original tools printed them. May be empty.
using ProgressFn = std::function<void(const std::string& step)>;

struct EditFileOptions {
  editor::EditorOptions editor;
  bool skip_shape_inference = false;  ///< else symbolic shape inference with auto_merge (E7)
  ProgressFn progress;
};
ToolResult EditModelFile(const std::string& input, const std::string& output, const std::string& mode,
                         const EditFileOptions& options);

struct InferFileOptions {
  ShapeInferOptions infer;
  SaveOptions save;
  std::string save_partial;  ///< on kIncomplete, the partial model is written here
  ProgressFn progress;
};
/// --external_data_location: a file name, or a folder ("./", the default) which means SaveModel's
/// default side file "<output>.data".
std::string ExternalFileName(const std::string& location);
/// `output` may be empty (infer and report only).
ToolResult InferShapesFile(const std::string& input, const std::string& output, const InferFileOptions& options);

struct QuantizeFileOptions {
  quant::QuantizeOptions quantize;  ///< default_config is replaced by the default_qcfg preset
  std::string default_qcfg = quant::kDefaultPreset;
  std::string qcfg_json;           ///< per-node configs to read, or with export_qcfg_json to write
  bool export_qcfg_json = false;   ///< write the configs used next to the model
};
/// `report` (optional) receives what the quantizer did.
ToolResult QuantizeModelFile(const std::string& input, const std::string& output, const QuantizeFileOptions& options,
                             quant::QuantizeReport* report = nullptr);

/// The same with "name=value" / "name" options (bad ones are kBadOption, listed all at once).
ToolResult EditModelFile(const std::string& input, const std::string& output, const std::string& mode,
                         const std::vector<std::string>& options);
ToolResult InferShapesFile(const std::string& input, const std::string& output,
                           const std::vector<std::string>& options);
ToolResult QuantizeModelFile(const std::string& input, const std::string& output,
                             const std::vector<std::string>& options);

}  // namespace nuphar::api
