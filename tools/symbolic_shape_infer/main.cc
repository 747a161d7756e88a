// symbolic_shape_infer: infer symbolic shapes of an ONNX model (spec symbolic_shape_infer.md §1).
//
// Exit codes: 0 success; 1 incomplete inference (values left unknown); 2 usage, I/O error or
// invalid model; 3 unsupported opset (default domain missing or < 7). Diagnostics go to stderr.
#include <CLI/CLI.hpp>
#include <iostream>

#include "api/graph_tools.h"

namespace {

constexpr int kExitOk = 0;
constexpr int kExitIncomplete = 1;
constexpr int kExitUsageOrInvalid = 2;
constexpr int kExitUnsupportedOpset = 3;

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Symbolic shape inference for ONNX models (nuphar-cpp)"};
  std::string input, output, external_location = "./";
  bool all_tensors_to_one_file = false;
  nuphar::api::InferFileOptions file_options;
  nuphar::ShapeInferOptions& options = file_options.infer;
  bool& save_as_external_data = file_options.save.save_as_external_data;
  int64_t& external_threshold = file_options.save.external_threshold_bytes;
  std::string& save_partial = file_options.save_partial;
  app.add_option("--input", input, "model to read")->required();
  app.add_option("--output", output, "where to write the inferred model (optional)");
  app.add_flag("--auto_merge", options.auto_merge, "merge dims that must be equal but differ symbolically");
  app.add_option("--int_max", options.int_max, "literals >= int_max are boundless (Slice, Min/Max)")
      ->default_val(options.int_max);
  app.add_flag("--guess_output_rank", options.guess_output_rank, "unknown ops: outputs get input 0's rank and type");
  app.add_option("--verbose", options.verbose, "0 silent, >0 warnings, >2 per-node trace")->default_val(0);
  app.add_flag("--save_as_external_data", save_as_external_data, "save initializers in a side file");
  app.add_flag("--all_tensors_to_one_file", all_tensors_to_one_file,
               "with --save_as_external_data: one side file (the only layout written)");
  app.add_option("--external_data_location", external_location, "side file name (relative to the output)")
      ->default_val("./");
  app.add_option("--external_data_size_threshold", external_threshold, "minimum tensor size in bytes to move out")
      ->default_val(1024);
  app.add_option("--save_partial", save_partial, "on incomplete inference, write the partial model here");
  app.add_flag("--strict", options.strict, "abort at the first node whose shapes cannot be inferred");
  app.add_flag("--keep_value_info", options.keep_value_info, "keep original value_info entries not re-inferred");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsageOrInvalid;
  }

  std::cout << "input model: " << input << "\n";
  if (!output.empty()) std::cout << "output model " << output << "\n";
  file_options.save.external_file_name = nuphar::api::ExternalFileName(external_location);
  file_options.progress = [](const std::string& step) {
    if (step == "shape_inference") std::cout << "Doing symbolic shape inference..." << std::endl;
  };
  auto r = nuphar::api::InferShapesFile(input, output, file_options);
  switch (r.error) {
    case nuphar::api::ToolError::kNone:
      if (!output.empty()) std::cout << "Done!\n";
      return kExitOk;
    case nuphar::api::ToolError::kIncomplete:
      std::cerr << "error: " << r.status.message() << "\n";
      return kExitIncomplete;
    case nuphar::api::ToolError::kUnsupportedOpset:
      std::cerr << "error: " << r.status.message() << "\n";
      return kExitUnsupportedOpset;
    default:
      std::cerr << "error: " << r.status.message() << "\n";
      return kExitUsageOrInvalid;
  }
}
