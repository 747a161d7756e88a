// RNN activation functions and their attribute parsing (rnn_activation.h).
#include "runtime/kernels/rnn/rnn_activation.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "runtime/kernels/kernel.h"
#include "runtime/kernels/rnn/rnn_math.h"

namespace nuphar {
namespace {

struct ActivationSpec {
  const char* name;  // lower case
  RnnActivationKind kind;
  bool takes_alpha, takes_beta;
  float default_alpha, default_beta;
};

constexpr ActivationSpec kSpecs[] = {
    {"relu", RnnActivationKind::kRelu, false, false, 0, 0},
    {"tanh", RnnActivationKind::kTanh, false, false, 0, 0},
    {"sigmoid", RnnActivationKind::kSigmoid, false, false, 0, 0},
    {"affine", RnnActivationKind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", RnnActivationKind::kLeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", RnnActivationKind::kThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", RnnActivationKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", RnnActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", RnnActivationKind::kElu, true, false, 1.0f, 0},
    {"softsign", RnnActivationKind::kSoftsign, false, false, 0, 0},
    {"softplus", RnnActivationKind::kSoftplus, false, false, 0, 0},
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

template <class T, class F>
void Map(T* x, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) x[i] = f(x[i]);
}

}  // namespace

template <class T>
void RnnActivation::Apply(T* x, int64_t n, float clip) const {
  if (clip > 0) {
    const T c = static_cast<T>(clip);
    Map(x, n, [c](T v) { return std::min(std::max(v, -c), c); });
  }
  const T a = static_cast<T>(alpha), b = static_cast<T>(beta);
  switch (kind) {
    case RnnActivationKind::kSigmoid: SigmoidInPlace(x, n); break;
    case RnnActivationKind::kTanh: TanhInPlace(x, n); break;
    case RnnActivationKind::kRelu: Map(x, n, [](T v) { return v > 0 ? v : T(0); }); break;
    case RnnActivationKind::kAffine: Map(x, n, [a, b](T v) { return a * v + b; }); break;
    case RnnActivationKind::kLeakyRelu: Map(x, n, [a](T v) { return v >= 0 ? v : a * v; }); break;
    case RnnActivationKind::kThresholdedRelu: Map(x, n, [a](T v) { return v > a ? v : T(0); }); break;
    case RnnActivationKind::kScaledTanh:
      Map(x, n, [b](T v) { return b * v; });
      TanhInPlace(x, n);
      Map(x, n, [a](T v) { return a * v; });
      break;
    case RnnActivationKind::kHardSigmoid:
      Map(x, n, [a, b](T v) { return std::min(std::max(a * v + b, T(0)), T(1)); });
      break;
    case RnnActivationKind::kElu: Map(x, n, [a](T v) { return v >= 0 ? v : a * (std::exp(v) - T(1)); }); break;
    case RnnActivationKind::kSoftsign: Map(x, n, [](T v) { return v / (T(1) + std::abs(v)); }); break;
    case RnnActivationKind::kSoftplus:  // log(1 + e^x) without overflow for large x
      Map(x, n, [](T v) { return v > T(0) ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v)); });
      break;
  }
}

template void RnnActivation::Apply<float>(float*, int64_t, float) const;
template void RnnActivation::Apply<double>(double*, int64_t, float) const;

Expected<std::vector<RnnActivation>> ParseRnnActivations(const NodeInfo& node, int num_directions,
                                                         const std::vector<std::string>& defaults) {
  const size_t per_direction = defaults.size();
  std::vector<std::string> names = node.GetStrings("activations");
  if (names.empty()) {
    for (int d = 0; d < num_directions; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  }
  // A bidirectional node that lists one direction's functions uses them for both (as ONNX
  // Runtime accepts); they are parsed once, so alpha/beta are consumed once.
  const bool shared_by_directions = num_directions == 2 && names.size() == per_direction;
  if (!shared_by_directions && names.size() != per_direction * static_cast<size_t>(num_directions))
    return node.Error("activations lists " + std::to_string(names.size()) + " functions, expected " +
                      std::to_string(per_direction * num_directions) + " (" + std::to_string(per_direction) +
                      " per direction)");
  const std::vector<float> alphas = node.GetFloats("activation_alpha");
  const std::vector<float> betas = node.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<RnnActivation> out;
  for (const std::string& name : names) {
    const std::string key = Lower(name);
    const ActivationSpec* spec = nullptr;
    for (const auto& s : kSpecs)
      if (key == s.name) spec = &s;
    if (!spec) return node.Error("unsupported activation function '" + name + "'");
    RnnActivation act{spec->kind, spec->default_alpha, spec->default_beta};
    if (spec->takes_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (spec->takes_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
    out.push_back(act);
  }
  if (shared_by_directions) {
    const std::vector<RnnActivation> forward = out;
    out.insert(out.end(), forward.begin(), forward.end());
  }
  return out;
}

}  // namespace nuphar
