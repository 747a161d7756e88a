// Mode table and RunEditor (editor/editor.h): each mode is a short pipeline of passes.
#include "editor/editor.h"

#include <onnx/onnx_pb.h>

#include "editor/passes.h"

namespace nuphar::editor {
namespace {

using PassFactory = std::unique_ptr<GraphPass> (*)(const EditorOptions&);

struct Mode {
  ModeInfo info;
  std::vector<PassFactory> pipeline;
};

const std::vector<Mode>& Modes() {
  static const std::vector<Mode> modes = {
      {{"to_scan", "Convert LSTM/GRU/RNN to Scan...",
        "Convert every LSTM, GRU and RNN node (also inside If/Loop/Scan bodies) into Scan ops with the input "
        "projection hoisted out of the loop. Follows the ONNX spec: GRU Rbh, sequence_lens in every direction, "
        "peepholes, clip, input_forget, layout=1, all activations with alpha/beta."},
       {&CreateRnnToScanPass}},
      {{"opt_inproj", "Optimize input projection in Scan...",
        "In Scan bodies computing MatMul(Concat(x_t, h), W), move the x_t part out of the loop as one MatMul over "
        "the whole sequence. Also folds MatMuls of two initializers into one initializer."},
       {&CreateFoldConstantMatMulPass, &CreateOptInprojPass}},
      {{"gemm_to_matmul", "Convert Gemm to MatMul",
        "Replace every Gemm (all graphs) by MatMul plus Mul/Transpose/Add for alpha, transA/transB and C."},
       {&CreateGemmToMatMulPass}},
      {{"remove_initializers_from_inputs", "Remove all initializers from input for model with IR version >= 4...",
        "Drop main-graph inputs that are backed by main-graph initializers (except --remain_inputs); raises the "
        "IR version to 4 if lower."},
       {&CreateRemoveInitializersFromInputsPass}},
      {{"loop_to_scan", "Convert Loop to Scan",
        "Convert Loops whose body reads its data with Gather(data, i) and whose condition is constant True into "
        "Scan. Other Loops are an error, or kept with a warning under --keep_unconvertible_loop_ops."},
       {&CreateLoopToScanPass}},
  };
  return modes;
}

}  // namespace

const std::vector<ModeInfo>& EditorModes() {
  static const std::vector<ModeInfo> infos = [] {
    std::vector<ModeInfo> v;
    for (const auto& m : Modes()) v.push_back(m.info);
    return v;
  }();
  return infos;
}

Status RunEditor(const std::string& mode, onnx::ModelProto* model, const EditorOptions& options) {
  for (const auto& m : Modes()) {
    if (m.info.name != mode) continue;
    PassRunOptions run_options;
    run_options.verbose = options.verbose;
    run_options.log = options.log;
    for (PassFactory factory : m.pipeline) {
      auto pass = factory(options);
      auto stats = RunPass(*model, *pass, run_options);
      if (!stats.ok()) return stats.status();
    }
    return Status::OK();
  }
  std::string known;
  for (const auto& m : Modes()) known += (known.empty() ? "" : ", ") + m.info.name;
  return Diag::Msg("unknown mode '" + mode + "' (known: " + known + ")");
}

}  // namespace nuphar::editor
