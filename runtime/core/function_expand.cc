// ONNX function-op expansion (runtime/core/function_expand.h).
#include "runtime/core/function_expand.h"

#include <onnx/defs/function.h>
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include "graph/onnx_infer_guard.h"
#include "runtime/core/graph_plan.h"

namespace nuphar {
namespace {

constexpr int kMaxRounds = 4;  // bodies may use other function ops; bounded so a cycle cannot hang

using TypeMap = std::unordered_map<std::string, DType>;

// The function body of `node`, or false when its schema defines none. A context-dependent body
// is built only when every input's element type is known: ONNX's builders read the input types
// without checking them (SequenceMap crashes on a missing one).
bool BuildBody(const onnx::NodeProto& node, int opset, const TypeMap& types, onnx::FunctionProto* body) {
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
    if (!in.empty()) {
      auto it = types.find(in);
      if (it == types.end()) return false;
      t.mutable_tensor_type()->set_elem_type(static_cast<int32_t>(it->second));
    }
    input_types.push_back(t);
  }
  onnx::FunctionBodyBuildContextImpl ctx(node, input_types);
  try {
    return schema->BuildContextDependentFunction(ctx, *body);
  } catch (const std::exception&) {
    return false;
  }
}

// Element types of the values of `graph` after an expansion round, through ONNX's inference
// (function bodies introduce values the model's value_info never named).
void InferTypes(const onnx::GraphProto& graph, const ModelContext& model, TypeMap* types) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  for (const auto& [domain, version] : model.opsets) {
    auto* op = m.add_opset_import();
    op->set_domain(domain);
    op->set_version(version);
  }
  *m.mutable_graph() = graph;
  try {
    onnx::shape_inference::InferShapes(m, GuardedSchemaRegistry());
  } catch (const std::exception&) {
    return;
  }
  for (const auto& vi : m.graph().value_info())
    if (vi.type().has_tensor_type() && vi.type().tensor_type().elem_type() != 0)
      types->emplace(vi.name(), static_cast<DType>(vi.type().tensor_type().elem_type()));
}

}  // namespace

Expected<int> ExpandFunctionNodes(onnx::GraphProto* graph, const ModelContext& model, OpsetOverrides* overrides) {
  const KernelRegistry& registry = *model.registry;
  TypeMap types = model.value_types;
  int expanded = 0;
  for (int round = 0; round < kMaxRounds; ++round) {
    if (round > 0) InferTypes(*graph, model, &types);
    bool changed = false;
    onnx::GraphProto out = *graph;
    out.clear_node();
    for (const auto& node : graph->node()) {
      const bool has_kernel = registry.HasOp(node.domain(), node.op_type());
      const int opset = overrides->count(node.name()) ? overrides->at(node.name()) : model.OpsetFor(node.domain());
      onnx::FunctionProto body;
      if (has_kernel || opset < 0 || !BuildBody(node, opset, types, &body)) {
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
