// Elementwise ops: shapes come from ONNX; the handlers track values of small integer tensors
// (spec §2.6): + - * Div (floor for integers, exact for floats, §4.6), Neg, Floor, Ceil,
// Max/Min (int_max rule), Equal (mathematical), Not (literals), Where, Cast, Identity.
#include <onnx/onnx_pb.h>

#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {

void PassValue(NodeContext& ctx, size_t in, size_t out) {
  const TrackedValue* v = ctx.InputValue(in);
  if (!v) return;
  TrackedValue copy = *v;
  if (auto shape = ctx.OutputShape(out)) {
    std::vector<int64_t> dims;
    int64_t n = 1;
    for (const auto& d : *shape) {
      auto i = d ? d->AsInt() : std::nullopt;
      if (!i) return ctx.SetOutputValue(out, std::move(copy));
      dims.push_back(*i);
      if (__builtin_mul_overflow(n, *i, &n)) return ctx.SetOutputValue(out, std::move(copy));
    }
    if (static_cast<size_t>(n) == copy.values.size()) copy.dims = dims;
  }
  ctx.SetOutputValue(out, std::move(copy));
}

bool IsBoundless(const sym::Expr& e, int64_t int_max) {
  if (!e.IsNumber()) return false;
  sym::Rational r = e.AsNumber();
  return r >= sym::Rational(int_max) || r <= sym::Rational(-int_max);
}

namespace {

using BinaryFn = std::optional<sym::Expr> (*)(const sym::Expr&, const sym::Expr&, bool is_float, int64_t int_max);

// Broadcasts equal sizes, or one side with a single element (the original's list rules).
Status TrackBinary(NodeContext& ctx, BinaryFn fn) {
  if (ctx.NumInputs() != 2) return Status::OK();
  const TrackedValue* a = ctx.InputValue(0);
  const TrackedValue* b = ctx.InputValue(1);
  if (!a || !b) return Status::OK();
  size_t n = std::max(a->values.size(), b->values.size());
  if (a->values.size() != n && a->values.size() != 1) return Status::OK();
  if (b->values.size() != n && b->values.size() != 1) return Status::OK();
  TrackedValue out;
  out.dims = a->values.size() == n ? a->dims : b->dims;
  if (a->values.size() == b->values.size() && b->dims.size() > a->dims.size()) out.dims = b->dims;
  out.is_float = a->is_float || b->is_float;
  for (size_t i = 0; i < n; ++i) {
    auto r = fn(a->values[a->values.size() == 1 ? 0 : i], b->values[b->values.size() == 1 ? 0 : i], out.is_float,
                ctx.options().int_max);
    if (!r) return Status::OK();
    out.values.push_back(std::move(*r));
  }
  ctx.SetOutputValue(0, std::move(out));
  return Status::OK();
}

Status HandleAdd(NodeContext& ctx) {
  return TrackBinary(ctx, [](const sym::Expr& a, const sym::Expr& b, bool, int64_t) -> std::optional<sym::Expr> { return a + b; });
}
Status HandleSub(NodeContext& ctx) {
  return TrackBinary(ctx, [](const sym::Expr& a, const sym::Expr& b, bool, int64_t) -> std::optional<sym::Expr> { return a - b; });
}
Status HandleMul(NodeContext& ctx) {
  return TrackBinary(ctx, [](const sym::Expr& a, const sym::Expr& b, bool, int64_t) -> std::optional<sym::Expr> { return a * b; });
}
Status HandleDiv(NodeContext& ctx) {
  return TrackBinary(ctx, [](const sym::Expr& a, const sym::Expr& b, bool is_float, int64_t) -> std::optional<sym::Expr> {
    if (b.IsNumber() && b.AsNumber().IsZero()) return std::nullopt;
    return is_float ? sym::Div(a, b) : sym::FloorDiv(a, b);
  });
}
Status HandleMax(NodeContext& ctx) {
  return TrackBinary(ctx, [](const sym::Expr& a, const sym::Expr& b, bool, int64_t int_max) -> std::optional<sym::Expr> {
    if (b.IsNumber() && b.AsNumber() < sym::Rational(-int_max)) return a;
    if (a.IsNumber() && a.AsNumber() < sym::Rational(-int_max)) return b;
    return sym::Max({a, b});
  });
}
Status HandleMin(NodeContext& ctx) {
  return TrackBinary(ctx, [](const sym::Expr& a, const sym::Expr& b, bool, int64_t int_max) -> std::optional<sym::Expr> {
    if (b.IsNumber() && b.AsNumber() > sym::Rational(int_max)) return a;
    if (a.IsNumber() && a.AsNumber() > sym::Rational(int_max)) return b;
    return sym::Min({a, b});
  });
}
// Equal compares canonical forms: equal forms are equal values; two different symbolic forms, or
// a plain symbol and a literal, count as different (the original's structural rule: a free dim
// such as `batch` is not assumed to be any particular size; with b*(s+1) == b*s + b now equal, S1).
// A computed form against a literal is decided only when provable: floor((s - 384)/256) + 1 may
// well equal 1, and guessing "different" sends an If down a branch the model cannot run
// (silero_vad_16k_op15's `x.squeeze(-1) if T == 1`). Unknown instead lets the If fuse its branches.
Status HandleEqual(NodeContext& ctx) {
  return TrackBinary(ctx, [](const sym::Expr& a, const sym::Expr& b, bool, int64_t) -> std::optional<sym::Expr> {
    if (a == b) return sym::Expr(1);
    if (a.IsNumber() == b.IsNumber() || a.IsSymbol() || b.IsSymbol()) return sym::Expr(0);
    if (sym::IsPositive(a - b) == sym::Truth::kTrue || sym::IsPositive(b - a) == sym::Truth::kTrue)
      return sym::Expr(0);
    return std::nullopt;
  });
}

using UnaryFn = std::optional<sym::Expr> (*)(const sym::Expr&);

Status TrackUnary(NodeContext& ctx, UnaryFn fn) {
  const TrackedValue* a = ctx.InputValue(0);
  if (!a) return Status::OK();
  TrackedValue out = *a;
  for (auto& v : out.values) {
    auto r = fn(v);
    if (!r) return Status::OK();
    v = std::move(*r);
  }
  ctx.SetOutputValue(0, std::move(out));
  return Status::OK();
}

Status HandleNeg(NodeContext& ctx) { return TrackUnary(ctx, [](const sym::Expr& e) -> std::optional<sym::Expr> { return -e; }); }
Status HandleFloor(NodeContext& ctx) { return TrackUnary(ctx, [](const sym::Expr& e) -> std::optional<sym::Expr> { return sym::Floor(e); }); }
Status HandleCeil(NodeContext& ctx) { return TrackUnary(ctx, [](const sym::Expr& e) -> std::optional<sym::Expr> { return sym::Ceil(e); }); }
// Not of a literal boolean. PyTorch exports `if x.dim() != 3` as If(Cast(Not(Equal(Size(Shape(x)),
// 3)))), so without it the If condition stays unknown and branches of different rank cannot fuse.
Status HandleNot(NodeContext& ctx) {
  return TrackUnary(ctx, [](const sym::Expr& e) -> std::optional<sym::Expr> {
    if (!e.IsNumber()) return std::nullopt;
    return sym::Expr(e.AsNumber().IsZero() ? 1 : 0);
  });
}

Status HandleWhere(NodeContext& ctx) {
  const TrackedValue* c = ctx.InputValue(0);
  const TrackedValue* x = ctx.InputValue(1);
  const TrackedValue* y = ctx.InputValue(2);
  if (!c || !x || !y || !c->AllLiteral()) return Status::OK();
  size_t n = std::max({c->values.size(), x->values.size(), y->values.size()});
  for (const TrackedValue* v : {c, x, y})
    if (v->values.size() != n && v->values.size() != 1) return Status::OK();
  TrackedValue out;
  out.dims = x->values.size() == n ? x->dims : (y->values.size() == n ? y->dims : c->dims);
  out.is_float = x->is_float || y->is_float;
  auto at = [n](const TrackedValue* v, size_t i) { return v->values[v->values.size() == n ? i : 0]; };
  for (size_t i = 0; i < n; ++i) out.values.push_back(at(c, i).AsNumber().IsZero() ? at(y, i) : at(x, i));
  ctx.SetOutputValue(0, std::move(out));
  return Status::OK();
}

bool IsIntegerType(int32_t t) {
  return t == onnx::TensorProto::INT64 || t == onnx::TensorProto::INT32 || t == onnx::TensorProto::INT16 ||
         t == onnx::TensorProto::INT8 || t == onnx::TensorProto::UINT8 || t == onnx::TensorProto::UINT16 ||
         t == onnx::TensorProto::UINT32 || t == onnx::TensorProto::UINT64;
}

// Cast to an integer type truncates toward zero (spec §4.6); to a float type keeps the value.
Status HandleCast(NodeContext& ctx) {
  const TrackedValue* a = ctx.InputValue(0);
  if (!a) return Status::OK();
  int32_t to = static_cast<int32_t>(ctx.AttrInt("to", 0));
  TrackedValue out = *a;
  if (IsIntegerType(to) && a->is_float) {
    for (auto& v : out.values) {
      if (v.IsNumber()) v = sym::Expr(v.AsNumber().Trunc());
      else if (sym::IsNonNegative(v) == sym::Truth::kTrue) v = sym::Floor(v);
      else if (sym::IsNonNegative(-v) == sym::Truth::kTrue) v = sym::Ceil(v);
      else return Status::OK();
    }
    out.is_float = false;
  } else if (to == onnx::TensorProto::BOOL) {  // literal values only: nonzero -> 1
    for (auto& v : out.values) {
      if (!v.IsNumber()) return Status::OK();
      v = sym::Expr(v.AsNumber().IsZero() ? 0 : 1);
    }
    out.is_float = false;
  } else if (to == onnx::TensorProto::FLOAT || to == onnx::TensorProto::DOUBLE || to == onnx::TensorProto::FLOAT16) {
    out.is_float = true;
  } else if (!IsIntegerType(to)) {
    return Status::OK();
  }
  ctx.SetOutputValue(0, std::move(out));
  return Status::OK();
}

Status HandleIdentity(NodeContext& ctx) {
  if (auto s = ctx.InputShape(0); s && ctx.InputElemType(0) != 0) ctx.SetOutput(0, ctx.InputElemType(0), s);
  else if (const onnx::TypeProto* t = ctx.InputType(0)) ctx.SetOutputType(0, *t);
  PassValue(ctx);
  return Status::OK();
}

// Same shape and type as input 0, no tracked value (Reciprocal; upstream's pass-through list).
Status HandleSameShape(NodeContext& ctx) {
  if (auto s = ctx.InputShape(0); s && ctx.InputElemType(0) != 0) ctx.SetOutput(0, ctx.InputElemType(0), s);
  return Status::OK();
}

}  // namespace

void RegisterElementwiseHandlers(HandlerTable& t) {
  t.Add("", "Add", HandleAdd);
  t.Add("", "Sub", HandleSub);
  t.Add("", "Mul", HandleMul);
  t.Add("", "Div", HandleDiv);
  t.Add("", "Max", HandleMax);
  t.Add("", "Min", HandleMin);
  t.Add("", "Equal", HandleEqual);
  t.Add("", "Neg", HandleNeg);
  t.Add("", "Floor", HandleFloor);
  t.Add("", "Ceil", HandleCeil);
  t.Add("", "Not", HandleNot);
  t.Add("", "Where", HandleWhere);
  t.Add("", "Cast", HandleCast);
  t.Add("", "Identity", HandleIdentity);
  t.Add("", "Reciprocal", HandleSameShape);
}

}  // namespace nuphar::shape_infer
