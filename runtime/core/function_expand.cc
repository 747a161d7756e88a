// ONNX function-op expansion (runtime/core/function_expand.h).
#include "runtime/core/function_expand.h"

#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include "runtime/core/graph_plan.h"
#include "runtime/kernels/kernel.h"

namespace nuphar {
namespace {

constexpr int kMaxRounds = 4;  // bodies may use other function ops; bounded so a cycle cannot hang

// The function body of `node`, or false when its schema defines none.
bool BuildBody(const onnx::NodeProto& node, int opset, const ModelContext& model, onnx::FunctionProto* body) {
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), opset, node.domain());
  if (!schema) return false;
  if (schema->HasFunction()) {
    *body = *schema->GetFunction();
    return true;
  }
  if (!schema->HasContextDependentFunction()) return false;
  std::vector<onnx::TypeProto> input_types;
  for (const auto& in : node.input()) {
    onnx::TypeProto t;
    auto it = model.value_types.find(in);
    if (it != model.value_types.end()) t.mutable_tensor_type()->set_elem_type(static_cast<int32_t>(it->second));
    input_types.push_back(t);
  }
  onnx::FunctionBodyBuildContextImpl ctx(node, input_types);
  try {
    return schema->BuildContextDependentFunction(ctx, *body);
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

Expected<int> ExpandFunctionNodes(onnx::GraphProto* graph, const ModelContext& model, OpsetOverrides* overrides) {
  const KernelRegistry& registry = KernelRegistry::Get();
  int expanded = 0;
  for (int round = 0; round < kMaxRounds; ++round) {
    bool changed = false;
    onnx::GraphProto out = *graph;
    out.clear_node();
    for (const auto& node : graph->node()) {
      const bool has_kernel = registry.Find(node.domain(), node.op_type()) != nullptr;
      const int opset = overrides->count(node.name()) ? overrides->at(node.name()) : model.OpsetFor(node.domain());
      onnx::FunctionProto body;
      if (has_kernel || opset < 0 || !BuildBody(node, opset, model, &body)) {
        *out.add_node() = node;
        continue;
      }
      int body_opset = opset;
      for (const auto& imp : body.opset_import())
        if (imp.domain().empty() || imp.domain() == "ai.onnx") body_opset = static_cast<int>(imp.version());
      const int first_new = out.node_size();
      const std::string prefix = (node.name().empty() ? node.op_type() : node.name()) + "__fn" +
                                 std::to_string(expanded) + "_";
      try {
        onnx::FunctionExpandHelper(node, body, out, prefix);
      } catch (const std::exception& e) {
        return Diag::Node(node, std::string("expanding the ONNX function body failed: ") + e.what());
      }
      for (int i = first_new; i < out.node_size(); ++i) {
        auto* n = out.mutable_node(i);
        n->set_name(prefix + std::to_string(i - first_new) + "_" + n->op_type());
        (*overrides)[n->name()] = body_opset;
      }
      ++expanded;
      changed = true;
    }
    *graph = std::move(out);
    if (!changed) break;
  }
  return expanded;
}

}  // namespace nuphar
