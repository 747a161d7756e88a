// GRU cell hooks for the RNN -> Scan driver (gate order z, r, h as in ONNX).
//
// linear_before_reset = 0 (ONNX default; spec E1 fixes the original's dropped Rbh):
//   hoisted bias = [Wbz+Rbz, Wbr+Rbr, Wbh+Rbh]   (Rbh is additive here, not gated by r)
//   zr = f(clip(x_zr + h·Rzrᵀ))   h~ = g(clip(x_h + (r⊙h)·Rhᵀ))
// linear_before_reset = 1:
//   hoisted bias = [Wbz+Rbz, Wbr+Rbr, Wbh]
//   hp = h·Rᵀ + [0, 0, Rbh]       zr = f(clip(x_zr + hp_zr))   h~ = g(clip(x_h + r⊙hp_h))
// Both: H = (1 - z)⊙h~ + z⊙h.
#include "editor/rnn_to_scan/rnn_to_scan_driver.h"
#include "graph/opset_emit.h"

namespace nuphar::editor {
namespace {

class Gru final : public RnnCell {
 public:
  Gru() : RnnCell({"GRU", 3, {"h"}, {"Sigmoid", "Tanh"}}) {}

  std::vector<BodyMatrix> SplitWeights(const RnnSpec& spec, const DirectionWeights& dw) const override {
    const int64_t H = spec.hidden;
    if (spec.linear_before_reset) return {TransposedRows(dw.r, H, 0, 3 * H)};
    return {TransposedRows(dw.r, H, 0, 2 * H), TransposedRows(dw.r, H, 2 * H, H)};
  }

  std::vector<float> SplitBias(const RnnSpec& spec, const DirectionWeights& dw) const override {
    const size_t H = static_cast<size_t>(spec.hidden);
    std::vector<float> b(3 * H);
    for (size_t k = 0; k < 2 * H; ++k) b[k] = dw.wb[k] + dw.rb[k];
    for (size_t k = 2 * H; k < 3 * H; ++k) b[k] = spec.linear_before_reset ? dw.wb[k] : dw.wb[k] + dw.rb[k];
    return b;
  }

  Expected<std::vector<std::string>> EmitCell(ScanBodyBuilder& body, const CellInputs& in) const override {
    const int64_t H = body.hidden();
    const RnnSpec& spec = in.spec;
    const Activation& f = spec.act(in.direction, 0, 2);
    const Activation& g = spec.act(in.direction, 1, 2);
    const std::string& h = in.states[0];
    auto& b = body.nodes();
    auto x = EmitSplit(b, in.x, 1, {2 * H, H}, {"split_Xzr", "split_Xh"});
    std::string ht;
    if (spec.linear_before_reset) {
      std::vector<float> rbh(3 * H, 0.f);
      std::copy(in.weights.rb.begin() + 2 * H, in.weights.rb.end(), rbh.begin() + 2 * H);
      std::string hp = body.Op("Add", {body.Op("MatMul", {h, in.matrices[0]}), body.Const({3 * H}, std::move(rbh))});
      auto hs = EmitSplit(b, hp, 1, {2 * H, H}, {"split_Hzr", "split_Hh"});
      std::string zr = body.Activate(f, body.MaybeClip(body.Op("Add", {hs[0], x[0]}), spec.clip));
      auto zrs = EmitSplit(b, zr, 1, {H, H}, {"split_zt", "split_rt"});
      ht = body.Activate(g, body.MaybeClip(body.Op("Add", {body.Op("Mul", {zrs[1], hs[1]}), x[1]}), spec.clip));
      return Finish(body, zrs[0], ht, h);
    }
    std::string zr = body.Activate(f, body.MaybeClip(body.Op("Add", {body.Op("MatMul", {h, in.matrices[0]}), x[0]}), spec.clip));
    auto zrs = EmitSplit(b, zr, 1, {H, H}, {"split_zt", "split_rt"});
    std::string rh = body.Op("MatMul", {body.Op("Mul", {h, zrs[1]}), in.matrices[1]});
    ht = body.Activate(g, body.MaybeClip(body.Op("Add", {rh, x[1]}), spec.clip));
    return Finish(body, zrs[0], ht, h);
  }

 private:
  static std::vector<std::string> Finish(ScanBodyBuilder& body, const std::string& z, const std::string& ht,
                                         const std::string& h) {
    std::string one_minus_z = body.Op("Sub", {body.Const({1}, {1.f}), z});
    return {body.Op("Add", {body.Op("Mul", {one_minus_z, ht}), body.Op("Mul", {z, h})})};
  }
};

}  // namespace

const RnnCell& GruCell() {
  static const Gru cell;
  return cell;
}

}  // namespace nuphar::editor
