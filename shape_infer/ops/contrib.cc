// com.microsoft ops the original handled (spec §3.2, S4) and ATen embedding.
#include <onnx/onnx_pb.h>

#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

using sym::Expr;

// Attention: [b, s, v_hidden] with v_hidden = qkv_hidden_sizes[2] or bias_dim0 / 3;
// present = past with the sequence dim extended by s (upstream).
Status HandleAttention(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in || in->size() != 3) return Status::OK();
  SymDim hidden;
  if (auto qkv = ctx.AttrInts("qkv_hidden_sizes"); qkv && qkv->size() == 3) {
    hidden = Expr((*qkv)[2]);
  } else if (auto bias = ctx.InputShape(2); bias && bias->size() == 1 && (*bias)[0]) {
    hidden = (*bias)[0]->IsNumber() ? SymDim(Expr((*bias)[0]->AsNumber().Floor() / 3)) : SymDim(sym::Div(*(*bias)[0], 3));
  }
  SymShape out = *in;
  out[2] = hidden;
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  if (ctx.HasOutput(1)) {
    auto past = ctx.InputShape(4);
    if (past && past->size() == 5 && (*past)[3] && (*in)[1]) {
      SymShape present = *past;
      present[3] = *(*past)[3] + *(*in)[1];
      ctx.SetOutput(1, ctx.InputElemType(0), present);
    }
  }
  return Status::OK();
}

Status HandleEmbedLayerNormalization(NodeContext& ctx) {
  auto ids = ctx.InputShape(0), word = ctx.InputShape(2);
  if (!ids || ids->size() != 2) return Status::OK();
  SymDim hidden = word && word->size() == 2 ? (*word)[1] : std::nullopt;
  int32_t elem = ctx.InputElemType(2) ? ctx.InputElemType(2) : ctx.InputElemType(0);
  SymShape out{(*ids)[0], (*ids)[1], hidden};
  ctx.SetOutput(0, elem, out);
  ctx.SetOutput(1, onnx::TensorProto::INT32, SymShape{(*ids)[0]});
  if (ctx.HasOutput(2)) ctx.SetOutput(2, elem, out);
  return Status::OK();
}

Status HandleSkipLayerNormalization(NodeContext& ctx) {
  NUPHAR_RETURN_IF_ERROR(HandleSameAsInput0(ctx));
  if (ctx.HasOutput(3))
    if (auto s = ctx.InputShape(0)) ctx.SetOutput(3, ctx.InputElemType(0), s);
  return Status::OK();
}

// aten::embedding(weight, indices): indices shape + weight[1:].
Status HandleEmbedding(NodeContext& ctx) {
  auto weight = ctx.InputShape(0), idx = ctx.InputShape(1);
  if (!weight || !idx || weight->empty()) return Status::OK();
  SymShape out = *idx;
  out.insert(out.end(), weight->begin() + 1, weight->end());
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

Status HandleATenOp(NodeContext& ctx) {
  if (ctx.AttrString("name", "") == "aten::embedding" || ctx.AttrString("operator", "") == "embedding")
    return HandleEmbedding(ctx);
  return Status::OK();
}

}  // namespace

void RegisterContribHandlers(HandlerTable& t) {
  const std::string ms = "com.microsoft";
  t.Add(ms, "Attention", HandleAttention);
  t.Add(ms, "EmbedLayerNormalization", HandleEmbedLayerNormalization);
  t.Add(ms, "SkipLayerNormalization", HandleSkipLayerNormalization);
  for (const char* op : {"BiasGelu", "FastGelu", "Gelu", "LayerNormalization", "LongformerAttention"})
    t.Add(ms, op, HandleSameAsInput0);
  t.Add(ms, "ATenOp", HandleATenOp);
  t.Add("org.pytorch.aten", "ATen", HandleATenOp);
}

}  // namespace nuphar::shape_infer
