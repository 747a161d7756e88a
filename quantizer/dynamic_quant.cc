// Emission of the dynamic input quantization and dequantization chains (see the header for the
// exact sequences). Scalar constants go to the graph holding the MatMul, in emission order.
#include "quantizer/dynamic_quant.h"

#include <onnx/onnx_pb.h>

#include <cfloat>

namespace nuphar::quant {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt32 = onnx::TensorProto::INT32;

/// Reduce* over the last axis with keepdims = 1, `axes` as attribute or input per opset.
std::string ReduceLastAxis(NodeBuilder& emit, const std::string& op, const std::string& x, bool axes_as_input) {
  if (axes_as_input) return emit.Op(op, {x, emit.Ints64({-1})});
  return emit.Op(op, {x}, {IntsAttr("axes", {-1})});
}

}  // namespace

int32_t StorageDataType(const QuantizeConfig& cfg) {
  if (cfg.type_bits == 8) return cfg.is_signed ? onnx::TensorProto::INT8 : onnx::TensorProto::UINT8;
  return cfg.is_signed ? onnx::TensorProto::INT16 : onnx::TensorProto::UINT16;
}

QuantizedInput EmitInputQuantization(NodeBuilder& emit, const std::string& x, const NodeQuantConfig& cfg,
                                     const OpsetForms& forms, bool guard_zero_delta) {
  const bool minmax_axes_input = forms.reduce_min_max_axes_as_input();
  // Max(delta, FLT_MIN) keeps Reciprocal finite for constant rows; scale_X keeps the raw delta.
  auto reciprocal = [&](const std::string& delta) {
    std::string d = delta;
    if (guard_zero_delta) d = emit.Op("Max", {delta, emit.ScalarF(FLT_MIN)});
    return emit.Op("Reciprocal", {d});
  };

  QuantizedInput q;
  std::string delta, norm;
  if (cfg.symmetric) {
    delta = ReduceLastAxis(emit, "ReduceMax", emit.Op("Abs", {x}), minmax_axes_input);
    const std::string inv = reciprocal(delta);
    norm = emit.Op("Mul", {x, inv});
  } else {
    const std::string rmax = ReduceLastAxis(emit, "ReduceMax", x, minmax_axes_input);
    q.bias_x = ReduceLastAxis(emit, "ReduceMin", x, minmax_axes_input);
    delta = emit.Op("Sub", {rmax, q.bias_x});
    const std::string inv = reciprocal(delta);
    norm = emit.Op("Mul", {emit.Op("Sub", {x, q.bias_x}), inv});
  }
  const double range = cfg.x.q_range();
  // float32(1/R) is computed in double and rounded once, as numpy did.
  q.scale_x = emit.Op("Mul", {delta, emit.ScalarF(static_cast<float>(1.0 / range))});
  std::string qf = emit.Op("Mul", {norm, emit.ScalarF(static_cast<float>(range))});
  qf = emit.Op("Add", {qf, emit.ScalarF(0.5f)});
  qf = emit.Op("Floor", {qf});
  const float q_min = static_cast<float>(cfg.x.q_min());
  const float q_max = static_cast<float>(cfg.x.q_max());
  if (forms.clip_bounds_as_inputs()) {
    const std::string lo = emit.ScalarF(q_min);
    const std::string hi = emit.ScalarF(q_max);
    qf = emit.Op("Clip", {qf, lo, hi});
  } else {
    // helper.make_node sorts attributes by name: max before min.
    qf = emit.Op("Clip", {qf}, {FloatAttr("max", q_max), FloatAttr("min", q_min)});
  }
  q.q_x = emit.Op("Cast", {qf}, {IntAttr("to", StorageDataType(cfg.x))});
  if (!cfg.symmetric) {
    const std::string as_int32 = emit.Op("Cast", {q.q_x}, {IntAttr("to", kInt32)});
    q.q_x_sum = forms.reduce_sum_axes_as_input() ? emit.Op("ReduceSum", {as_int32, emit.Ints64({-1})})
                                                 : emit.Op("ReduceSum", {as_int32}, {IntsAttr("axes", {-1})});
  }
  return q;
}

void EmitIntegerMatMul(NodeBuilder& emit, const QuantizedInput& qx, const QuantizedWeightNames& w,
                       const NodeQuantConfig& cfg, const std::string& y) {
  const std::string q_y = cfg.x.type_bits == 8 ? emit.Op("MatMulInteger", {qx.q_x, w.qparam})
                                               : emit.Op("MatMulInteger16", {qx.q_x, w.qparam}, {}, "", "com.microsoft");
  // Each operand below is emitted before the node that uses it, in the original's order.
  if (cfg.symmetric) {
    const std::string step_scale = emit.Op("Mul", {w.step, qx.scale_x});
    const std::string q_y_f = emit.Op("Cast", {q_y}, {IntAttr("to", kFloat)});
    emit.Op("Mul", {step_scale, q_y_f}, {}, y);
    return;
  }
  const std::string step_scale = emit.Op("Mul", {w.step, qx.scale_x});
  const std::string q_y_f = emit.Op("Cast", {q_y}, {IntAttr("to", kFloat)});
  const std::string o0 = emit.Op("Mul", {step_scale, q_y_f});
  const std::string step_bias = emit.Op("Mul", {w.step, qx.bias_x});
  const std::string o1 = emit.Op("Mul", {step_bias, w.rowsum});
  const std::string sum_f = emit.Op("Cast", {qx.q_x_sum}, {IntAttr("to", kFloat)});
  const std::string scaled_sum = emit.Op("Mul", {qx.scale_x, sum_f});
  const std::string o2 = emit.Op("Mul", {w.base, scaled_sum});
  const std::string bias_k = emit.Op("Mul", {qx.bias_x, emit.ScalarF(static_cast<float>(w.k))});
  const std::string o3 = emit.Op("Mul", {w.base, bias_k});
  emit.Op("Sum", {o3, o2, o1, o0}, {}, y);
}

}  // namespace nuphar::quant
