// The runtime half of a quantized MatMul: per-row dynamic quantization of the input X, the
// integer GEMM, and the dequantization (spec §3.5-§3.7). Only emits nodes; the weight side is
// weight_quant.h.
//
// # Node sequence (asymmetric 8-bit, opset >= 11), names `<matmul><Op>_<n>`
//   ReduceMax(X) ReduceMin(X) Sub Reciprocal Sub(X,min) Mul(.,inv) Mul(delta,1/R) Mul(norm,R)
//   Add(.,0.5) Floor Clip Cast(q_type) Cast(INT32) ReduceSum MatMulInteger Mul(step,scale_X)
//   Cast(FLOAT) Mul=o0 Mul(step,bias_X) Mul(.,rowsum)=o1 Cast(FLOAT) Mul(scale_X,.) Mul(base,.)=o2
//   Mul(bias_X,K) Mul(base,.)=o3 Sum(o3,o2,o1,o0)->Y                                    (26 nodes)
// Symmetric: Abs ReduceMax Reciprocal Mul Mul Mul Add Floor Clip Cast MatMulInteger(16) Mul Cast
//   Mul->Y                                                                              (14 nodes)
// The order is the original's Python evaluation order; keep it, models must be interchangeable.
//
// # Why the input rounds half up while weights round half to even
// Floor(x + 0.5) is what the original emitted (B23); kept for bit-compatibility.
#pragma once

#include <cstdint>
#include <string>

#include "graph/node_builder.h"
#include "quantizer/quantizer.h"

namespace nuphar::quant {

/// Which node forms the final default-domain opset requires (E2).
struct OpsetForms {
  int64_t opset = 10;
  bool clip_bounds_as_inputs() const { return opset >= 11; }
  bool reduce_sum_axes_as_input() const { return opset >= 13; }
  bool reduce_min_max_axes_as_input() const { return opset >= 18; }
};

/// Names of a quantized weight's initializers (base and rowsum empty when symmetric).
struct QuantizedWeightNames {
  std::string step, base, rowsum, qparam;
  int64_t k = 0;  ///< rows of W: the constant of the o3 term
};

/// The tensors a later MatMul with the same X and X-config can reuse (§3.8).
struct QuantizedInput {
  std::string scale_x, bias_x, q_x, q_x_sum;  ///< bias_x and q_x_sum empty when symmetric
};

QuantizedInput EmitInputQuantization(NodeBuilder& emit, const std::string& x, const NodeQuantConfig& cfg,
                                     const OpsetForms& forms, bool guard_zero_delta);

/// MatMulInteger (8 bit) or com.microsoft MatMulInteger16, then the dequantization into `y`.
void EmitIntegerMatMul(NodeBuilder& emit, const QuantizedInput& qx, const QuantizedWeightNames& w,
                       const NodeQuantConfig& cfg, const std::string& y);

/// ONNX TensorProto data type of a config's storage type.
int32_t StorageDataType(const QuantizeConfig& cfg);

}  // namespace nuphar::quant
