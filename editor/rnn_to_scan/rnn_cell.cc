// Simple RNN cell hooks for the RNN -> Scan driver:  H = f(clip(x_t + h·Rᵀ)), bias Wb + Rb hoisted.
#include "editor/rnn_to_scan/rnn_to_scan_driver.h"

namespace nuphar::editor {
namespace {

class SimpleRnn final : public RnnCell {
 public:
  SimpleRnn() : RnnCell({"RNN", 1, {"h"}, {"Tanh"}}) {}

  std::vector<BodyMatrix> SplitWeights(const RnnSpec& spec, const DirectionWeights& dw) const override {
    return {TransposedRows(dw.r, spec.hidden, 0, spec.hidden)};
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
