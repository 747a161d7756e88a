// LSTM cell hooks for the RNN -> Scan driver (gate order i, o, f, c as in ONNX).
//
//   a = x_t + h·Rᵀ                       x_t = (X·Wᵀ + Wb + Rb)[t], hoisted by the driver
//   i = f(clip(a_i + Pi⊙c))   f = input_forget ? 1 - i : f(clip(a_f + Pf⊙c))
//   C = f⊙c + i⊙g(clip(a_c))  o = f(clip(a_o + Po⊙C))   H = o⊙h(C)
// The peephole on o uses the new cell state; C itself is not clipped (spec E3, as ORT does).
#include "editor/rnn_to_scan/rnn_to_scan_driver.h"
#include "graph/opset_emit.h"

namespace nuphar::editor {
namespace {

class Lstm final : public RnnCell {
 public:
  Lstm() : RnnCell({"LSTM", 4, {"h", "c"}, {"Sigmoid", "Tanh", "Tanh"}, /*has_peephole=*/true}) {}

  std::vector<BodyMatrix> SplitWeights(const RnnSpec& spec, const DirectionWeights& dw) const override {
    return {TransposedRows(dw.r, spec.hidden, 0, 4 * spec.hidden)};
  }


  Expected<std::vector<std::string>> EmitCell(ScanBodyBuilder& body, const CellInputs& in) const override {
    const int64_t H = body.hidden();
    const RnnSpec& spec = in.spec;
    const Activation& f = spec.act(in.direction, 0, 3);
    const Activation& g = spec.act(in.direction, 1, 3);
    const Activation& h_act = spec.act(in.direction, 2, 3);
    const std::string& h = in.states[0];
    const std::string& c = in.states[1];

    std::string a = body.Op("Add", {in.x, body.Op("MatMul", {h, in.matrices[0]})});
    auto gates = EmitSplit(body.nodes(), a, 1, {H, H, H, H}, {"split_i", "split_o", "split_f", "split_c"});
    for (const auto& name : gates) body.nodes().AddValueInfo(name, DType::kFloat, {body.batch(), DimSpec::Of(H)});
    const bool peephole = !in.weights.p.empty();
    auto peep = [&](int k, const std::string& pre, const std::string& state) {
      if (!peephole) return pre;
      std::vector<float> pk(in.weights.p.begin() + k * H, in.weights.p.begin() + (k + 1) * H);
      return body.Op("Add", {pre, body.Op("Mul", {state, body.Const({H}, std::move(pk))})});
    };
    std::string i = body.Activate(f, body.MaybeClip(peep(0, gates[0], c), spec.clip));
    std::string fg = spec.input_forget ? body.Op("Sub", {body.Const({1}, {1.f}), i})
                                       : body.Activate(f, body.MaybeClip(peep(2, gates[2], c), spec.clip));
    std::string cc = body.Activate(g, body.MaybeClip(gates[3], spec.clip));
    std::string new_c = body.Op("Add", {body.Op("Mul", {fg, c}), body.Op("Mul", {i, cc})});
    std::string o = body.Activate(f, body.MaybeClip(peep(1, gates[1], new_c), spec.clip));
    std::string new_h = body.Op("Mul", {o, body.Activate(h_act, new_c)});
    return std::vector<std::string>{new_h, new_c};
  }
};

}  // namespace

const RnnCell& LstmCell() {
  static const Lstm cell;
  return cell;
}

}  // namespace nuphar::editor
