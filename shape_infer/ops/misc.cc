// Data-dependent and bookkeeping ops (spec §3.1, §3.3): NonZero, NonMaxSuppression, Compress,
// OneHot, TopK, Reduce*, BatchNormalization, SoftmaxCrossEntropyLoss, same-shape ops,
// Quantize/DequantizeLinear, sequence ops and the ai.onnx.ml handlers.
#include <onnx/onnx_pb.h>

#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

using sym::Expr;

Status HandleNonZero(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  ctx.SetOutput(0, onnx::TensorProto::INT64, SymShape{Expr(static_cast<int64_t>(in->size())), ctx.NewSymbol(0, 1)});
  return Status::OK();
}

Status HandleNonMaxSuppression(NodeContext& ctx) {
  ctx.SetOutput(0, onnx::TensorProto::INT64, SymShape{ctx.NewSymbol(0, 0), Expr(3)});
  return Status::OK();
}

Status HandleCompress(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!ctx.Attr("axis")) {
    ctx.SetOutput(0, ctx.InputElemType(0), SymShape{ctx.NewSymbol(0, 0)});
    return Status::OK();
  }
  if (!in) return Status::OK();
  auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), static_cast<int64_t>(in->size()));
  if (!axis) return ctx.Error("Compress axis out of range");
  (*in)[static_cast<size_t>(*axis)] = ctx.NewSymbol(0, static_cast<size_t>(*axis));
  ctx.SetOutput(0, ctx.InputElemType(0), in);
  return Status::OK();
}

// OneHot: a known depth (initializer, Constant or tracked) is used; the original always made a
// fresh symbol for array depths (§6 item 7).
Status HandleOneHot(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  int64_t out_rank = static_cast<int64_t>(in->size()) + 1;
  auto axis = NormalizeAxis(ctx.AttrInt("axis", -1), out_rank);
  if (!axis) return ctx.Error("OneHot axis out of range");
  SymDim depth;
  if (const TrackedValue* v = ctx.InputValue(1); v && v->values.size() == 1) {
    depth = v->is_float ? (v->values[0].IsNumber() ? SymDim(Expr(v->values[0].AsNumber().Trunc())) : std::nullopt)
                        : SymDim(v->values[0]);
  }
  if (!depth) depth = ctx.NewSymbol(0, static_cast<size_t>(*axis));
  in->insert(in->begin() + *axis, depth);
  ctx.SetOutput(0, ctx.InputElemType(2), in);
  return Status::OK();
}

Status HandleTopK(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  if (!in) return Status::OK();
  auto axis = NormalizeAxis(ctx.AttrInt("axis", -1), static_cast<int64_t>(in->size()));
  if (!axis) return ctx.Error("TopK axis out of range");
  SymDim k;
  if (ctx.Opset() <= 9) {
    k = Expr(ctx.AttrInt("k", 0));
  } else if (auto v = ctx.InputExprs(1); v && v->size() == 1) {
    k = (*v)[0];
  }
  if (!k) k = ctx.NewSymbol(0, static_cast<size_t>(*axis));
  (*in)[static_cast<size_t>(*axis)] = k;
  ctx.SetOutput(0, ctx.InputElemType(0), in);
  ctx.SetOutput(1, onnx::TensorProto::INT64, in);
  return Status::OK();
}

// Reduce ops with axes as an input (ReduceSum >= 13, ReduceMean/Prod/... >= 18); ReduceProd also
// tracks the product of a 1-D value (axes [0], keepdims 0).
Status HandleReduce(NodeContext& ctx) {
  const std::string& op = ctx.node().op_type();
  const bool axes_input = (op == "ReduceSum" && ctx.Opset() >= 13) || ctx.Opset() >= 18;
  const bool keepdims = ctx.AttrInt("keepdims", 1) != 0;
  std::optional<std::vector<int64_t>> axes;
  if (axes_input) {
    if (ctx.HasInput(1)) axes = ctx.InputInts(1);
    else axes = std::vector<int64_t>();
  } else {
    axes = ctx.AttrInts("axes").value_or(std::vector<int64_t>());
  }
  auto in = ctx.InputShape(0);
  if (op == "ReduceProd" && axes && !keepdims && axes->size() == 1 && (*axes)[0] == 0) {
    const TrackedValue* v = ctx.InputValue(0);
    if (v && v->dims.size() == 1) {
      Expr p(1);
      for (const auto& e : v->values) p = p * e;
      TrackedValue r = ScalarValue(p);
      r.is_float = v->is_float;
      ctx.SetOutputValue(0, std::move(r));
    }
  }
  if (!in) return Status::OK();
  const int64_t rank = static_cast<int64_t>(in->size());
  if (!axes) {  // dynamic axes
    if (keepdims) ctx.SetOutput(0, ctx.InputElemType(0), ctx.NewSymbols(0, in->size()));
    return Status::OK();
  }
  if (axes->empty() && ctx.AttrInt("noop_with_empty_axes", 0)) {
    ctx.SetOutput(0, ctx.InputElemType(0), in);
    return Status::OK();
  }
  std::vector<bool> reduced(in->size(), axes->empty());
  for (int64_t a : *axes) {
    auto n = NormalizeAxis(a, rank);
    if (!n) return ctx.Error(op + " axis out of range");
    reduced[static_cast<size_t>(*n)] = true;
  }
  SymShape out;
  for (size_t i = 0; i < in->size(); ++i) {
    if (!reduced[i]) out.push_back((*in)[i]);
    else if (keepdims) out.emplace_back(Expr(1));
  }
  ctx.SetOutput(0, ctx.OutputElemType(0) ? ctx.OutputElemType(0) : ctx.InputElemType(0), out);
  return Status::OK();
}

Status HandleBatchNormalization(NodeContext& ctx) {
  if (auto s = ctx.InputShape(0)) ctx.SetOutput(0, ctx.InputElemType(0), s);
  for (size_t j = 1; j < ctx.NumOutputs() && j < 5; ++j)
    if (auto s = ctx.InputShape(1)) ctx.SetOutput(j, ctx.InputElemType(1), s);
  return Status::OK();
}

Status HandleSoftmaxCrossEntropyLoss(NodeContext& ctx) {
  int32_t elem = ctx.InputElemType(0);
  auto loss = ctx.OutputShape(0);
  if (!loss) {
    std::string reduction = ctx.AttrString("reduction", "mean");
    auto labels = ctx.InputShape(1);
    if (reduction != "none") loss = SymShape{};
    else if (labels) loss = labels;
  }
  ctx.SetOutput(0, elem, loss);
  if (ctx.HasOutput(1))
    if (auto s = ctx.InputShape(0)) ctx.SetOutput(1, elem, s);
  return Status::OK();
}

Status HandleQuantizeLinear(NodeContext& ctx) {
  int32_t elem = ctx.HasInput(2) ? ctx.InputElemType(2) : onnx::TensorProto::UINT8;
  if (elem == 0) elem = onnx::TensorProto::UINT8;
  ctx.SetOutput(0, elem, ctx.InputShape(0));
  return Status::OK();
}

Status HandleDequantizeLinear(NodeContext& ctx) {
  int32_t elem = ctx.InputElemType(1) ? ctx.InputElemType(1) : onnx::TensorProto::FLOAT;
  ctx.SetOutput(0, elem, ctx.InputShape(0));
  return Status::OK();
}

Status HandleArrayFeatureExtractor(NodeContext& ctx) {
  auto x = ctx.InputShape(0), idx = ctx.InputShape(1);
  if (!x || !idx || x->empty()) return Status::OK();
  SymShape out(x->begin(), x->end() - 1);
  out.insert(out.end(), idx->begin(), idx->end());
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

Status HandleCategoryMapper(NodeContext& ctx) {
  int32_t elem = ctx.InputElemType(0) == onnx::TensorProto::STRING ? onnx::TensorProto::INT64 : onnx::TensorProto::STRING;
  ctx.SetOutput(0, elem, ctx.InputShape(0));
  return Status::OK();
}

Status HandleZipMap(NodeContext& ctx) {
  onnx::TypeProto type;
  auto* map = type.mutable_sequence_type()->mutable_elem_type()->mutable_map_type();
  map->set_key_type(ctx.Attr("classlabels_int64s") ? onnx::TensorProto::INT64 : onnx::TensorProto::STRING);
  map->mutable_value_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  ctx.SetOutputType(0, type);
  return Status::OK();
}

// Sequence outputs: a sequence of tensors whose split axis is a fresh symbol.
Status HandleSplitToSequence(NodeContext& ctx) {
  auto in = ctx.InputShape(0);
  onnx::TypeProto type;
  auto* tensor = type.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  tensor->set_elem_type(ctx.InputElemType(0));
  if (in) {
    auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), static_cast<int64_t>(in->size()));
    if (!axis) return ctx.Error("SplitToSequence axis out of range");
    SymShape elem_shape = *in;
    if (!ctx.HasInput(1) && ctx.AttrInt("keepdims", 1) == 0) elem_shape.erase(elem_shape.begin() + *axis);
    else elem_shape[static_cast<size_t>(*axis)] = ctx.NewSymbol(0, static_cast<size_t>(*axis));
    onnx::TypeProto elem_type;
    WriteTensorType(&elem_type, ctx.InputElemType(0), elem_shape, ctx.graph().root().symbols, ctx.options().verbose);
    *type.mutable_sequence_type()->mutable_elem_type() = elem_type;
  }
  ctx.SetOutputType(0, type);
  return Status::OK();
}

std::optional<SymShape> SequenceElemShape(NodeContext& ctx, size_t i, int32_t* elem) {
  const onnx::TypeProto* t = ctx.InputType(i);
  if (!t || !t->has_sequence_type()) return std::nullopt;
  const onnx::TypeProto& e = t->sequence_type().elem_type();
  *elem = e.has_tensor_type() ? e.tensor_type().elem_type() : 0;
  return ShapeOfType(e, ctx.graph().root().symbols);
}

Status HandleSequenceAt(NodeContext& ctx) {
  int32_t elem = 0;
  auto shape = SequenceElemShape(ctx, 0, &elem);
  if (!shape) return Status::OK();
  for (size_t a = 0; a < shape->size(); ++a)  // dims that differ between elements: fresh symbols
    if (!(*shape)[a]) (*shape)[a] = ctx.NewSymbol(0, a);
  ctx.SetOutput(0, elem ? elem : ctx.OutputElemType(0), shape);
  return Status::OK();
}

// SequenceInsert: the sequence's element type fused with the inserted tensor's (upstream's
// workaround for ONNX losing shapes): differing dims become unknown, differing ranks drop the shape.
Status HandleSequenceInsert(NodeContext& ctx) {
  const onnx::TypeProto* seq = ctx.InputType(0);
  const onnx::TypeProto* tensor = ctx.InputType(1);
  if (!seq || !seq->has_sequence_type() || !tensor || !tensor->has_tensor_type()) return Status::OK();
  onnx::TypeProto out = *seq;
  auto* dst = out.mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  const auto& src = tensor->tensor_type();
  if (dst->elem_type() != 0 && src.elem_type() != 0 && dst->elem_type() != src.elem_type())
    return ctx.Error("SequenceInsert of " + onnx::TensorProto::DataType_Name(src.elem_type()) + " into a sequence of " +
                     onnx::TensorProto::DataType_Name(dst->elem_type()));
  if (!dst->has_shape()) {
    *dst = src;
  } else if (!src.has_shape() || src.shape().dim_size() != dst->shape().dim_size()) {
    dst->clear_shape();
  } else {
    for (int d = 0; d < dst->shape().dim_size(); ++d)
      if (dst->shape().dim(d).SerializeAsString() != src.shape().dim(d).SerializeAsString())
        dst->mutable_shape()->mutable_dim(d)->Clear();
  }
  ctx.SetOutputType(0, out);
  return Status::OK();
}

Status HandleConcatFromSequence(NodeContext& ctx) {
  int32_t elem = 0;
  auto shape = SequenceElemShape(ctx, 0, &elem);
  if (!shape) return Status::OK();
  const bool new_axis = ctx.AttrInt("new_axis", 0) != 0;
  int64_t rank = static_cast<int64_t>(shape->size()) + (new_axis ? 1 : 0);
  auto axis = NormalizeAxis(ctx.AttrInt("axis", 0), rank);
  if (!axis) return ctx.Error("ConcatFromSequence axis out of range");
  if (new_axis) shape->insert(shape->begin() + *axis, ctx.NewSymbol(0, static_cast<size_t>(*axis)));
  else (*shape)[static_cast<size_t>(*axis)] = ctx.NewSymbol(0, static_cast<size_t>(*axis));
  ctx.SetOutput(0, elem, shape);
  return Status::OK();
}

}  // namespace

Status HandleSameAsInput0(NodeContext& ctx) {
  if (auto s = ctx.InputShape(0)) ctx.SetOutput(0, ctx.InputElemType(0), s);
  return Status::OK();
}

void RegisterMiscHandlers(HandlerTable& t) {
  t.Add("", "NonZero", HandleNonZero);
  t.Add("", "NonMaxSuppression", HandleNonMaxSuppression);
  t.Add("", "Compress", HandleCompress);
  t.Add("", "OneHot", HandleOneHot);
  t.Add("", "TopK", HandleTopK);
  // Every reduction: from opset 18 their axes are input 1, which libonnx 1.12 does not know.
  for (const char* op : {"ReduceProd", "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL1", "ReduceL2",
                         "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"})
    t.Add("", op, HandleReduce);
  t.Add("", "BatchNormalization", HandleBatchNormalization);
  t.Add("", "SoftmaxCrossEntropyLoss", HandleSoftmaxCrossEntropyLoss);
  for (const char* op : {"ScatterElements", "ScatterND", "CumSum", "Round"}) t.Add("", op, HandleSameAsInput0);
  t.Add("", "QuantizeLinear", HandleQuantizeLinear);
  t.Add("", "DequantizeLinear", HandleDequantizeLinear);
  t.Add("com.microsoft", "QuantizeLinear", HandleQuantizeLinear);
  t.Add("com.microsoft", "DequantizeLinear", HandleDequantizeLinear);
  t.Add("ai.onnx.ml", "ArrayFeatureExtractor", HandleArrayFeatureExtractor);
  t.Add("ai.onnx.ml", "CategoryMapper", HandleCategoryMapper);
  t.Add("ai.onnx.ml", "ZipMap", HandleZipMap);
  t.Add("", "SplitToSequence", HandleSplitToSequence);
  t.Add("", "SequenceAt", HandleSequenceAt);
  t.Add("", "SequenceInsert", HandleSequenceInsert);
  t.Add("", "ConcatFromSequence", HandleConcatFromSequence);
}

}  // namespace nuphar::shape_infer
