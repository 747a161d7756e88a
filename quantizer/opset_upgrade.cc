// Opset raise with a per-node compatibility check, IR version table, and the original's
// Slice/TopK opset-10 upgrade (spec E2 and §3.10).
#include "quantizer/opset_upgrade.h"

#include <onnx/defs/schema.h>

#include <set>
#include <utility>

namespace nuphar::quant {
namespace {

bool IsDefaultDomain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

/// (op, since_version) steps that only extend types or add attributes whose default keeps the
/// old meaning, so an existing node stays valid and means the same after the raise.
const std::set<std::pair<std::string, int>>& CompatibleSteps() {
  static const std::set<std::pair<std::string, int>> steps = {
      {"Max", 8},     {"Min", 8},       {"Mean", 8},     {"Sum", 8},         {"MaxPool", 8},
      {"Cast", 9},    {"Constant", 9},  {"Flatten", 9},  {"Gemm", 9},        {"Greater", 9},
      {"Less", 9},    {"MatMul", 9},    {"PRelu", 9},    {"MaxPool", 10},    {"AveragePool", 10},
      {"Upsample", 10},
  };
  return steps;
}

/// True when `node` stays valid with the same meaning from opset `from` to `to`.
bool NodeSurvivesRaise(const onnx::NodeProto& node, int64_t from, int64_t to) {
  // Converted explicitly during the walk (UpgradeNodeToOpset10).
  if ((node.op_type() == "Slice" || node.op_type() == "TopK") && node.input_size() == 1 && to >= 10) return true;
  // Dropout-10 only changed the type of the optional mask output.
  if (node.op_type() == "Dropout" && node.output_size() <= 1) return true;
  const auto* registry_old = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(from), "");
  const auto* registry_new = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(to), "");
  if (!registry_new) return registry_old == nullptr;  // unknown to ONNX: nothing to compare
  if (!registry_old) return true;                     // introduced after `from`: cannot be in the model
  for (int v = registry_old->since_version() + 1; v <= registry_new->since_version(); ++v) {
    const auto* step = onnx::OpSchemaRegistry::Schema(node.op_type(), v, "");
    if (step && step->since_version() == v && !CompatibleSteps().count({node.op_type(), v})) return false;
  }
  return true;
}

void CollectBlockedNodes(const onnx::GraphProto& g, int64_t from, int64_t to, std::vector<std::string>* blocked) {
  for (const auto& node : g.node()) {
    if (IsDefaultDomain(node.domain()) && !NodeSurvivesRaise(node, from, to)) {
      blocked->push_back("'" + node.name() + "' (" + node.op_type() + ")");
    }
    for (const auto& a : node.attribute()) {
      if (a.has_g()) CollectBlockedNodes(a.g(), from, to, blocked);
      for (const auto& sub : a.graphs()) CollectBlockedNodes(sub, from, to, blocked);
    }
  }
}

std::vector<int64_t> IntsOf(const onnx::NodeProto& node, const std::string& name, bool* found) {
  *found = false;
  std::vector<int64_t> values;
  for (const auto& a : node.attribute()) {
    if (a.name() == name) {
      *found = true;
      if (a.type() == onnx::AttributeProto::INT) values.push_back(a.i());
      for (int64_t v : a.ints()) values.push_back(v);
    }
  }
  return values;
}

}  // namespace

int64_t RequiredIrVersion(int64_t opset) {
  if (opset <= 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;
  return 10;
}

Expected<OpsetRaise> RaiseOpsetForQuantization(onnx::ModelProto* model, int64_t min_version) {
  OpsetRaise raise;
  onnx::OperatorSetIdProto* default_entry = nullptr;
  onnx::OperatorSetIdProto* ms_entry = nullptr;
  for (auto& entry : *model->mutable_opset_import()) {
    if (IsDefaultDomain(entry.domain()) && !default_entry) default_entry = &entry;
    if (entry.domain() == "com.microsoft" && !ms_entry) ms_entry = &entry;
  }
  raise.old_version = default_entry ? default_entry->version() : 0;
  raise.new_version = std::max(raise.old_version, min_version);
  if (raise.raised() && raise.old_version > 0) {
    std::vector<std::string> blocked;
    CollectBlockedNodes(model->graph(), raise.old_version, raise.new_version, &blocked);
    if (!blocked.empty()) {
      std::string list;
      for (const auto& b : blocked) list += (list.empty() ? "" : ", ") + b;
      return Diag::Msg("raising the opset from " + std::to_string(raise.old_version) + " to " +
                       std::to_string(raise.new_version) + " (needed by MatMulInteger) would change nodes " + list +
                       "; convert the model to opset " + std::to_string(raise.new_version) + " first");
    }
  }
  if (default_entry) {
    default_entry->set_version(raise.new_version);
  } else {
    auto* e = model->add_opset_import();
    e->set_domain("");  // never "onnx" (B20)
    e->set_version(raise.new_version);
  }
  if (!ms_entry) {
    ms_entry = model->add_opset_import();
    ms_entry->set_domain("com.microsoft");
    ms_entry->set_version(1);
  } else if (ms_entry->version() < 1) {
    ms_entry->set_version(1);
  }
  return raise;
}

namespace {

// A node with exactly `outputs` (possibly none, unlike NodeBuilder::Add's default of one).
onnx::NodeProto& EmitWithOutputs(NodeBuilder& emit, std::string_view op, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs) {
  onnx::NodeProto& node = emit.Add(op, inputs, outputs);
  if (outputs.empty()) node.clear_output();
  return node;
}

}  // namespace

bool UpgradeNodeToOpset10(const onnx::NodeProto& node, NodeBuilder& emit) {
  if (node.input_size() != 1) return false;
  const std::vector<std::string> outputs(node.output().begin(), node.output().end());
  if (node.op_type() == "Slice") {
    bool has_starts, has_ends, has_axes;
    const auto starts = IntsOf(node, "starts", &has_starts);
    const auto ends = IntsOf(node, "ends", &has_ends);
    auto axes = IntsOf(node, "axes", &has_axes);
    if (!has_axes) {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    emit.set_prefix(node.name());
    const std::string s = emit.Ints64(starts);
    const std::string e = emit.Ints64(ends);
    const std::string a = emit.Ints64(axes);
    EmitWithOutputs(emit, "Slice", {node.input(0), s, e, a}, outputs);
    return true;
  }
  if (node.op_type() == "TopK") {
    bool has_k, has_axis;
    const auto k = IntsOf(node, "k", &has_k);
    const auto axis = IntsOf(node, "axis", &has_axis);
    emit.set_prefix(node.name());
    const std::string k_input = emit.Ints64({k.empty() ? 0 : k[0]});
    auto& topk = EmitWithOutputs(emit, "TopK", {node.input(0), k_input}, outputs);
    *topk.add_attribute() = IntAttr("axis", axis.empty() ? -1 : axis[0]);
    return true;
  }
  return false;
}

}  // namespace nuphar::quant
