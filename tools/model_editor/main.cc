// model_editor: the tool around editor/editor.h. Flags as in the original (spec §2.1) plus the
// nuphar-cpp additions (--skip_shape_inference, --remain_inputs, --zero_state_as_input).
// Exit codes: 0 success, 1 conversion/IO error (nothing written), 2 usage error.
#include <CLI/CLI.hpp>

#include <iostream>
#include <unordered_set>
#include <sstream>

#include "api/graph_tools.h"
#include "editor/editor.h"
#include "graph/error.h"

namespace {

int Fail(const nuphar::Status& s) {
  std::cerr << "model_editor: error: " << s.message() << "\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
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
  nuphar::api::EditFileOptions file_options;
  nuphar::editor::EditorOptions& options = file_options.editor;
  bool& skip_shape_inference = file_options.skip_shape_inference;
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  std::stringstream ss(remain_inputs);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) options.remain_inputs.push_back(item);

  std::cout << "input model: " << input << "\n" << "output model " << output << "\n";
  file_options.progress = [&](const std::string& step) {
    if (step == "edit") {
      for (const auto& m : nuphar::editor::EditorModes())
        if (m.name == mode) std::cout << m.message << "\n";
    } else if (step == "shape_inference") {
      std::cout << "Running symbolic shape inference on output model\n";
    }
  };
  if (auto r = nuphar::api::EditModelFile(input, output, mode, file_options); !r.ok()) return Fail(r.status);
  std::cout << "Done!\n";
  return 0;
}
