// model_editor: the tool around editor/editor.h. Flags as in the original (spec §2.1) plus the
// nuphar-cpp additions (--skip_shape_inference, --remain_inputs, --zero_state_as_input).
// Exit codes (tools/common/cli.h): 0 success, 1 conversion/IO error (nothing written), 2 usage error.
#include <onnx/onnx_pb.h>

#include <CLI/CLI.hpp>

#include <iostream>
#include <unordered_set>
#include <sstream>

#include "editor/editor.h"
#include "graph/error.h"
#include "graph/model_io.h"
#include "shape_infer/shape_infer.h"
#include "tools/common/cli.h"

namespace {

// E7: the project's symbolic shape inference with auto_merge, as the original CLI runs it.
// Anything left unknown is an error; the message points to the skip flag.
nuphar::Status InferShapes(onnx::ModelProto* model) {
  nuphar::ShapeInferOptions options;
  options.auto_merge = true;
  auto result = nuphar::InferShapes(model, options);
  if (!result.ok()) {
    nuphar::Status s = result.status();
    s.diag().reason = "shape inference failed: " + s.diag().reason + " (use --skip_shape_inference to skip it)";
    return s;
  }
  if (result->outcome == nuphar::InferOutcome::kUnsupportedOpset)
    return nuphar::Diag::Msg("symbolic shape inference needs a default-domain ONNX opset of 7 or above "
                             "(use --skip_shape_inference to write the model without it)");
  if (result->outcome != nuphar::InferOutcome::kComplete) {
    std::string what = result->unknown_values.empty() ? std::string() : "no shape for '" + result->unknown_values[0] + "'";
    if (!result->first_incomplete_node.empty())
      what += (what.empty() ? "" : ", ") + std::string("first lost at node ") + result->first_incomplete_node;
    return nuphar::Diag::Msg("Incomplete symbolic shape inference: " + what +
                             " (use --skip_shape_inference to write the model without it)");
  }
  return nuphar::Status::OK();
}

int Fail(const nuphar::Status& s) { return nuphar::tools::ReportError("model_editor", s); }

}  // namespace

int main(int argc, char** argv) {
  nuphar::tools::PrintDiagnosticsToStderr();
  std::ostringstream mode_help;
  mode_help << "one of:";
  std::vector<std::string> mode_names;
  for (const auto& m : nuphar::editor::EditorModes()) {
    mode_names.push_back(m.name);
    mode_help << "\n  " << m.name << ": " << m.help;
  }
  CLI::App app{"model_editor: rewrite an ONNX model for Nuphar (nuphar-cpp).\n"
               "Differences from the original: GRU Rbh and sequence_lens are handled per the ONNX spec in every "
               "direction; zero states are created once; node forms follow the model's opset; the IR version is "
               "never lowered; generated names are unique; nodes in subgraphs are converted too."};
  std::string input, output, mode, remain_inputs;
  nuphar::editor::EditorOptions options;
  bool skip_shape_inference = false;
  app.add_option("--input", input, "input model")->required();
  app.add_option("--output", output, "output model (may equal --input; written only on success)")->required();
  app.add_option("--mode", mode, mode_help.str())->required()->check(CLI::IsMember(mode_names));
  app.add_flag("--keep_unconvertible_loop_ops", options.keep_unconvertible_loop_ops,
               "loop_to_scan: keep a Loop that cannot be converted (with a warning) instead of failing");
  app.add_flag("--skip_shape_inference", skip_shape_inference, "write the converted model without shape inference");
  app.add_option("--remain_inputs", remain_inputs,
                 "remove_initializers_from_inputs: comma-separated inputs to keep");
  app.add_flag("--zero_state_as_input", options.zero_state_as_input,
               "to_scan: also list default zero-state initializers as graph inputs (the original's behaviour)");
  app.add_flag("-v,--verbose", options.verbose, "explain every candidate node that was skipped");
  if (int rc = nuphar::tools::ParseCommandLine(app, argc, argv); rc >= 0) return rc;
  std::stringstream ss(remain_inputs);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) options.remain_inputs.push_back(item);

  std::cout << "input model: " << input << "\n" << "output model " << output << "\n";
  onnx::ModelProto model;
  if (auto s = nuphar::LoadModel(input, &model); !s.ok()) return Fail(s);
  for (const auto& m : nuphar::editor::EditorModes())
    if (m.name == mode) std::cout << m.message << "\n";
  if (auto s = nuphar::editor::RunEditor(mode, &model, options); !s.ok()) return Fail(s.WithFile(input));
  if (!skip_shape_inference) {
    std::cout << "Running symbolic shape inference on output model\n";
    if (auto s = InferShapes(&model); !s.ok()) return Fail(s);
  }
  if (auto s = nuphar::SaveModel(model, output); !s.ok()) return Fail(s);
  std::cout << "Done!\n";
  return 0;
}
