// Producers of tracked values: Shape, Size, Constant, ConstantOfShape, Range (spec §2.6, §3.1).
#include <onnx/onnx_pb.h>

#include "graph/tensor_data.h"
#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

// Shape with the opset-15 start/end (fixes the original's BUG, §6 item 7).
Status HandleShape(NodeContext& ctx) {
  auto shape = ctx.InputShape(0);
  if (!shape) return Status::OK();
  int64_t rank = static_cast<int64_t>(shape->size());
  int64_t start = ctx.AttrInt("start", 0), end = ctx.AttrInt("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, 0, rank);
  std::vector<sym::Expr> dims;
  for (int64_t i = start; i < end; ++i) {
    if (!(*shape)[static_cast<size_t>(i)]) {
      dims.clear();
      break;
    }
    dims.push_back(*(*shape)[static_cast<size_t>(i)]);
  }
  ctx.SetOutput(0, onnx::TensorProto::INT64, SymShape{sym::Expr(std::max<int64_t>(end - start, 0))});
  if (static_cast<int64_t>(dims.size()) == std::max<int64_t>(end - start, 0)) ctx.SetOutputValue(0, VectorValue(dims));
  return Status::OK();
}

Status HandleSize(NodeContext& ctx) {
  ctx.SetOutput(0, onnx::TensorProto::INT64, SymShape{});
  if (auto shape = ctx.InputShape(0))
    if (SymDim p = ShapeProduct(*shape)) ctx.SetOutputValue(0, ScalarValue(*p));
  return Status::OK();
}

// Constant: value, value_int(s), value_float(s) (the original crashed on the latter, §6 item 6).
Status HandleConstant(NodeContext& ctx) {
  onnx::TensorProto tensor;
  const onnx::AttributeProto* a = nullptr;
  if ((a = ctx.Attr("value"))) {
    tensor = a->t();
  } else if ((a = ctx.Attr("value_int"))) {
    tensor = MakeTensor<int64_t>("", {}, std::vector<int64_t>{a->i()});
  } else if ((a = ctx.Attr("value_ints"))) {
    std::vector<int64_t> v(a->ints().begin(), a->ints().end());
    tensor = MakeTensor<int64_t>("", {static_cast<int64_t>(v.size())}, v);
  } else if ((a = ctx.Attr("value_float"))) {
    tensor = MakeTensor<float>("", {}, std::vector<float>{a->f()});
  } else if ((a = ctx.Attr("value_floats"))) {
    std::vector<float> v(a->floats().begin(), a->floats().end());
    tensor = MakeTensor<float>("", {static_cast<int64_t>(v.size())}, v);
  } else {
    return Status::OK();  // sparse/string constants: ONNX's type only
  }
  SymShape shape;
  for (int64_t d : tensor.dims()) shape.emplace_back(sym::Expr(d));
  ctx.SetOutput(0, tensor.data_type(), shape);
  if (ctx.HasOutput(0)) ctx.graph().SetConstant(ctx.node().output(0), tensor);
  if (auto v = TrackedFromTensor(tensor)) ctx.SetOutputValue(0, std::move(*v));
  return Status::OK();
}

Status HandleConstantOfShape(NodeContext& ctx) {
  int32_t elem = onnx::TensorProto::FLOAT;
  const onnx::AttributeProto* value = ctx.Attr("value");
  if (value && value->has_t()) elem = value->t().data_type();
  if (auto dims = ctx.InputExprs(0)) {
    ctx.SetOutput(0, elem, ToShape(*dims));
    bool literal = true;
    int64_t n = 1;
    std::vector<int64_t> int_dims;
    for (const auto& d : *dims) {
      auto v = d.AsInt();
      // A negative dim or an overflowing product (a hostile shape input; found by tests/fuzz:
      // -1 made a vector of 2^64 - 1 values) is not tracked as a literal value.
      if (!v || *v < 0 || __builtin_mul_overflow(n, *v, &n)) literal = false;
      else int_dims.push_back(*v);
    }
    if (literal && elem == onnx::TensorProto::INT64 && n <= 4096) {
      int64_t fill = 0;
      if (value && value->has_t())
        if (auto v = ReadTensorAsInt64(value->t()); v.ok() && !v->empty()) fill = (*v)[0];
      TrackedValue t;
      t.dims = int_dims;
      t.values.assign(static_cast<size_t>(n), sym::Expr(fill));
      ctx.SetOutputValue(0, std::move(t));
    }
    return Status::OK();
  }
  if (auto rank = ctx.ShapeInputLength(0)) ctx.SetOutput(0, elem, ctx.NewSymbols(0, *rank));
  return Status::OK();
}

std::optional<sym::Expr> ScalarInput(NodeContext& ctx, size_t i) {
  const TrackedValue* v = ctx.InputValue(i);
  if (!v || v->values.size() != 1) return std::nullopt;
  return v->values[0];
}

// Range: Max(ceiling((limit - start) / delta), 0); float inputs are exact rationals (§4.6).
Status HandleRange(NodeContext& ctx) {
  int32_t elem = ctx.InputElemType(0);
  auto start = ScalarInput(ctx, 0), limit = ScalarInput(ctx, 1), delta = ScalarInput(ctx, 2);
  SymDim n;
  if (start && limit && delta && !(delta->IsNumber() && delta->AsNumber().IsZero())) {
    n = GuardOverflow([&] { return sym::Max({sym::Ceil(sym::Div(*limit - *start, *delta)), sym::Expr(0)}); });
  }
  if (!n) n = ctx.NewSymbol(0, 0);
  ctx.SetOutput(0, elem, SymShape{n});
  return Status::OK();
}

}  // namespace

void RegisterShapeValueHandlers(HandlerTable& t) {
  t.Add("", "Shape", HandleShape);
  t.Add("", "Size", HandleSize);
  t.Add("", "Constant", HandleConstant);
  t.Add("", "ConstantOfShape", HandleConstantOfShape);
  t.Add("", "Range", HandleRange);
}

}  // namespace nuphar::shape_infer
