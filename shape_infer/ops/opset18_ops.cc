// Handlers for ops libonnx 1.12 has no schema for (added in opsets 18-21), so nothing else
// infers their outputs: Mish, Gelu-20, GroupNormalization, BitwiseAnd/Or/Xor/Not,
// CenterCropPad and Col2Im (graph/opset_schema.h lists them).
#include <onnx/onnx_pb.h>

#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

using sym::Expr;

// Output 0 has input 0's shape and type.
Status HandleLikeInput0(NodeContext& ctx) {
  if (auto s = ctx.InputShape(0); s && ctx.InputElemType(0) != 0) ctx.SetOutput(0, ctx.InputElemType(0), s);
  return Status::OK();
}

Status HandleBitwiseBinary(NodeContext& ctx) {
  auto a = ctx.InputShape(0);
  auto b = ctx.InputShape(1);
  if (a && b) ctx.SetOutput(0, ctx.InputElemType(0), ctx.Broadcast(*a, *b));
  return Status::OK();
}

// CenterCropPad: the listed axes (all by default) take the values of input 1.
Status HandleCenterCropPad(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  const int64_t rank = static_cast<int64_t>(in->size());
  std::vector<int64_t> axes = ctx.AttrInts("axes").value_or(std::vector<int64_t>());
  if (axes.empty())
    for (int64_t k = 0; k < rank; ++k) axes.push_back(k);
  SymShape out = *in;
  auto target = ctx.InputExprs(1);
  for (size_t i = 0; i < axes.size(); ++i) {
    auto a = NormalizeAxis(axes[i], rank);
    if (!a) return ctx.Error("CenterCropPad axis out of range");
    const size_t k = static_cast<size_t>(*a);
    out[k] = target && target->size() == axes.size() ? SymDim((*target)[i]) : SymDim(ctx.NewSymbol(0, k));
  }
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

// Col2Im: [N, C * prod(block_shape), L] -> [N, C, image_shape...].
Status HandleCol2Im(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  auto image = ctx.InputExprs(1);
  auto block = ctx.InputInts(2);
  if (!in || in->size() != 3) return Status::OK();
  SymShape out{(*in)[0]};
  if (block && (*in)[1]) {
    int64_t prod = 1;
    for (int64_t b : *block) prod *= b;
    if (prod <= 0) return ctx.Error("Col2Im block_shape must be positive");
    out.emplace_back(sym::Div(*(*in)[1], Expr(prod)));
  } else {
    out.emplace_back(ctx.NewSymbol(0, 1));
  }
  const size_t spatial = image ? image->size() : (block ? block->size() : 0);
  if (spatial == 0) return Status::OK();
  for (size_t i = 0; i < spatial; ++i) out.emplace_back(image ? SymDim((*image)[i]) : SymDim(ctx.NewSymbol(0, i + 2)));
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

}  // namespace

void RegisterOpset18Handlers(HandlerTable& t) {
  for (const char* op : {"Mish", "Gelu", "GroupNormalization", "BitwiseNot"}) t.Add("", op, HandleLikeInput0);
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) t.Add("", op, HandleBitwiseBinary);
  t.Add("", "CenterCropPad", HandleCenterCropPad);
  t.Add("", "Col2Im", HandleCol2Im);
}

}  // namespace nuphar::shape_infer
