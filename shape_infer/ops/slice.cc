// Slice (spec §3.4, with exactly the S3 fixes): per axis
//   e = norm(end), clamped to the dim (Min(e, dim) when undecidable);
//   s = norm(start), clamped to dim - 1 for a negative step;
//   out = Max(0, floor((e - s + t -/+ 1) / t)).
// Value tracking: Python slicing of a tracked tensor of any rank with literal starts/ends/steps.
#include <onnx/onnx_pb.h>

#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

using sym::Expr;
using sym::Truth;

// Python-style negative index: x + dim when provably negative (literals beyond -int_max stay).
Expr NormIndex(NodeContext& ctx, const Expr& x, const Expr& dim) {
  if (sym::IsNonNegative(x) == Truth::kTrue) return x;
  if (sym::IsNonNegative(x) == Truth::kFalse) {
    if (x.IsNumber() && x.AsNumber() <= sym::Rational(-ctx.options().int_max)) return x;
    return dim + x;
  }
  ctx.Warn("Cannot determine if " + x.ToString() + " < 0");
  return x;
}

std::optional<Expr> SliceDim(NodeContext& ctx, const Expr& dim, Expr s, Expr e, const Expr& t) {
  const int64_t int_max = ctx.options().int_max;
  Truth step_positive = sym::IsPositive(t);
  if (step_positive == Truth::kUnknown) return std::nullopt;  // undecidable step sign: fresh symbol
  const bool forward = step_positive == Truth::kTrue;
  e = NormIndex(ctx, e, dim);
  if (e.IsNumber()) {
    sym::Rational ev = e.AsNumber();
    if (ev >= sym::Rational(int_max)) {
      e = dim;
    } else if (ev <= sym::Rational(-int_max)) {
      e = Expr(-1);
    } else if (dim.IsNumber()) {
      sym::Rational lo = forward ? sym::Rational(0) : sym::Rational(-1);
      sym::Rational hi = forward ? dim.AsNumber() : dim.AsNumber() - sym::Rational(1);
      e = Expr(std::max(lo, std::min(ev, hi)));
    } else if (ev > sym::Rational(1)) {
      e = sym::Min({e, dim});
    }
  } else if (dim.IsNumber()) {
    e = sym::Min({e, dim});
  } else if (sym::ProveLE(e, dim) != Truth::kTrue) {
    if (sym::ProveLT(dim, e) == Truth::kTrue) {
      e = dim;
    } else {
      e = sym::Min({e, dim});
    }
  }
  s = NormIndex(ctx, s, dim);
  if (dim.IsNumber() && s.IsNumber()) {
    sym::Rational hi = forward ? dim.AsNumber() : dim.AsNumber() - sym::Rational(1);
    s = Expr(std::max(sym::Rational(0), std::min(s.AsNumber(), hi)));
  } else if (!forward) {
    s = sym::Min({s, dim - 1});
  }
  Expr out = sym::FloorDiv(e - s + t + (forward ? -1 : 1), t);
  return sym::Max({Expr(0), out});
}

// Python's slice.indices() for a literal list length.
std::vector<int64_t> PySliceIndices(int64_t len, int64_t start, int64_t end, int64_t step) {
  auto adjust = [&](int64_t v, bool is_start) {
    if (v < 0) v += len;
    int64_t lo = step < 0 ? -1 : 0, hi = step < 0 ? len - 1 : len;
    (void)is_start;
    return std::clamp(v, lo, hi);
  };
  int64_t s = adjust(start, true), e = adjust(end, false);
  std::vector<int64_t> idx;
  if (step > 0) for (int64_t i = s; i < e; i += step) idx.push_back(i);
  else for (int64_t i = s; i > e; i += step) idx.push_back(i);
  return idx;
}

// Tracks the value of a slice of a tracked tensor of any rank (the S3 fix of "1-D list data, axes
// == [0]"): every sliced axis needs literal start/end/step; each axis keeps the indices Python's
// slice.indices() selects, and the output is their row-major cartesian product. Needed e.g. by
// PyTorch's exported F.pad, whose pads are Reshape([-1, 2]) -> Slice(step -1) -> Transpose.
void TrackSliceValue(NodeContext& ctx, const std::vector<int64_t>& axes, const std::vector<Expr>& starts,
                     const std::vector<Expr>& ends, const std::vector<Expr>& steps) {
  const TrackedValue* v = ctx.InputValue(0);
  if (!v || v->dims.empty()) return;
  int64_t count = 1;
  for (int64_t d : v->dims)
    if (d < 0 || __builtin_mul_overflow(count, d, &count)) return;
  if (count != static_cast<int64_t>(v->values.size())) return;
  const size_t rank = v->dims.size();
  std::vector<std::vector<int64_t>> kept(rank);
  for (size_t a = 0; a < rank; ++a)
    for (int64_t i = 0; i < v->dims[a]; ++i) kept[a].push_back(i);
  for (size_t k = 0; k < axes.size(); ++k) {
    auto s = starts[k].AsInt(), e = ends[k].AsInt(), t = steps[k].AsInt();
    if (!s || !e || !t || *t == 0 || axes[k] < 0 || static_cast<size_t>(axes[k]) >= rank) return;
    const size_t axis = static_cast<size_t>(axes[k]);
    kept[axis] = PySliceIndices(v->dims[axis], *s, *e, *t);
  }
  TrackedValue out;
  out.is_float = v->is_float;
  for (const auto& idx : kept) out.dims.push_back(static_cast<int64_t>(idx.size()));
  for (const auto& idx : kept)
    if (idx.empty()) {
      ctx.SetOutputValue(0, std::move(out));
      return;
    }
  std::vector<int64_t> strides(rank, 1);
  for (size_t a = rank; a-- > 1;) strides[a - 1] = strides[a] * v->dims[a];
  std::vector<size_t> pos(rank, 0);  // odometer over the kept indices
  while (true) {
    int64_t src = 0;
    for (size_t a = 0; a < rank; ++a) src += kept[a][pos[a]] * strides[a];
    out.values.push_back(v->values[static_cast<size_t>(src)]);
    size_t a = rank;
    while (a-- > 0 && ++pos[a] == kept[a].size()) pos[a] = 0;
    if (a == SIZE_MAX) break;
  }
  ctx.SetOutputValue(0, std::move(out));
}

std::optional<std::vector<Expr>> ExprsOfInts(const std::optional<std::vector<int64_t>>& v) {
  if (!v) return std::nullopt;
  return std::vector<Expr>(v->begin(), v->end());
}

Status HandleSlice(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  const int64_t rank = static_cast<int64_t>(in->size());
  std::optional<std::vector<Expr>> starts, ends, steps;
  std::optional<std::vector<int64_t>> axes;
  bool axes_given = false;
  if (ctx.Opset() <= 9) {
    starts = ExprsOfInts(ctx.AttrInts("starts"));
    ends = ExprsOfInts(ctx.AttrInts("ends"));
    axes = ctx.AttrInts("axes");
    axes_given = axes.has_value();
  } else {
    starts = ctx.InputExprs(1);
    ends = ctx.InputExprs(2);
    axes_given = ctx.HasInput(3);
    if (axes_given) axes = ctx.InputInts(3);
    if (ctx.HasInput(4)) steps = ctx.InputExprs(4);
  }
  const auto* known = starts ? &*starts : (ends ? &*ends : nullptr);
  if (!axes_given && known) {
    axes = std::vector<int64_t>();
    for (size_t i = 0; i < known->size(); ++i) axes->push_back(static_cast<int64_t>(i));
  }
  if (axes)
    for (auto& a : *axes) {
      auto n = NormalizeAxis(a, rank);
      if (!n) return ctx.Error("Slice axis " + std::to_string(a) + " out of range");
      a = *n;
    }
  SymShape out = *in;
  if (!starts || !ends || (ctx.HasInput(4) && !steps) || (axes_given && !axes)) {
    for (size_t i = 0; i < out.size(); ++i)
      if (!axes || std::find(axes->begin(), axes->end(), static_cast<int64_t>(i)) != axes->end())
        out[i] = ctx.NewSymbol(0, i);
    ctx.SetOutput(0, ctx.InputElemType(0), out);
    return Status::OK();
  }
  if (!steps) steps = std::vector<Expr>(starts->size(), Expr(1));
  if (starts->size() != axes->size() || ends->size() != axes->size() || steps->size() != axes->size())
    return ctx.Error("Slice starts/ends/axes/steps lengths differ");
  for (size_t k = 0; k < axes->size(); ++k) {
    size_t axis = static_cast<size_t>((*axes)[k]);
    SymDim d;
    if (out[axis]) d = GuardOverflow([&] { return SliceDim(ctx, *out[axis], (*starts)[k], (*ends)[k], (*steps)[k]); }).value_or(std::nullopt);
    out[axis] = d ? d : SymDim(ctx.NewSymbol(0, axis));
  }
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  TrackSliceValue(ctx, *axes, *starts, *ends, *steps);
  return Status::OK();
}

}  // namespace

void RegisterSliceHandler(HandlerTable& t) { t.Add("", "Slice", HandleSlice); }

}  // namespace nuphar::shape_infer
