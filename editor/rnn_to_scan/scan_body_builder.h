// ScanBodyBuilder: the Scan body graph of one RNN direction, with the cell helpers the hooks use.
//
// The body sees the states ([B, H] each), then the projected input slice x_t ([B, G*H]).
// Constants the cell needs (Rᵀ, bias pieces, 1.0, ...) become initializers of the body graph,
// named <Q>_Const_<n> as in the original tool. Activations are emitted as the plain ONNX ops
// of the table in spec E3 (Affine -> Mul+Add, ScaledTanh -> Mul+Tanh+Mul, ...).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "graph/node_builder.h"

namespace nuphar::editor {

/// One activation with its resolved alpha/beta (spec E3: list order, ONNX defaults).
struct Activation {
  std::string op;  ///< canonical ONNX spelling: "Sigmoid", "HardSigmoid", "Affine", ...
  float alpha = 0.f;
  float beta = 0.f;
};

class ScanBodyBuilder {
 public:
  ScanBodyBuilder(NameTable* names, int64_t opset, const std::string& prefix, DimSpec batch, int64_t hidden);

  NodeBuilder& nodes() { return builder_; }
  onnx::GraphProto& graph() { return graph_; }
  const DimSpec& batch() const { return batch_; }
  int64_t hidden() const { return hidden_; }

  /// Declares a body input / output [B, width] float (width 0 = scalar of `dtype`).
  std::string AddInput(const std::string& base_name, int64_t width, DType dtype = DType::kFloat);
  void AddOutput(const std::string& name, int64_t width, DType dtype = DType::kFloat);

  std::string Op(const char* op, const std::vector<std::string>& inputs) { return builder_.Op(op, inputs); }
  /// A float initializer of the body graph.
  std::string Const(const std::vector<int64_t>& dims, std::vector<float> values);
  std::string Activate(const Activation& act, const std::string& x);
  /// Clip(x, -clip, clip) when `clip` > 0 (spec E3: on every gate pre-activation), else x.
  std::string MaybeClip(const std::string& x, float clip);

  /// The finished body (call once).
  onnx::GraphProto Release() { return std::move(graph_); }

 private:
  onnx::GraphProto graph_;
  NodeBuilder builder_;
  DimSpec batch_;
  int64_t hidden_;
};

}  // namespace nuphar::editor
