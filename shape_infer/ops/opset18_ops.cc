// Handlers for ops libonnx 1.12 has no schema for (added in opsets 18-21), so nothing else
// infers their outputs: Mish, Gelu-20, GroupNormalization, BitwiseAnd/Or/Xor/Not,
// CenterCropPad, Col2Im and DFT-20 (graph/opset_schema.h lists them); and STFT-17, whose
// libonnx 1.12 inference counts one frame too many when (length - frame) % step != 0.
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
    for (int64_t b : *block)
      if (b <= 0 || __builtin_mul_overflow(prod, b, &prod)) return ctx.Error("Col2Im block_shape must be positive and addressable");
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

// DFT (axis as attribute at 17, default 1; as input 2 from 20, default -2): the axis dim becomes dft_length (or its onesided half
// plus one), the last dim 2.
Status HandleDft(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in || in->size() < 2) return Status::OK();
  const int64_t rank = static_cast<int64_t>(in->size());
  int64_t axis = ctx.Opset() < 20 ? ctx.AttrInt("axis", 1) : -2;  // DFT-17: an attribute
  if (ctx.Opset() >= 20 && ctx.HasInput(2)) {
    auto a = ctx.InputInts(2);
    if (!a || a->size() != 1) {
      ctx.SetOutput(0, ctx.InputElemType(0), ctx.NewSymbols(0, in->size()));
      return Status::OK();
    }
    axis = (*a)[0];
  }
  auto n = NormalizeAxis(axis, rank);
  if (!n || *n >= rank - 1) return ctx.Error("DFT axis is not a signal axis");
  SymShape out = *in;
  SymDim length = (*in)[static_cast<size_t>(*n)];
  if (ctx.HasInput(1)) {
    auto l = ctx.InputExprs(1);
    length = l && l->size() == 1 ? SymDim((*l)[0]) : SymDim();
  }
  if (length && ctx.AttrInt("onesided", 0)) length = sym::FloorDiv(*length, Expr(2)) + 1;
  out[static_cast<size_t>(*n)] = length ? length : SymDim(ctx.NewSymbol(0, static_cast<size_t>(*n)));
  out.back() = Expr(2);
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

// STFT: [batch, length, 1|2] -> [batch, floor((length - frame) / step) + 1, bins, 2], frame from
// input 3 or the window's length, bins = frame / 2 + 1 when onesided (the default).
Status HandleStft(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in || in->size() != 3) return Status::OK();
  auto step = ctx.InputExprs(1);
  SymDim frame;
  if (ctx.HasInput(3)) {
    if (auto f = ctx.InputExprs(3); f && f->size() == 1) frame = (*f)[0];
  } else if (auto w = ctx.InputShape(2); w && w->size() == 1) {
    frame = (*w)[0];
  }
  SymShape out{(*in)[0], SymDim(), SymDim(), Expr(2)};
  if (frame && step && step->size() == 1 && (*in)[1])
    out[1] = GuardOverflow([&] { return sym::FloorDiv(*(*in)[1] - *frame, (*step)[0]) + 1; });
  if (frame) out[2] = ctx.AttrInt("onesided", 1) ? sym::FloorDiv(*frame, Expr(2)) + 1 : *frame;
  for (size_t i = 1; i < 3; ++i)
    if (!out[i]) out[i] = ctx.NewSymbol(0, i);
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

}  // namespace

void RegisterOpset18Handlers(HandlerTable& t) {
  for (const char* op : {"Mish", "Gelu", "GroupNormalization", "BitwiseNot"}) t.Add("", op, HandleLikeInput0);
  for (const char* op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"}) t.Add("", op, HandleBitwiseBinary);
  t.Add("", "CenterCropPad", HandleCenterCropPad);
  t.Add("", "Col2Im", HandleCol2Im);
  // DFT-17 is libonnx's; from 20 only this handler runs (LibOnnxInfersOp), so it must serve both.
  t.Add("", "DFT", HandleDft);
  t.Add("", "STFT", HandleStft);
}

}  // namespace nuphar::shape_infer
