// Whole-If IR: the branch walk and the per-call shape plan (if_ir.h).
#include "runtime/jit/if_ir.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "graph/node_builder.h"
#include "runtime/core/tensor_proto.h"

namespace nuphar::jit {
namespace {

bool IsConstantNode(const onnx::NodeProto& n) {
  return n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx");
}

// A Constant node's value: its tensor, or its integer(s) (value_int, value_ints: axes in
// opset 13+ exports); an error for the other forms, which no view reads.
Expected<Tensor> ConstantValue(const onnx::NodeProto& n) {
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") return TensorFromProto(a.t());
    if (a.name() == "value_int") return Tensor::FromVector<int64_t>({}, {a.i()});
    if (a.name() == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
    }
  }
  return Diag::Msg("Constant '" + n.name() + "' holds no tensor or integers");
}

std::string Describe(const onnx::NodeProto& n) {
  return "'" + (n.name().empty() ? (n.output_size() ? n.output(0) : std::string("?")) : n.name()) + "' (" + n.op_type() + ")";
}

}  // namespace

std::vector<std::string> IfBranchOuterValues(const onnx::GraphProto& branch) {
  std::unordered_set<std::string> local;
  for (const auto& init : branch.initializer()) local.insert(init.name());
  std::vector<std::string> outer;
  auto read = [&](const std::string& name) {
    if (!name.empty() && !local.count(name) && std::find(outer.begin(), outer.end(), name) == outer.end())
      outer.push_back(name);
  };
  for (const auto& n : branch.node()) {
    if (!IsConstantNode(n) && n.input_size() > 0) read(n.input(0));  // a view's data
    for (const auto& o : n.output()) local.insert(o);
  }
  for (const auto& o : branch.output()) read(o.name());
  return outer;
}

Expected<IfBranchIR> BuildIfBranchIR(const onnx::GraphProto& branch, int opset, std::span<const IfOperand> operands) {
  IfBranchIR ir;
  std::map<std::string, Tensor> constants;
  for (const auto& init : branch.initializer()) {
    NUPHAR_ASSIGN_OR_RETURN(Tensor t, TensorFromProto(init));
    constants.emplace(init.name(), std::move(t));
  }
  struct Value {
    DType dtype;
    int rank;
  };
  if (operands.size() > kMaxIfValues) return Diag::Msg("more than " + std::to_string(kMaxIfValues) + " values read");
  std::vector<Value> values;
  std::map<std::string, int> value_of;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].rank < 0 || operands[i].dtype == DType::kUndefined)
      return Diag::Msg("'" + operands[i].name + "' has no declared type and rank");
    value_of.emplace(operands[i].name, static_cast<int>(i));
    values.push_back({operands[i].dtype, operands[i].rank});
  }
  for (const auto& n : branch.node()) {
    if (IsConstantNode(n)) {
      if (n.output_size() != 1) return Diag::Msg("Constant " + Describe(n) + " without one output");
      NUPHAR_ASSIGN_OR_RETURN(Tensor t, ConstantValue(n));
      constants.insert_or_assign(n.output(0), std::move(t));
      continue;
    }
    const std::string where = "branch '" + branch.name() + "' node " + Describe(n);
    if (!(n.domain().empty() || n.domain() == "ai.onnx") || !IsDataMoveView(n.op_type()))
      return Diag::Msg(where + " is not a view");
    if (n.input_size() < 1 || n.output_size() != 1) return Diag::Msg(where + " is not one view of one value");
    auto source = value_of.find(n.input(0));
    if (source == value_of.end()) return Diag::Msg(where + " views '" + n.input(0) + "', not a value of the If");
    const Value in = values[static_cast<size_t>(source->second)];
    if (in.rank > static_cast<int>(kMaxMoveRank)) return Diag::Msg(where + ": rank above 16");
    std::vector<MoveOperand> inputs(static_cast<size_t>(n.input_size()));
    inputs[0].dtype = in.dtype;
    inputs[0].has_shape = true;
    inputs[0].dims.assign(static_cast<size_t>(in.rank), -1);  // the actual dims come with each call
    inputs[0].dim_params.assign(static_cast<size_t>(in.rank), "");
    for (int k = 1; k < n.input_size(); ++k) {
      if (n.input(k).empty()) continue;
      auto c = constants.find(n.input(k));
      if (c == constants.end()) return Diag::Msg(where + ": input '" + n.input(k) + "' is not a constant of the branch");
      MoveOperand& op = inputs[static_cast<size_t>(k)];
      op.constant = &c->second;
      op.dtype = c->second.dtype();
      op.has_shape = true;
      op.dims = c->second.shape();
      op.dim_params.assign(op.dims.size(), "");
    }
    auto view = BuildDataMoveIR(n, opset, inputs, in.dtype);
    if (!view) return Diag::Msg(where + ": " + view.message());
    if (view->op != MoveOp::kView || view->computed_params) return Diag::Msg(where + ": its shape is computed at run time");
    if (view->out_rank > static_cast<int>(kMaxMoveRank)) return Diag::Msg(where + ": rank above 16");
    if (values.size() >= kMaxIfValues) return Diag::Msg("more than " + std::to_string(kMaxIfValues) + " values in a branch");
    value_of.insert_or_assign(n.output(0), static_cast<int>(values.size()));
    values.push_back({in.dtype, view->out_rank});
    ir.steps.push_back({std::move(*view), source->second, in.rank});
  }
  for (const auto& o : branch.output()) {
    auto v = value_of.find(o.name());
    if (v == value_of.end()) return Diag::Msg("branch '" + branch.name() + "' output '" + o.name() + "' is a constant");
    ir.outputs.push_back(v->second);
    int root = v->second;
    while (root >= static_cast<int>(operands.size())) root = ir.steps[static_cast<size_t>(root) - operands.size()].source;
    ir.output_operands.push_back(root);
  }
  return ir;
}

bool PlanIfBranch(const IfBranchIR& ir, std::span<const std::span<const int64_t>> operand_shapes, int* ranks,
                  int64_t* dims) {
  const size_t operands = operand_shapes.size();
  if (operands + ir.steps.size() > kMaxIfValues) return false;
  for (size_t v = 0; v < operands; ++v) {
    if (operand_shapes[v].size() > kMaxMoveRank) return false;
    ranks[v] = static_cast<int>(operand_shapes[v].size());
    std::copy(operand_shapes[v].begin(), operand_shapes[v].end(), dims + v * kMaxMoveRank);
  }
  for (size_t s = 0; s < ir.steps.size(); ++s) {
    const IfBranchIR::Step& step = ir.steps[s];
    const size_t src = static_cast<size_t>(step.source), out = operands + s;
    // The view's IR was built for its source's rank (its output rank follows from it).
    if (ranks[src] != step.in_rank) return false;
    const std::span<const int64_t> shape(dims + src * kMaxMoveRank, static_cast<size_t>(ranks[src]));
    if (!PlanDataMove(step.view, std::span<const std::span<const int64_t>>(&shape, 1), nullptr, dims + out * kMaxMoveRank))
      return false;
    ranks[out] = step.view.out_rank;
  }
  return true;
}

}  // namespace nuphar::jit
