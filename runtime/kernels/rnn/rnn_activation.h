// The activation functions of the ONNX RNN ops (LSTM/GRU/RNN "activations" attribute) with
// their alpha/beta, and the gate-input clip applied before them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/error.h"

namespace nuphar {

class NodeInfo;

enum class RnnActivationKind {
  kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign,
  kSoftplus,
};

struct RnnActivation {
  RnnActivationKind kind = RnnActivationKind::kTanh;
  float alpha = 0;
  float beta = 0;

  /// x[i] = f(clip(x[i])) in place; clip <= 0 means no clipping. T is float or double.
  template <class T>
  void Apply(T* x, int64_t n, float clip) const;
};

/// Parses "activations", "activation_alpha" and "activation_beta" for `num_directions` x
/// `per_direction` functions (forward first; a bidirectional node may list one direction's set for
/// both). Missing activations take `defaults`. As in ONNX
/// Runtime, alpha/beta values are consumed in order only by the functions that take them;
/// functions without a value get the defaults of the corresponding ONNX operator.
Expected<std::vector<RnnActivation>> ParseRnnActivations(const NodeInfo& node, int num_directions,
                                                         const std::vector<std::string>& defaults);

}  // namespace nuphar
