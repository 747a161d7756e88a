// Emission of the dynamic input quantization and dequantization chains (see the header for the
// exact sequences). Scalar constants go to the graph holding the MatMul, in emission order.
#include "quantizer/dynamic_quant.h"

#include <cfloat>

namespace nuphar::quant {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt32 = onnx::TensorProto::INT32;

/// Reduce* over the last axis with keepdims = 1, `axes` as attribute or input per opset.
std::string ReduceLastAxis(NodeEmitter& emit, const std::string& op, const std::string& x, bool axes_as_input) {
  if (axes_as_input) return emit.Emit(op, {x, emit.Int64Vector({-1})});
  return emit.Emit(op, {x}, {IntsAttr("axes", {-1})});
}

}  // namespace

int32_t StorageDataType(const QuantizeConfig& cfg) {
  if (cfg.type_bits == 8) return cfg.is_signed ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8;
  return cfg.is_signed ? onnx::TensorProto::INT16 : onnx::TensorProto::UINT16;
}

QuantizedInput EmitInputQuantization(NodeEmitter& emit, const std::string& x, const NodeQuantConfig& cfg,
                                     const OpsetForms& forms, bool guard_zero_delta) {
  const bool minmax_axes_input = forms.reduce_min_max_axes_as_input();
  // Max(delta, FLT_MIN) keeps Reciprocal finite for constant rows; scale_X keeps the raw delta.
  auto reciprocal = [&](const std::string& delta) {
    std::string d = delta;
    if (guard_zero_delta) d = emit.Emit("Max", {delta, emit.ScalarF32(FLT_MIN)});
    return emit.Emit("Reciprocal", {d});
  };

  QuantizedInput q;
  std::string delta, norm;
  if (cfg.symmetric) {
    delta = ReduceLastAxis(emit, "ReduceMax", emit.Emit("Abs", {x}), minmax_axes_input);
    const std::string inv = reciprocal(delta);
    norm = emit.Emit("Mul", {x, inv});
  } else {
    const std::string rmax = ReduceLastAxis(emit, "ReduceMax", x, minmax_axes_input);
    q.bias_x = ReduceLastAxis(emit, "ReduceMin", x, minmax_axes_input);
    delta = emit.Emit("Sub", {rmax, q.bias_x});
    const std::string inv = reciprocal(delta);
    norm = emit.Emit("Mul", {emit.Emit("Sub", {x, q.bias_x}), inv});
  }
  const double range = cfg.x.q_range();
  // float32(1/R) is computed in double and rounded once, as numpy did.
  q.scale_x = emit.Emit("Mul", {delta, emit.ScalarF32(static_cast<float>(1.0 / range))});
  std::string qf = emit.Emit("Mul", {norm, emit.ScalarF32(static_cast<float>(range))});
  qf = emit.Emit("Add", {qf, emit.ScalarF32(0.5f)});
  qf = emit.Emit("Floor", {qf});
  const float q_min = static_cast<float>(cfg.x.q_min());
  const float q_max = static_cast<float>(cfg.x.q_max());
  if (forms.clip_bounds_as_inputs()) {
    const std::string lo = emit.ScalarF32(q_min);
    const std::string hi = emit.ScalarF32(q_max);
    qf = emit.Emit("Clip", {qf, lo, hi});
  } else {
    // helper.make_node sorts attributes by name: max before min.
    qf = emit.Emit("Clip", {qf}, {FloatAttr("max", q_max), FloatAttr("min", q_min)});
  }
  q.q_x = emit.Emit("Cast", {qf}, {IntAttr("to", StorageDataType(cfg.x))});
  if (!cfg.symmetric) {
    const std::string as_int32 = emit.Emit("Cast", {q.q_x}, {IntAttr("to", kInt32)});
    q.q_x_sum = forms.reduce_sum_axes_as_input() ? emit.Emit("ReduceSum", {as_int32, emit.Int64Vector({-1})})
                                                 : emit.Emit("ReduceSum", {as_int32}, {IntsAttr("axes", {-1})});
  }
  return q;
}

void EmitIntegerMatMul(NodeEmitter& emit, const QuantizedInput& qx, const QuantizedWeightNames& w,
                       const NodeQuantConfig& cfg, const std::string& y) {
  const std::string q_y = cfg.x.type_bits == 8 ? emit.Emit("MatMulInteger", {qx.q_x, w.qparam})
                                               : emit.Emit("MatMulInteger16", {qx.q_x, w.qparam}, {}, "", "com.microsoft");
  // Each operand below is emitted before the node that uses it, in the original's order.
  if (cfg.symmetric) {
    const std::string step_scale = emit.Emit("Mul", {w.step, qx.scale_x});
    const std::string q_y_f = emit.Emit("Cast", {q_y}, {IntAttr("to", kFloat)});
    emit.Emit("Mul", {step_scale, q_y_f}, {}, y);
    return;
  }
  const std::string step_scale = emit.Emit("Mul", {w.step, qx.scale_x});
  const std::string q_y_f = emit.Emit("Cast", {q_y}, {IntAttr("to", kFloat)});
  const std::string o0 = emit.Emit("Mul", {step_scale, q_y_f});
  const std::string step_bias = emit.Emit("Mul", {w.step, qx.bias_x});
  const std::string o1 = emit.Emit("Mul", {step_bias, w.rowsum});
  const std::string sum_f = emit.Emit("Cast", {qx.q_x_sum}, {IntAttr("to", kFloat)});
  const std::string scaled_sum = emit.Emit("Mul", {qx.scale_x, sum_f});
  const std::string o2 = emit.Emit("Mul", {w.base, scaled_sum});
  const std::string bias_k = emit.Emit("Mul", {qx.bias_x, emit.ScalarF32(static_cast<float>(w.k))});
  const std::string o3 = emit.Emit("Mul", {w.base, bias_k});
  emit.Emit("Sum", {o3, o2, o1, o0}, {}, y);
}

}  // namespace nuphar::quant
