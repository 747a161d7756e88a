// Shape-rearranging ops: Reshape, Flatten, Squeeze, Unsqueeze, Transpose, Expand, Tile (§3.1).
#include <onnx/onnx_pb.h>

#include <algorithm>

#include "graph/tensor_data.h"
#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

// Reshape: 0 copies the input dim (unless allowzero), -1 is total / product(others).
Status HandleReshape(NodeContext& ctx) {
  int32_t elem = ctx.InputElemType(0);
  auto in = ctx.InputShape(0);
  std::optional<std::vector<sym::Expr>> target;
  if (ctx.Opset() < 5) {
    if (auto attr = ctx.AttrInts("shape")) target = std::vector<sym::Expr>(attr->begin(), attr->end());
  } else {
    target = ctx.InputExprs(1);
  }
  if (!target) {
    if (auto rank = ctx.ShapeInputLength(1)) ctx.SetOutput(0, elem, ctx.NewSymbols(0, *rank));
    PassValue(ctx);
    return Status::OK();
  }
  const bool allowzero = ctx.AttrInt("allowzero", 0) != 0;
  SymShape out;
  std::optional<size_t> infer_at;
  sym::Expr known_product(1);
  bool product_known = true;
  for (size_t i = 0; i < target->size(); ++i) {
    const sym::Expr& t = (*target)[i];
    if (t == sym::Expr(-1)) {
      infer_at = i;
      out.emplace_back(std::nullopt);
      continue;
    }
    SymDim d = t;
    if (t == sym::Expr(0) && !allowzero) d = in && i < in->size() ? (*in)[i] : std::nullopt;
    out.push_back(d);
    if (d) known_product = known_product * *d;
    else product_known = false;
  }
  if (infer_at && in && product_known) {
    if (SymDim total = ShapeProduct(*in))
      out[*infer_at] = GuardOverflow([&] { return sym::FloorDiv(*total, known_product); });
  }
  for (size_t i = 0; i < out.size(); ++i)
    if (!out[i]) out[i] = ctx.NewSymbol(0, i);
  ctx.SetOutput(0, elem, out);
  PassValue(ctx);
  return Status::OK();
}

Status HandleFlatten(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  int64_t rank = static_cast<int64_t>(in->size());
  int64_t axis = ctx.AttrInt("axis", 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis > rank) return ctx.Error("Flatten axis out of range");
  SymDim outer = ShapeProduct(*in, 0, static_cast<size_t>(axis));
  SymDim inner = ShapeProduct(*in, static_cast<size_t>(axis));
  ctx.SetOutput(0, ctx.InputElemType(0), SymShape{outer, inner});
  return Status::OK();
}

std::optional<std::vector<int64_t>> AxesOf(NodeContext& ctx, int attr_before_opset) {
  if (ctx.Opset() < attr_before_opset) return ctx.AttrInts("axes");
  if (!ctx.HasInput(1)) return std::nullopt;
  return ctx.InputInts(1);
}

// Squeeze without axes drops literal 1s and keeps symbolic dims (assumed != 1, warned).
Status HandleSqueeze(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  int64_t rank = static_cast<int64_t>(in->size());
  bool has_axes_input = ctx.Opset() >= 13 && ctx.HasInput(1);
  auto axes = AxesOf(ctx, 13);
  SymShape out;
  if (!axes) {
    if (has_axes_input) return Status::OK();  // dynamic axes: keep ONNX's result
    for (const auto& d : *in) {
      if (d && *d == sym::Expr(1)) continue;
      if (!d || !d->IsNumber()) ctx.Warn("Squeeze without axes assumes symbolic dim " + (d ? d->ToString() : "?") + " != 1");
      out.push_back(d);
    }
  } else {
    std::vector<bool> drop(in->size(), false);
    for (int64_t a : *axes) {
      auto n = NormalizeAxis(a, rank);
      if (!n) return ctx.Error("Squeeze axis " + std::to_string(a) + " out of range");
      const SymDim& d = (*in)[static_cast<size_t>(*n)];
      if (d && d->IsNumber() && *d != sym::Expr(1)) return ctx.Error("Squeeze of a dim that is not 1");
      if (d && !d->IsNumber()) ctx.Warn("Squeeze assumes symbolic dim " + d->ToString() + " == 1");
      drop[static_cast<size_t>(*n)] = true;
    }
    for (size_t i = 0; i < in->size(); ++i)
      if (!drop[i]) out.push_back((*in)[i]);
  }
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  PassValue(ctx);
  return Status::OK();
}

// Unsqueeze computes its own shape (upstream), so axes from Constant nodes work (§6 item 2).
Status HandleUnsqueeze(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  auto axes = AxesOf(ctx, 13);
  if (in && axes) {
    int64_t out_rank = static_cast<int64_t>(in->size() + axes->size());
    std::vector<bool> inserted(static_cast<size_t>(out_rank), false);
    for (int64_t a : *axes) {
      auto n = NormalizeAxis(a, out_rank);
      if (!n) return ctx.Error("Unsqueeze axis " + std::to_string(a) + " out of range");
      inserted[static_cast<size_t>(*n)] = true;
    }
    SymShape out;
    size_t k = 0;
    for (int64_t i = 0; i < out_rank; ++i) {
      if (inserted[static_cast<size_t>(i)]) out.emplace_back(sym::Expr(1));
      else if (k < in->size()) out.push_back((*in)[k++]);
    }
    ctx.SetOutput(0, ctx.InputElemType(0), out);
  }
  PassValue(ctx);
  return Status::OK();
}

// Transpose: value tracking only (reshape the list by the input shape, permute, flatten).
Status HandleTranspose(NodeContext& ctx) {
  const TrackedValue* v = ctx.InputValue(0);
  auto in = ctx.InputShape(0);
  if (!v || !in) return Status::OK();
  std::vector<int64_t> dims;
  for (const auto& d : *in) {
    if (!d || !d->AsInt()) return Status::OK();
    dims.push_back(*d->AsInt());
  }
  size_t rank = dims.size();
  std::vector<int64_t> perm(rank);
  if (auto p = ctx.AttrInts("perm")) perm = *p;
  else for (size_t i = 0; i < rank; ++i) perm[i] = static_cast<int64_t>(rank - 1 - i);
  if (perm.size() != rank) return Status::OK();
  // Only a permutation of 0..rank-1 of non-negative dims is tracked (a malformed perm read past
  // the dims: found by fuzz_session_create).
  std::vector<char> seen(rank, 0);
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[static_cast<size_t>(p)]) return Status::OK();
    seen[static_cast<size_t>(p)] = 1;
  }
  for (int64_t d : dims)
    if (d < 0) return Status::OK();
  if (NumElements(dims) != static_cast<int64_t>(v->values.size())) return Status::OK();
  std::vector<int64_t> out_dims(rank), in_strides(rank, 1);
  for (size_t i = rank; i-- > 1;) in_strides[i - 1] = in_strides[i] * dims[i];
  for (size_t i = 0; i < rank; ++i) out_dims[i] = dims[static_cast<size_t>(perm[i])];
  TrackedValue out;
  out.dims = out_dims;
  out.is_float = v->is_float;
  std::vector<int64_t> idx(rank, 0);
  for (size_t n = 0; n < v->values.size(); ++n) {
    int64_t src = 0;
    for (size_t i = 0; i < rank; ++i) src += idx[i] * in_strides[static_cast<size_t>(perm[i])];
    out.values.push_back(v->values[static_cast<size_t>(src)]);
    for (size_t i = rank; i-- > 0;) {
      if (++idx[i] < out_dims[i]) break;
      idx[i] = 0;
    }
  }
  ctx.SetOutputValue(0, std::move(out));
  return Status::OK();
}

Status HandleExpand(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  auto target = ctx.InputExprs(1);
  if (in && target) {
    ctx.SetOutput(0, ctx.InputElemType(0), ctx.Broadcast(*in, ToShape(*target)));
  } else if (auto target_rank = ctx.ShapeInputLength(1); in && target_rank) {
    // Dynamic target: the rank is known, every dim may change.
    size_t rank = std::max<size_t>(in->size(), *target_rank);
    ctx.SetOutput(0, ctx.InputElemType(0), ctx.NewSymbols(0, rank));
  }
  return Status::OK();
}

// Tile: dims x repeats; unknown repeats give fresh symbols (upstream; the original crashed).
Status HandleTile(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  auto repeats = ctx.InputExprs(1);
  SymShape out;
  for (size_t i = 0; i < in->size(); ++i) {
    if (repeats && repeats->size() == in->size() && (*in)[i]) out.emplace_back(*(*in)[i] * (*repeats)[i]);
    else out.emplace_back(ctx.NewSymbol(0, i));
  }
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

}  // namespace

void RegisterReshapeHandlers(HandlerTable& t) {
  t.Add("", "Reshape", HandleReshape);
  t.Add("", "Flatten", HandleFlatten);
  t.Add("", "Squeeze", HandleSqueeze);
  t.Add("", "Unsqueeze", HandleUnsqueeze);
  t.Add("", "Transpose", HandleTranspose);
  t.Add("", "Expand", HandleExpand);
  t.Add("", "Tile", HandleTile);
}

}  // namespace nuphar::shape_infer
