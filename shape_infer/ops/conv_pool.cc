// Conv / pooling output sizes and Resize (spec §3.5 with the SAME-padding fix, §3.1 Resize with
// exact rational scales, §4.6).
//   out = (ceil_mode ? ceiling : floor)((d + pad_total - ((k - 1) * dilation + 1)) / stride) + 1
//   auto_pad SAME_*: out = ceiling(d / stride)
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>

#include "shape_infer/ops/op_util.h"
#include "shape_infer/ops/registry.h"

namespace nuphar::shape_infer {
namespace {

using sym::Expr;

Status ConvPoolShape(NodeContext& ctx, bool has_weight) {
  auto x = ctx.InputShape(0);
  if (!x || x->size() < 3) return Status::OK();
  const size_t spatial = x->size() - 2;
  std::vector<SymDim> kernel;
  SymDim channels = (*x)[1];
  if (has_weight) {
    auto w = ctx.InputShape(1);
    if (!w || w->size() != x->size()) return Status::OK();
    kernel.assign(w->begin() + 2, w->end());
    channels = (*w)[0];
  } else {
    auto k = ctx.AttrInts("kernel_shape");
    if (!k || k->size() != spatial) return Status::OK();
    for (int64_t v : *k) kernel.emplace_back(Expr(v));
  }
  bool all_literal = true;
  for (size_t i = 2; i < x->size(); ++i) all_literal = all_literal && (*x)[i] && (*x)[i]->IsNumber();
  auto onnx_out = ctx.OutputShape(0);
  if (all_literal && onnx_out && FullyKnown(*onnx_out)) return Status::OK();  // ONNX's values verbatim

  auto strides = ctx.AttrInts("strides").value_or(std::vector<int64_t>(spatial, 1));
  auto dilations = ctx.AttrInts("dilations").value_or(std::vector<int64_t>(spatial, 1));
  auto pads = ctx.AttrInts("pads").value_or(std::vector<int64_t>(2 * spatial, 0));
  const std::string auto_pad = ctx.AttrString("auto_pad", "NOTSET");
  const bool ceil_mode = ctx.AttrInt("ceil_mode", 0) != 0;
  if (strides.size() != spatial || dilations.size() != spatial || pads.size() != 2 * spatial)
    return ctx.Error("strides/dilations/pads do not match the spatial rank");
  SymShape out{(*x)[0], channels};
  for (size_t i = 0; i < spatial; ++i) {
    const SymDim& d = (*x)[i + 2];
    if (!d || !kernel[i]) {
      out.emplace_back(std::nullopt);
      continue;
    }
    Expr stride(strides[i]);
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out.emplace_back(sym::Ceil(sym::Div(*d, stride)));
      continue;
    }
    Expr eff_kernel = (*kernel[i] - 1) * Expr(dilations[i]) + 1;
    Expr total = auto_pad == "VALID" ? Expr(0) : Expr(pads[i] + pads[i + spatial]);
    Expr q = sym::Div(*d + total - eff_kernel, stride);
    out.emplace_back((ceil_mode ? sym::Ceil(q) : sym::Floor(q)) + 1);
  }
  int32_t elem = ctx.InputElemType(0);
  ctx.SetOutput(0, elem, out);
  if (ctx.HasOutput(1) && ctx.node().op_type() == "MaxPool") ctx.SetOutput(1, onnx::TensorProto::INT64, out);
  return Status::OK();
}

Status HandleConv(NodeContext& ctx) { return ConvPoolShape(ctx, true); }
Status HandlePool(NodeContext& ctx) { return ConvPoolShape(ctx, false); }

// out_d = floor(d * scale) (* (roi_end - roi_start) for tf_crop_and_resize), or sizes as given.
Status HandleResize(NodeContext& ctx) {
  auto x = ctx.InputShape(0);
  if (!x) return Status::OK();
  const size_t rank = x->size();
  const bool old_form = ctx.node().op_type() == "Upsample" || ctx.Opset() <= 10;
  std::optional<std::vector<Expr>> scales, sizes, roi;
  const TrackedValue* sv = nullptr;
  if (ctx.node().op_type() == "Upsample" && ctx.Opset() < 9) {
    if (const auto* a = ctx.Attr("scales")) {
      scales = std::vector<Expr>();
      for (float f : a->floats())
        if (auto r = ExactRational(f)) scales->emplace_back(*r);
    }
  } else if (old_form) {
    if ((sv = ctx.InputValue(1))) scales = sv->values;
  } else {
    if (ctx.HasInput(3)) sizes = ctx.InputExprs(3);
    if (ctx.HasInput(2) && (sv = ctx.InputValue(2)) && !sv->values.empty()) scales = sv->values;
    if (ctx.HasInput(1))
      if (const TrackedValue* rv = ctx.InputValue(1)) roi = rv->values;
  }
  std::vector<size_t> axes;
  if (auto a = ctx.AttrInts("axes")) {
    for (int64_t v : *a) {
      auto n = NormalizeAxis(v, static_cast<int64_t>(rank));
      if (!n) return ctx.Error("Resize axis out of range");
      axes.push_back(static_cast<size_t>(*n));
    }
  } else {
    for (size_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  SymShape out = *x;
  const bool crop = ctx.AttrString("coordinate_transformation_mode", "") == "tf_crop_and_resize";
  // Resize-18 keep_aspect_ratio_policy not_larger / not_smaller scales the listed dims by one
  // common factor, min or max of sizes / dims: computed when all are literals, else fresh symbols.
  const bool keep_aspect = ctx.AttrString("keep_aspect_ratio_policy", "stretch") != "stretch";
  if (sizes && sizes->size() == axes.size() && keep_aspect) {
    // With literal dims and sizes the common scale is known: dims become round(scale * d).
    std::optional<double> common;
    const bool not_larger = ctx.AttrString("keep_aspect_ratio_policy", "") == "not_larger";
    for (size_t k = 0; k < axes.size(); ++k) {
      auto d = out[axes[k]] ? out[axes[k]]->AsInt() : std::nullopt;
      auto z = (*sizes)[k].AsInt();
      if (!d || !z || *d <= 0) {
        common.reset();
        break;
      }
      const double r = static_cast<double>(*z) / static_cast<double>(*d);
      common = !common ? r : (not_larger ? std::min(*common, r) : std::max(*common, r));
    }
    for (size_t k = 0; k < axes.size(); ++k) {
      auto d = out[axes[k]] ? out[axes[k]]->AsInt() : std::nullopt;
      out[axes[k]] = common && d ? SymDim(Expr(static_cast<int64_t>(std::round(*common * static_cast<double>(*d)))))
                                 : SymDim(ctx.NewSymbol(0, axes[k]));
    }
  } else if (sizes && sizes->size() == axes.size()) {
    for (size_t k = 0; k < axes.size(); ++k) out[axes[k]] = (*sizes)[k];
  } else if (scales && scales->size() == axes.size()) {
    for (size_t k = 0; k < axes.size(); ++k) {
      SymDim& d = out[axes[k]];
      if (!d) continue;
      Expr scaled = *d * (*scales)[k];
      if (crop && roi && roi->size() == 2 * axes.size()) scaled = scaled * ((*roi)[k + axes.size()] - (*roi)[k]);
      d = sym::Floor(scaled);
    }
  } else {
    out = ctx.NewSymbols(0, rank);
  }
  ctx.SetOutput(0, ctx.InputElemType(0), out);
  return Status::OK();
}

}  // namespace

void RegisterConvPoolHandlers(HandlerTable& t) {
  t.Add("", "Conv", HandleConv);
  t.Add("", "MaxPool", HandlePool);
  t.Add("", "AveragePool", HandlePool);
  t.Add("", "LpPool", HandlePool);
  t.Add("", "Resize", HandleResize);
  t.Add("", "Upsample", HandleResize);
}

}  // namespace nuphar::shape_infer
