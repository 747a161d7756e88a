// Gather, GatherElements, GatherND, Concat, Split, Pad (spec §3.1, upstream fixes of §6 item 7).
#include <onnx/onnx_pb.h>

#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

using sym::Expr;

// Gather: S0[:axis] + S1 + S0[axis+1:]; values for 1-D data on axis 0 (and scalar data).
Status HandleGather(NodeContext& ctx) {
  auto data = ctx.InputShape(0), idx = ctx.InputShape(1);
  if (!data || !idx) return Status::OK();
  auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), static_cast<int64_t>(data->size()));
  if (!axis) return ctx.Error("Gather axis out of range");
  SymShape out(data->begin(), data->begin() + *axis);
  out.insert(out.end(), idx->begin(), idx->end());
  out.insert(out.end(), data->begin() + *axis + 1, data->end());
  ctx.SetOutput(0, ctx.InputElemType(0), out);

  const TrackedValue* v = ctx.InputValue(0);
  auto indices = ctx.InputInts(1);
  if (v && indices && *axis == 0 && v->dims.size() <= 1) {
    TrackedValue r;
    r.is_float = v->is_float;
    const TrackedValue* iv = ctx.InputValue(1);
    r.dims = iv->dims;
    int64_t n = static_cast<int64_t>(v->values.size());
    for (int64_t i : *indices) {
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Status::OK();
      r.values.push_back(v->values[static_cast<size_t>(i)]);
    }
    ctx.SetOutputValue(0, std::move(r));
  }
  return Status::OK();
}

Status HandleGatherElements(NodeContext& ctx) {
  if (auto idx = ctx.InputShape(1)) ctx.SetOutput(0, ctx.InputElemType(0), idx);
  return Status::OK();
}

// GatherND with batch_dims: S1[:-1] + S0[batch_dims + S1[-1]:].
Status HandleGatherND(NodeContext& ctx) {
  auto data = ctx.InputShape(0), idx = ctx.InputShape(1);
  if (!data || !idx || idx->empty()) return Status::OK();
  int64_t batch = ctx.AttrInt("batch_dims", 0);
  auto last = idx->back() ? idx->back()->AsInt() : std::nullopt;
  SymShape out(idx->begin(), idx->end() - 1);
  if (!last || batch + *last > static_cast<int64_t>(data->size())) return Status::OK();  // keep ONNX / fresh
  out.insert(out.end(), data->begin() + batch + *last, data->end());
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

// Concat: the axis dim is the sum; other dims must agree (merge_symbols).
Status HandleConcat(NodeContext& ctx) {
  std::vector<SymShape> shapes;
  for (size_t i = 0; i < ctx.NumInputs(); ++i) {
    auto s = ctx.InputShape(i);
    if (!s) return Status::OK();
    shapes.push_back(std::move(*s));
  }
  if (shapes.empty()) return Status::OK();
  const int64_t rank = static_cast<int64_t>(shapes[0].size());
  auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), rank);
  if (!axis) return ctx.Error("Concat axis out of range");
  SymShape out(static_cast<size_t>(rank));
  for (int64_t d = 0; d < rank; ++d) {
    std::vector<SymDim> dims;
    for (const auto& s : shapes) {
      if (static_cast<int64_t>(s.size()) != rank) return ctx.Error("Concat inputs of different ranks");
      dims.push_back(s[static_cast<size_t>(d)]);
    }
    if (d == *axis) {
      Expr sum(0);
      bool known = true;
      for (const auto& x : dims) known = known && x, sum = x ? sum + *x : sum;
      out[static_cast<size_t>(d)] = known ? SymDim(sum) : std::nullopt;
    } else {
      out[static_cast<size_t>(d)] = ctx.MergeDims(dims);
    }
  }
  ctx.SetOutput(0, ctx.InputElemType(0), out);

  if (*axis != 0) return Status::OK();
  TrackedValue r;
  for (size_t i = 0; i < ctx.NumInputs(); ++i) {
    const TrackedValue* v = ctx.InputValue(i);
    if (!v || v->dims.size() > 1) return Status::OK();
    r.values.insert(r.values.end(), v->values.begin(), v->values.end());
    r.is_float = r.is_float || v->is_float;
  }
  r.dims = {static_cast<int64_t>(r.values.size())};
  ctx.SetOutputValue(0, std::move(r));
  return Status::OK();
}

// Split: attribute (< 13) or input (>= 13) sizes, or opset-18 num_outputs; without sizes every
// output gets dim / n (an exact rational for symbols, floor for literals, spec §3.1 / §4.6).
Status HandleSplit(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), static_cast<int64_t>(in->size()));
  if (!axis) return ctx.Error("Split axis out of range");
  std::optional<std::vector<Expr>> sizes;
  if (ctx.Opset() < 13) {
    if (auto a = ctx.AttrInts("split")) sizes = std::vector<Expr>(a->begin(), a->end());
  } else if (ctx.HasInput(1)) {
    sizes = ctx.InputExprs(1);
    if (!sizes) {  // dynamic split sizes
      for (size_t j = 0; j < ctx.NumOutputs(); ++j) {
        SymShape out = *in;
        out[static_cast<size_t>(*axis)] = ctx.NewSymbol(j, static_cast<size_t>(*axis));
        ctx.SetOutput(j, ctx.InputElemType(0), out);
      }
      return Status::OK();
    }
  }
  const size_t n = ctx.NumOutputs();
  const SymDim& dim = (*in)[static_cast<size_t>(*axis)];
  for (size_t j = 0; j < n; ++j) {
    SymShape out = *in;
    SymDim d;
    if (sizes && j < sizes->size()) {
      d = (*sizes)[j];
    } else if (dim) {
      if (ctx.Attr("num_outputs")) {  // opset 18: ceil-sized chunks, the last one smaller
        Expr chunk = sym::Ceil(sym::Div(*dim, Expr(static_cast<int64_t>(n))));
        d = j + 1 < n ? chunk : *dim - chunk * Expr(static_cast<int64_t>(n - 1));
      } else if (dim->IsNumber()) {
        d = Expr(dim->AsNumber().Floor() / static_cast<int64_t>(n));
      } else {
        d = sym::Div(*dim, Expr(static_cast<int64_t>(n)));
      }
    }
    out[static_cast<size_t>(*axis)] = d;
    ctx.SetOutput(j, ctx.InputElemType(0), out);
  }
  return Status::OK();
}

// Pad: d + before + after with pads from the attribute (<= 10) or input (>= 11, optional axes).
Status HandlePad(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  const size_t rank = in->size();
  std::optional<std::vector<Expr>> pads;
  if (ctx.Opset() <= 10) {
    if (auto a = ctx.AttrInts("pads")) pads = std::vector<Expr>(a->begin(), a->end());
  } else {
    pads = ctx.InputExprs(1);
  }
  std::vector<int64_t> axes;
  if (ctx.Opset() >= 18 && ctx.HasInput(3)) {
    auto a = ctx.InputInts(3);
    if (!a) pads.reset();
    else
      for (int64_t x : *a) {
        auto n = NormalizeAxis(x, static_cast<int64_t>(rank));
        if (!n) return ctx.Error("Pad axis out of range");
        axes.push_back(*n);
      }
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(static_cast<int64_t>(i));
  }
  SymShape out = *in;
  if (!pads || pads->size() != 2 * axes.size()) {
    for (size_t i = 0; i < rank; ++i) out[i] = ctx.NewSymbol(0, i);
  } else {
    for (size_t k = 0; k < axes.size(); ++k) {
      auto& d = out[static_cast<size_t>(axes[k])];
      if (d) d = *d + (*pads)[k] + (*pads)[k + axes.size()];
    }
  }
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

}  // namespace

void RegisterSliceGatherHandlers(HandlerTable& t) {
  RegisterSliceHandler(t);
  t.Add("", "Gather", HandleGather);
  t.Add("", "GatherElements", HandleGatherElements);
  t.Add("", "GatherND", HandleGatherND);
  t.Add("", "Concat", HandleConcat);
  t.Add("", "Split", HandleSplit);
  t.Add("", "Pad", HandlePad);
}

}  // namespace nuphar::shape_infer
