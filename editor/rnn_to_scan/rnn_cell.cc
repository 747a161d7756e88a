// Simple RNN cell hooks for the RNN -> Scan driver:  H = f(clip(x_t + h·Rᵀ)), bias Wb + Rb hoisted.
#include "editor/rnn_to_scan/rnn_to_scan_driver.h"

namespace nuphar::editor {
namespace {

class SimpleRnn final : public RnnCell {
 public:
  const char* OpType() const override { return "RNN"; }
  int NumGates() const override { return 1; }
  std::vector<std::string> StateNames() const override { return {"h"}; }
  std::vector<std::string> DefaultActivations() const override { return {"Tanh"}; }

  std::vector<BodyMatrix> SplitWeights(const RnnSpec& spec, const DirectionWeights& dw) const override {
    return {TransposedRows(dw.r, spec.hidden, 0, spec.hidden)};
  }

  std::vector<float> SplitBias(const RnnSpec& spec, const DirectionWeights& dw) const override {
    std::vector<float> b(dw.wb.size());
    for (size_t k = 0; k < b.size(); ++k) b[k] = dw.wb[k] + dw.rb[k];
    return b;
  }

  Expected<std::vector<std::string>> EmitCell(ScanBodyBuilder& body, const CellInputs& in) const override {
    std::string pre = body.Op("Add", {body.Op("MatMul", {in.states[0], in.matrices[0]}), in.x});
    return std::vector<std::string>{body.Activate(in.spec.act(in.direction, 0, 1), body.MaybeClip(pre, in.spec.clip))};
  }
};

}  // namespace

const RnnCell& SimpleRnnCell() {
  static const SimpleRnn cell;
  return cell;
}

}  // namespace nuphar::editor
