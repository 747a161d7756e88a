// MatMul + constant bias fusion (runtime/fusion/matmul_bias_fusion.h).
//
// Before:  Y = MatMul(A, B)   Z = Add(Y, bias)  or  Z = Add(bias, Y)
//          B a constant float [K, N]; bias a constant float [N] (the hoisted input projection of
//          model_editor's to_scan: X x W^T + (Wb + Rb)).
// After:   Z = com.nuphar.internal.MatMulAddBias(A, B, bias)
// Numerics: the kernel adds bias[n] to each finished product element, one float32 rounding,
//          exactly the Add node's (float addition commutes exactly, so either operand order);
//          Z is bit-identical to the unfused graph.
// Refused (left as they are): Y read by anything else (also inside a subgraph) or a graph
//          output; a bias of another shape than [N] (a [1, N] or scalar bias may change Z's
//          rank or broadcast, which the kernel does not do); a non-constant B or bias; an Add
//          before opset 7 (its legacy broadcast attributes).
#include "runtime/fusion/matmul_bias_fusion.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "graph/graph_view.h"
#include "runtime/core/graph_plan.h"

namespace nuphar {
namespace {

bool IsOnnxOp(const onnx::NodeProto& n, const char* op) {
  return n.op_type() == op && (n.domain().empty() || n.domain() == "ai.onnx");
}

}  // namespace

int FuseMatMulAddBias(onnx::GraphProto* graph, const ConstantLookup& lookup, int onnx_opset) {
  if (onnx_opset < 7) return 0;
  const UseCounts uses(*graph);
  std::unordered_map<std::string, int> add_reading;  // value -> index of an Add reading it
  for (int i = 0; i < graph->node_size(); ++i)
    if (IsOnnxOp(graph->node(i), "Add"))
      for (const auto& in : graph->node(i).input()) add_reading.emplace(in, i);
  std::vector<int> fused_matmuls;
  for (int i = 0; i < graph->node_size(); ++i) {
    const onnx::NodeProto& mm = graph->node(i);
    if (!IsOnnxOp(mm, "MatMul") || mm.input_size() != 2 || mm.output_size() != 1) continue;
    const Tensor* b = lookup(mm.input(1));
    if (!b || b->dtype() != DType::kFloat || b->rank() != 2) continue;
    const std::string& y = mm.output(0);
    auto it = add_reading.find(y);
    if (it == add_reading.end() || uses.Count(y) != 1) continue;
    onnx::NodeProto* add = graph->mutable_node(it->second);
    if (!IsOnnxOp(*add, "Add") || add->input_size() != 2 || add->output_size() != 1 || add->input(0) == add->input(1)) continue;
    const std::string bias_name = add->input(0) == y ? add->input(1) : add->input(0);
    const Tensor* bias = lookup(bias_name);
    if (!bias || bias->dtype() != DType::kFloat || bias->rank() != 1 || bias->dim(0) != b->dim(1)) continue;
    // The fused node takes the Add's place: every input it reads (A, B, the bias, which may be
    // a Constant node between the two) is defined before the Add.
    onnx::NodeProto fused;
    fused.set_op_type(kMatMulAddBiasOp);
    fused.set_domain(kFusedDomain);
    fused.set_name(mm.name() + "_add_bias");
    fused.add_input(mm.input(0));
    fused.add_input(mm.input(1));
    fused.add_input(bias_name);
    fused.add_output(add->output(0));
    *add = std::move(fused);
    fused_matmuls.push_back(i);
  }
  for (auto it = fused_matmuls.rbegin(); it != fused_matmuls.rend(); ++it) graph->mutable_node()->DeleteSubrange(*it, 1);
  return static_cast<int>(fused_matmuls.size());
}

namespace {

class MatMulAddBiasFusion final : public RuntimeGraphPass {
 public:
  std::string Name() const override { return "matmul_add_bias_fusion"; }
  bool MayApply(const onnx::GraphProto& graph) const override {
    const auto& nodes = graph.node();
    return std::any_of(nodes.begin(), nodes.end(), [](const onnx::NodeProto& n) { return IsOnnxOp(n, "MatMul"); });
  }
  Expected<int> RewriteGraph(onnx::GraphProto* graph, const GraphRewriteContext& ctx) override {
    auto it = ctx.model.opsets.find("");
    return FuseMatMulAddBias(graph, ctx.constants, it == ctx.model.opsets.end() ? 0 : it->second);
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateMatMulAddBiasFusion() { return std::make_unique<MatMulAddBiasFusion>(); }

}  // namespace nuphar
