// Attribute parsing for LSTM/GRU/RNN (RnnSpec), including the activation table of spec E3.
#include "editor/rnn_to_scan/rnn_spec.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>

#include "graph/node_builder.h"

namespace nuphar::editor {
namespace {

struct ActivationInfo {
  const char* name;
  bool takes_alpha, takes_beta;
  float default_alpha, default_beta;
  bool required;  ///< no defaults (ScaledTanh)
};

constexpr ActivationInfo kActivations[] = {
    {"Relu", false, false, 0.f, 0.f, false},        {"Tanh", false, false, 0.f, 0.f, false},
    {"Sigmoid", false, false, 0.f, 0.f, false},     {"Affine", true, true, 1.f, 0.f, false},
    {"LeakyRelu", true, false, 0.01f, 0.f, false},  {"ThresholdedRelu", true, false, 1.f, 0.f, false},
    {"ScaledTanh", true, true, 0.f, 0.f, true},     {"HardSigmoid", true, true, 0.2f, 0.5f, false},
    {"Elu", true, false, 1.f, 0.f, false},          {"Softsign", false, false, 0.f, 0.f, false},
    {"Softplus", false, false, 0.f, 0.f, false},
};

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

const ActivationInfo* FindActivation(const std::string& name) {
  for (const auto& a : kActivations)
    if (Lower(a.name) == Lower(name)) return &a;
  return nullptr;
}

}  // namespace

Expected<RnnSpec> ParseRnnSpec(const onnx::NodeProto& node, const RnnCell& cell) {
  RnnSpec spec;
  spec.op = node.op_type();
  const auto* hidden = FindAttr(node, "hidden_size");
  if (!hidden || hidden->i() <= 0) return Diag::Node(node, "missing or non-positive hidden_size");
  spec.hidden = hidden->i();
  const std::string direction = AttrString(node, "direction", "forward");
  if (direction == "bidirectional") spec.num_directions = 2;
  else if (direction == "reverse") spec.reverse_only = true;
  else if (direction != "forward") return Diag::Node(node, "unknown direction '" + direction + "'");
  spec.clip = AttrFloat(node, "clip", 0.f);
  if (FindAttr(node, "clip") && !(spec.clip > 0.f)) return Diag::Node(node, "clip must be positive");
  spec.input_forget = AttrInt(node, "input_forget", 0) != 0;
  spec.layout = AttrInt(node, "layout", 0);
  if (spec.layout != 0 && spec.layout != 1) return Diag::Node(node, "layout must be 0 or 1");
  spec.linear_before_reset = AttrInt(node, "linear_before_reset", 0) != 0;

  const size_t k = cell.DefaultActivations().size();
  std::vector<std::string> names;
  if (const auto* a = FindAttr(node, "activations")) names.assign(a->strings().begin(), a->strings().end());
  if (names.empty())
    for (int d = 0; d < spec.num_directions; ++d)
      for (const auto& n : cell.DefaultActivations()) names.push_back(n);
  if (names.size() == k && spec.num_directions == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != k * spec.num_directions)
    return Diag::Node(node, "expected " + std::to_string(k * spec.num_directions) + " activations, got " +
                                std::to_string(names.size()));
  std::vector<float> alphas, betas;
  if (const auto* a = FindAttr(node, "activation_alpha")) alphas.assign(a->floats().begin(), a->floats().end());
  if (const auto* a = FindAttr(node, "activation_beta")) betas.assign(a->floats().begin(), a->floats().end());
  size_t next_alpha = 0, next_beta = 0;
  for (const auto& n : names) {
    const ActivationInfo* info = FindActivation(n);
    if (!info) return Diag::Node(node, "unknown activation '" + n + "'");
    Activation act{info->name, info->default_alpha, info->default_beta};
    if (info->takes_alpha) {
      if (next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
      else if (info->required) return Diag::Node(node, std::string(info->name) + " needs activation_alpha");
    }
    if (info->takes_beta) {
      if (next_beta < betas.size()) act.beta = betas[next_beta++];
      else if (info->required) return Diag::Node(node, std::string(info->name) + " needs activation_beta");
    }
    spec.activations.push_back(act);
  }
  return spec;
}

BodyMatrix TransposedRows(const float* m, int64_t cols, int64_t row0, int64_t nrows) {
  BodyMatrix out;
  out.rows = cols;
  out.cols = nrows;
  out.bytes.resize(static_cast<size_t>(cols * nrows) * sizeof(float));
  float* values = reinterpret_cast<float*>(out.bytes.data());
  // Blocked so both the reads and the writes stay within a few cache lines.
  constexpr int64_t kBlock = 32;
  for (int64_t i0 = 0; i0 < nrows; i0 += kBlock)
    for (int64_t j0 = 0; j0 < cols; j0 += kBlock)
      for (int64_t i = i0; i < std::min(nrows, i0 + kBlock); ++i)
        for (int64_t j = j0; j < std::min(cols, j0 + kBlock); ++j)
          values[j * nrows + i] = m[(row0 + i) * cols + j];
  return out;
}

}  // namespace nuphar::editor
