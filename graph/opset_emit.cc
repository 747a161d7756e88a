// Opset-aware node forms and the opset/IR-version raise (graph/opset_emit.h).
#include "graph/opset_emit.h"

#include <onnx/onnx_pb.h>

#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "graph/opset_schema.h"

namespace nuphar {

namespace {

// Axes-like operand: attribute below `threshold`, int64 input at or above it.
onnx::NodeProto& AxesOp(NodeBuilder& b, const char* op, const std::string& x, const char* attr,
                        const std::vector<int64_t>& values, int64_t threshold, const std::string& output) {
  if (b.opset() >= threshold) {
    std::string v = b.Ints64(values);
    return output.empty() ? b.Add(op, {x, v}) : b.Add(op, {x, v}, {output});
  }
  auto& node = output.empty() ? b.Add(op, {x}) : b.Add(op, {x}, {output});
  SetAttr(node, attr, values);
  return node;
}

}  // namespace

std::string EmitSqueeze(NodeBuilder& b, const std::string& x, const std::vector<int64_t>& axes, const std::string& output) {
  return AxesOp(b, "Squeeze", x, "axes", axes, 13, output).output(0);
}

std::string EmitUnsqueeze(NodeBuilder& b, const std::string& x, const std::vector<int64_t>& axes,
                          const std::string& output) {
  return AxesOp(b, "Unsqueeze", x, "axes", axes, 13, output).output(0);
}

std::vector<std::string> EmitSplit(NodeBuilder& b, const std::string& x, int64_t axis, const std::vector<int64_t>& splits,
                                   std::vector<std::string> outputs) {
  outputs.resize(splits.size());
  for (auto& o : outputs) o = o.empty() ? b.names().NodeName(b.prefix(), "split_out") : b.names().Fixed(o);
  std::vector<std::string> inputs{x};
  if (b.opset() >= 13) inputs.push_back(b.Ints64(splits));
  auto& node = b.Add("Split", inputs, outputs);
  SetAttr(node, "axis", axis);
  if (b.opset() < 13) SetAttr(node, "split", splits);
  return outputs;
}

std::string EmitSlice(NodeBuilder& b, const std::string& x, const std::vector<int64_t>& starts,
                      const std::vector<int64_t>& ends, const std::vector<int64_t>& axes, const std::string& output) {
  if (b.opset() >= 10) {
    std::vector<std::string> inputs{x, b.Ints64(starts), b.Ints64(ends), b.Ints64(axes)};
    return (output.empty() ? b.Add("Slice", inputs) : b.Add("Slice", inputs, {output})).output(0);
  }
  auto& node = output.empty() ? b.Add("Slice", {x}) : b.Add("Slice", {x}, {output});
  SetAttr(node, "starts", starts);
  SetAttr(node, "ends", ends);
  SetAttr(node, "axes", axes);
  return node.output(0);
}

std::string EmitClip(NodeBuilder& b, const std::string& x, float lo, float hi, const std::string& output) {
  if (b.opset() >= 11) {
    std::vector<std::string> inputs{x, b.ScalarF(lo), b.ScalarF(hi)};
    return (output.empty() ? b.Add("Clip", inputs) : b.Add("Clip", inputs, {output})).output(0);
  }
  auto& node = output.empty() ? b.Add("Clip", {x}) : b.Add("Clip", {x}, {output});
  SetAttr(node, "min", lo);
  SetAttr(node, "max", hi);
  return node.output(0);
}

std::string EmitReduceSum(NodeBuilder& b, const std::string& x, const std::vector<int64_t>& axes, bool keepdims,
                          const std::string& output) {
  auto& node = AxesOp(b, "ReduceSum", x, "axes", axes, 13, output);
  SetAttr(node, "keepdims", static_cast<int64_t>(keepdims ? 1 : 0));
  return node.output(0);
}

int64_t GetOpset(const onnx::ModelProto& model, const std::string& domain) {
  const bool want_default = domain.empty() || domain == "ai.onnx";
  for (const auto& op : model.opset_import()) {
    const bool is_default = op.domain().empty() || op.domain() == "ai.onnx";
    if (want_default ? is_default : op.domain() == domain) return op.version();
  }
  return 0;
}

int64_t IrVersionForOpset(int64_t opset) {
  if (opset <= 8) return 3;
  if (opset == 9) return 4;
  if (opset == 10) return 5;
  if (opset == 11) return 6;
  if (opset <= 14) return 7;
  if (opset <= 18) return 8;
  if (opset <= 20) return 9;  // ONNX 1.14 / 1.15
  return 10;                  // opset 21: ONNX 1.16
}

Expected<int64_t> EnsureOpset(onnx::ModelProto& model, int64_t min_opset) {
  const int64_t old_opset = GetOpset(model);
  const int64_t new_opset = std::max(old_opset, min_opset);
  if (old_opset > 0 && new_opset > old_opset) {
    // A raise must not silently change the meaning of existing nodes (E2): refuse if any
    // default-domain node resolves to a different schema at the new version.
    std::string changed;
    ForEachScope(model, [&](const GraphScope& scope) {
      for (const auto& n : scope.graph->node()) {
        if (!n.domain().empty() && n.domain() != "ai.onnx") continue;
        // OpSinceVersion also knows opsets 18-21, where libonnx 1.12 has no schemas.
        const int before = OpSinceVersion(n.op_type(), static_cast<int>(old_opset));
        const int after = OpSinceVersion(n.op_type(), static_cast<int>(new_opset));
        if (before > 0 && after > 0 && before != after) {
          if (!changed.empty()) changed += ", ";
          changed += "'" + n.name() + "' (" + n.op_type() + ")";
        }
      }
    });
    if (!changed.empty())
      return Diag::Msg("raising the opset from " + std::to_string(old_opset) + " to " + std::to_string(new_opset) +
                       " would change the meaning of existing nodes: " + changed);
  }
  bool found = false;
  for (auto& op : *model.mutable_opset_import()) {
    if (op.domain().empty() || op.domain() == "ai.onnx") {
      op.set_version(new_opset);
      found = true;
    }
  }
  if (!found) {
    auto* op = model.add_opset_import();
    op->set_domain("");
    op->set_version(new_opset);
  }
  model.set_ir_version(std::max<int64_t>({model.ir_version(), IrVersionForOpset(new_opset), 4}));
  return new_opset;
}

}  // namespace nuphar
