// If, Loop and Scan: infer the bodies as child graphs and derive the node outputs (spec §2.8
// with the S3 fixes: unique subgraph symbols, If branch fusion, Loop carried-shape changes).
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "graph/tensor_data.h"
#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

using sym::Expr;

SymbolTable& Symbols(NodeContext& ctx) { return ctx.graph().root().symbols; }

void SetBodyInput(NodeContext& ctx, onnx::GraphProto* body, int i, const onnx::TypeProto& type) {
  if (i < body->input_size()) *body->mutable_input(i)->mutable_type() = type;
}

onnx::TypeProto TensorType(NodeContext& ctx, int32_t elem, const std::optional<SymShape>& shape) {
  onnx::TypeProto t;
  WriteTensorType(&t, elem, shape, Symbols(ctx), ctx.options().verbose);
  return t;
}

std::optional<SymShape> BodyOutputShape(NodeContext& ctx, const onnx::GraphProto& body, int j, int32_t* elem) {
  if (j >= body.output_size()) return std::nullopt;
  const onnx::TypeProto& t = body.output(j).type();
  *elem = t.has_tensor_type() ? t.tensor_type().elem_type() : 0;
  return ShapeOfType(t, Symbols(ctx));
}

Status HandleIf(NodeContext& ctx) {
  onnx::GraphProto* branches[2] = {ctx.MutableGraphAttr("then_branch"), ctx.MutableGraphAttr("else_branch")};
  if (!branches[0] || !branches[1]) return ctx.Error("If without then_branch/else_branch");
  std::optional<int> taken;
  if (auto c = ctx.InputInts(0); c && c->size() == 1) taken = (*c)[0] != 0 ? 0 : 1;
  std::unique_ptr<GraphInferencer> children[2];
  for (int b = 0; b < 2; ++b) {
    NUPHAR_ASSIGN_OR_RETURN(children[b], ctx.graph().InferSubgraph(branches[b], {}));
  }
  for (size_t k = 0; k < ctx.NumOutputs(); ++k) {
    const int j = static_cast<int>(k);
    if (j >= branches[0]->output_size() || j >= branches[1]->output_size()) break;
    if (taken) {
      ctx.SetOutputType(k, branches[*taken]->output(j).type());
      if (const TrackedValue* v = children[*taken]->FindTracked(branches[*taken]->output(j).name()))
        ctx.SetOutputValue(k, *v);
      continue;
    }
    const onnx::TypeProto& t0 = branches[0]->output(j).type();
    const onnx::TypeProto& t1 = branches[1]->output(j).type();
    if (!t0.has_tensor_type() || !t1.has_tensor_type()) {
      ctx.SetOutputType(k, t0);
      continue;
    }
    int32_t e0 = t0.tensor_type().elem_type(), e1 = t1.tensor_type().elem_type();
    if (e0 != 0 && e1 != 0 && e0 != e1)
      return ctx.Error("If branches disagree on the element type of output " + std::to_string(k) + ": " +
                       onnx::TensorProto::DataType_Name(e0) + " vs " + onnx::TensorProto::DataType_Name(e1));
    auto s0 = ShapeOfType(t0, Symbols(ctx)), s1 = ShapeOfType(t1, Symbols(ctx));
    std::optional<SymShape> fused;
    if (s0 && s1) {
      // Branches of different rank (PyTorch's `x.squeeze(-1) if x.shape[-1] == 1 else x` with an
      // undecidable condition): upstream's fusion keeps branch 0's rank and compares the leading
      // dims both share; we do the same, with a warning.
      if (s0->size() != s1->size())
        ctx.Warn("If branches disagree on the rank of output " + std::to_string(k) + " (" +
                 std::to_string(s0->size()) + " vs " + std::to_string(s1->size()) + "); using the then branch's");
      fused = s0;
      for (size_t a = 0; a < std::min(s0->size(), s1->size()); ++a)
        if (!(*s0)[a] || !(*s1)[a] || *(*s0)[a] != *(*s1)[a]) (*fused)[a] = ctx.NewSymbol(k, a);
    }
    ctx.SetOutput(k, e0 ? e0 : e1, fused);
  }
  return Status::OK();
}

// Loop: body inputs (iter, cond, carried...) -> outputs (cond, carried..., scan outputs...).
Status HandleLoop(NodeContext& ctx) {
  onnx::GraphProto* body = ctx.MutableGraphAttr("body");
  if (!body) return ctx.Error("Loop without body");
  const int carried = static_cast<int>(ctx.NumInputs()) - 2;
  if (carried < 0 || body->input_size() != carried + 2) return ctx.Error("Loop body inputs do not match the node");
  SetBodyInput(ctx, body, 0, TensorType(ctx, onnx::TensorProto::INT64, SymShape{}));
  SetBodyInput(ctx, body, 1, TensorType(ctx, onnx::TensorProto::BOOL, SymShape{}));
  std::vector<size_t> state_inputs;
  for (int i = 0; i < carried; ++i) {
    if (const onnx::TypeProto* t = ctx.InputType(static_cast<size_t>(2 + i))) SetBodyInput(ctx, body, 2 + i, *t);
    state_inputs.push_back(static_cast<size_t>(2 + i));
  }
  NUPHAR_ASSIGN_OR_RETURN(auto child, ctx.graph().InferSubgraph(body, state_inputs));

  // Carried values whose shape changes per iteration get fresh symbols; then re-infer once.
  bool changed = false;
  for (int i = 0; i < carried; ++i) {
    int32_t in_elem = 0, out_elem = 0;
    const onnx::TypeProto& in_type = body->input(2 + i).type();
    auto in_shape = ShapeOfType(in_type, Symbols(ctx));
    in_elem = in_type.has_tensor_type() ? in_type.tensor_type().elem_type() : 0;
    auto out_shape = BodyOutputShape(ctx, *body, 1 + i, &out_elem);
    if (!in_shape || !out_shape || in_shape->size() != out_shape->size()) continue;
    bool differs = false;
    for (size_t a = 0; a < in_shape->size(); ++a) {
      if ((*in_shape)[a] && (*out_shape)[a] && *(*in_shape)[a] == *(*out_shape)[a]) continue;
      (*in_shape)[a] = ctx.NewSymbol(static_cast<size_t>(1 + i), a);
      differs = true;
    }
    if (differs) {
      SetBodyInput(ctx, body, 2 + i, TensorType(ctx, in_elem ? in_elem : out_elem, in_shape));
      changed = true;
    }
  }
  if (changed) {
    child.reset();
    NUPHAR_ASSIGN_OR_RETURN(child, ctx.graph().InferSubgraph(body, state_inputs));
  }
  for (size_t k = 0; k < ctx.NumOutputs(); ++k) {
    const int j = static_cast<int>(k) + 1;
    if (j >= body->output_size()) break;
    if (static_cast<int>(k) < carried) {
      // A carried value that changed keeps the (fresh) body-input type; otherwise the body output's.
      const onnx::TypeProto& in_type = body->input(2 + static_cast<int>(k)).type();
      ctx.SetOutputType(k, changed && in_type.has_tensor_type() ? in_type : body->output(j).type());
      continue;
    }
    int32_t elem = 0;
    auto shape = BodyOutputShape(ctx, *body, j, &elem);
    if (shape) shape->insert(shape->begin(), ctx.NewSymbol(0, 0));
    ctx.SetOutput(k, elem, shape);
  }
  return Status::OK();
}

// Scan (opset >= 9; the opset-8 form has sequence_lens first and a leading batch axis).
Status HandleScan(NodeContext& ctx) {
  onnx::GraphProto* body = ctx.MutableGraphAttr("body");
  if (!body) return ctx.Error("Scan without body");
  const bool v8 = ctx.Opset() < 9;
  const int first = v8 ? 1 : 0;  // opset 8: input 0 is sequence_lens
  const int num_scan = static_cast<int>(ctx.AttrInt("num_scan_inputs", 0));
  const int num_inputs = static_cast<int>(ctx.NumInputs()) - first;
  const int num_state = num_inputs - num_scan;
  if (num_scan <= 0 || num_state < 0 || body->input_size() != num_inputs)
    return ctx.Error("Scan body inputs do not match the node");
  auto in_axes = ctx.AttrInts("scan_input_axes").value_or(std::vector<int64_t>(static_cast<size_t>(num_scan), 0));
  auto out_axes = ctx.AttrInts("scan_output_axes").value_or(std::vector<int64_t>());
  SymDim batch, seq_len;
  std::vector<size_t> state_inputs;
  for (int i = 0; i < num_inputs; ++i) {
    size_t node_in = static_cast<size_t>(first + i);
    auto shape = ctx.InputShape(node_in);
    int32_t elem = ctx.InputElemType(node_in);
    if (shape && v8) {  // drop the batch axis
      if (shape->empty()) return ctx.Error("Scan-8 input without a batch axis");
      batch = shape->front();
      shape->erase(shape->begin());
    }
    if (i < num_state) {
      state_inputs.push_back(static_cast<size_t>(i));
    } else if (shape) {
      int64_t axis_attr = v8 ? 0 : (static_cast<size_t>(i - num_state) < in_axes.size() ? in_axes[static_cast<size_t>(i - num_state)] : 0);
      auto axis = NormalizeAxis(axis_attr, static_cast<int64_t>(shape->size()));
      if (!axis) return ctx.Error("Scan input axis out of range");
      seq_len = (*shape)[static_cast<size_t>(*axis)];
      shape->erase(shape->begin() + *axis);
    }
    SetBodyInput(ctx, body, i, TensorType(ctx, elem, shape));
  }
  NUPHAR_ASSIGN_OR_RETURN(auto child, ctx.graph().InferSubgraph(body, state_inputs));
  for (size_t k = 0; k < ctx.NumOutputs(); ++k) {
    int32_t elem = 0;
    auto shape = BodyOutputShape(ctx, *body, static_cast<int>(k), &elem);
    if (shape && static_cast<int>(k) >= num_state) {
      size_t scan_k = k - static_cast<size_t>(num_state);
      int64_t axis_attr = scan_k < out_axes.size() ? out_axes[scan_k] : 0;
      auto axis = NormalizeAxis(axis_attr, static_cast<int64_t>(shape->size()) + 1);
      if (!axis) return ctx.Error("Scan output axis out of range");
      shape->insert(shape->begin() + (v8 ? 0 : *axis), seq_len ? seq_len : SymDim(ctx.NewSymbol(k, 0)));
    }
    if (shape && v8) shape->insert(shape->begin(), batch);
    ctx.SetOutput(k, elem, shape);
  }
  return Status::OK();
}

}  // namespace

void RegisterControlFlowHandlers(HandlerTable& t) {
  t.Add("", "If", HandleIf);
  t.Add("", "Loop", HandleLoop);
  t.Add("", "Scan", HandleScan);
}

}  // namespace nuphar::shape_infer
