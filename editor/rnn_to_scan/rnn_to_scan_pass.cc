// Mode to_scan: every LSTM, GRU and RNN node, in every graph, becomes Scan ops (spec §2.2).
//
// Before:  Y, Y_h[, Y_c] = LSTM|GRU|RNN(X, W, R, ...)
// After:   per direction: Add(MatMul(X, Wᵀ), bias) -> Scan(body = one cell step) ; Unsqueeze/Concat
//          into Y, Y_h, Y_c with the original names (rnn_to_scan_driver.cc has the details).
// Refused: see rnn_to_scan_driver.cc (E4).
#include <onnx/onnx_pb.h>

#include "editor/passes.h"
#include "editor/rnn_to_scan/rnn_to_scan_driver.h"

namespace nuphar::editor {
namespace {

class RnnToScanPass final : public GraphPass {
 public:
  explicit RnnToScanPass(const EditorOptions& options) { options_.zero_state_as_input = options.zero_state_as_input; }
  std::string Name() const override { return "to_scan"; }
  std::vector<std::string> TargetOpTypes() const override { return {"LSTM", "GRU", "RNN"}; }
  // Scan-9, Where, ConstantOfShape and int32 Less need opset 9 (E2).
  int64_t MinOpset() const override { return 9; }

  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    const RnnCell& cell = node.op_type() == "LSTM" ? LstmCell() : node.op_type() == "GRU" ? GruCell() : SimpleRnnCell();
    return ConvertRnnToScan(ctx, node, cell, options_);
  }

 private:
  RnnToScanOptions options_;
};

}  // namespace

std::unique_ptr<GraphPass> CreateRnnToScanPass(const EditorOptions& options) {
  return std::make_unique<RnnToScanPass>(options);
}

}  // namespace nuphar::editor
