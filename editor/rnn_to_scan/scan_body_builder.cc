// Scan body construction and activation emission (editor/rnn_to_scan/scan_body_builder.h).
#include "editor/rnn_to_scan/scan_body_builder.h"

#include "graph/opset_emit.h"

namespace nuphar::editor {

ScanBodyBuilder::ScanBodyBuilder(NameTable* names, int64_t opset, const std::string& prefix, DimSpec batch,
                                 int64_t hidden)
    : builder_(&graph_, names, opset, prefix), batch_(std::move(batch)), hidden_(hidden) {
  graph_.set_name(names->Fixed(prefix + "_subgraph"));
}

std::string ScanBodyBuilder::AddInput(const std::string& base_name, int64_t width, DType dtype) {
  std::string name = builder_.names().Fixed(base_name);
  std::vector<DimSpec> dims;
  if (width > 0) dims = {batch_, DimSpec::Of(width)};
  builder_.AddValueInfo(name, dtype, dims, graph_.mutable_input());
  return name;
}

void ScanBodyBuilder::AddOutput(const std::string& name, int64_t width, DType dtype) {
  std::vector<DimSpec> dims;
  if (width > 0) dims = {batch_, DimSpec::Of(width)};
  builder_.AddValueInfo(name, dtype, dims, graph_.mutable_output());
}

std::string ScanBodyBuilder::Const(const std::vector<int64_t>& dims, std::vector<float> values) {
  return builder_.Const<float>(dims, values);
}

std::string ScanBodyBuilder::MaybeClip(const std::string& x, float clip) {
  return clip > 0.f ? EmitClip(builder_, x, -clip, clip) : x;
}

std::string ScanBodyBuilder::Activate(const Activation& act, const std::string& x) {
  const std::string& op = act.op;
  if (op == "Affine") return Op("Add", {Op("Mul", {x, builder_.ScalarF(act.alpha)}), builder_.ScalarF(act.beta)});
  if (op == "ScaledTanh")
    return Op("Mul", {Op("Tanh", {Op("Mul", {x, builder_.ScalarF(act.beta)})}), builder_.ScalarF(act.alpha)});
  if (op == "ThresholdedRelu" && builder_.opset() < 10) {
    std::string keep = Op("Greater", {x, builder_.ScalarF(act.alpha)});
    return Op("Where", {keep, x, builder_.ScalarF(0.f)});
  }
  auto& node = builder_.Add(op, {x});
  if (op == "LeakyRelu" || op == "ThresholdedRelu" || op == "Elu") SetAttr(node, "alpha", act.alpha);
  if (op == "HardSigmoid") {
    SetAttr(node, "alpha", act.alpha);
    SetAttr(node, "beta", act.beta);
  }
  return node.output(0);
}

}  // namespace nuphar::editor
