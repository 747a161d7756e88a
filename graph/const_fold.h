// Constant folding of weight producer chains, so passes can read weights that exporters emit
// as computed constants (spox: Constant -> Unsqueeze; paddle2onnx: Concat/Slice of Constants).
//
// FoldConstant evaluates a tensor name at conversion time when it is an initializer, a
// Constant node output, or the output of Identity, Cast, Reshape, Unsqueeze, Squeeze,
// Transpose, Concat, Slice, Gather or Split over such values, found in the node's graph or any
// enclosing graph. Like the original tool, an initializer counts as constant whether or not it
// is also listed as a graph input.
//
// An initializer comes back borrowed (no copy: weights can be hundreds of MB); a folded value
// is owned. A borrowed value stays valid while its graph's initializer list is not shrunk.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "graph/error.h"
#include "graph/onnx_fwd.h"

namespace nuphar {

struct GraphScope;

class ConstantValue {
 public:
  ConstantValue();
  explicit ConstantValue(const onnx::TensorProto* borrowed);
  explicit ConstantValue(std::unique_ptr<onnx::TensorProto> owned);
  ConstantValue(ConstantValue&&) noexcept;
  ConstantValue& operator=(ConstantValue&&) noexcept;
  ~ConstantValue();

  const onnx::TensorProto& tensor() const { return *tensor_; }
  bool borrowed() const { return owned_ == nullptr; }

 private:
  std::unique_ptr<onnx::TensorProto> owned_;
  const onnx::TensorProto* tensor_ = nullptr;
};

/// Evaluates `name` in `scope` (see above). `producers`, when given, receives the nodes that
/// were evaluated (so a pass can mark them for dead-code removal).
Expected<ConstantValue> FoldConstant(const GraphScope& scope, const std::string& name,
                                     std::vector<const onnx::NodeProto*>* producers = nullptr);

/// The value of a Constant node's output (value, value_float(s), value_int(s)).
Expected<std::unique_ptr<onnx::TensorProto>> ConstantNodeValue(const onnx::NodeProto& node);

}  // namespace nuphar
