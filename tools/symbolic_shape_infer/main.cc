// symbolic_shape_infer: infer symbolic shapes of an ONNX model (spec symbolic_shape_infer.md §1).
//
// Exit codes are every tool's (tools/common/cli.h, README): 0 success; 1 I/O error, invalid model
// or unsupported opset (default domain missing or < 7); 2 bad command line; 3 incomplete
// inference (values left unknown). The spec's own table (1 incomplete, 2 I/O, 3 opset) is not
// followed, so a pipeline script reads one mapping for all tools. Diagnostics go to stderr.
#include <onnx/onnx_pb.h>

#include <CLI/CLI.hpp>
#include <iostream>

#include "graph/model_io.h"
#include "shape_infer/shape_infer.h"
#include "tools/common/cli.h"

using namespace nuphar::tools;

namespace {
constexpr const char* kTool = "symbolic_shape_infer";
}  // namespace

int main(int argc, char** argv) {
  nuphar::tools::PrintDiagnosticsToStderr();
  CLI::App app{"Symbolic shape inference for ONNX models (nuphar-cpp)"};
  std::string input, output, save_partial, external_location = "./";
  bool save_as_external_data = false, all_tensors_to_one_file = false;
  int64_t external_threshold = 1024;
  nuphar::ShapeInferOptions options;
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
  if (int rc = ParseCommandLine(app, argc, argv); rc >= 0) return rc;

  std::cout << "input model: " << input << "\n";
  if (!output.empty()) std::cout << "output model " << output << "\n";
  onnx::ModelProto model;
  if (nuphar::Status st = nuphar::LoadModel(input, &model); !st.ok()) return ReportError(kTool, st);
  std::cout << "Doing symbolic shape inference..." << std::endl;
  auto result = nuphar::InferShapes(&model, options);
  if (!result.ok()) return ReportError(kTool, result.status().WithFile(input));
  if (result->outcome == nuphar::InferOutcome::kUnsupportedOpset)
    return ReportError(kTool, nuphar::Diag::File(input, "Only support models of onnx opset 7 and above."));
  nuphar::SaveOptions save;
  save.save_as_external_data = save_as_external_data;
  save.external_threshold_bytes = external_threshold;
  if (!external_location.empty() && external_location.back() != '/') save.external_file_name = external_location;
  if (result->outcome == nuphar::InferOutcome::kIncomplete) {
    std::cerr << kTool << ": error: Incomplete symbolic shape inference: first at node " << result->first_incomplete_node
              << "; values left unknown:";
    for (const auto& v : result->unknown_values) std::cerr << " " << v;
    std::cerr << "\n";
    if (!save_partial.empty()) {
      if (nuphar::Status st = nuphar::SaveModel(model, save_partial, save); !st.ok()) ReportError(kTool, st);
    }
    return kExitIncomplete;
  }
  if (!output.empty()) {
    if (nuphar::Status st = nuphar::SaveModel(model, output, save); !st.ok()) return ReportError(kTool, st);
    std::cout << "Done!\n";
  }
  return kExitOk;
}
