// model_quantizer's library entry: MatMul (and Gemm) -> MatMulInteger with per-column static
// weight quantization and a per-row dynamic input quantization subgraph.
//
// # What it reproduces
// The original Nuphar model_quantizer.py, bit for bit for the same model and config (spec
// editor_quantizer.md Q1): the same quantized initializers (`<w>_step`, `<w>_qparam`, and for
// asymmetric configs `<w>_base`, `<w>_qparam_rowsum`), the same node sequence and names
// (`<matmul><Op>_<n>`, constants `<matmul>_Const_<n>`). Deliberate differences: node forms
// valid for the model's opset (Clip, Reduce* axes), the IR version rule, unique names, the
// optional zero-delta guard, and the scope extensions of Q2 (Gemm, If branches, any depth).
//
// # Thread safety
// Quantize() keeps all state (name counters, tables) per call; concurrent calls on different
// models are fine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/error.h"

namespace onnx {
class ModelProto;
}

namespace nuphar::quant {

/// One side (weight W or input X) of a quantization scheme: QuantizeConfig of the original.
struct QuantizeConfig {
  bool is_signed = true;
  int reserved_bits = 0;
  int type_bits = 8;  ///< 8 or 16

  int usable_bits() const { return type_bits - reserved_bits; }
  /// 2^(usable - signed) - 1
  double q_max() const { return static_cast<double>((int64_t{1} << (usable_bits() - (is_signed ? 1 : 0))) - 1); }
  double q_min() const { return is_signed ? -(q_max() + 1) : 0.0; }
  /// signed: q_max + 0.5; unsigned: 2^usable (the unsigned range is one step short, B23).
  double q_range() const {
    return is_signed ? q_max() + 0.5 : static_cast<double>(int64_t{1} << usable_bits());
  }
  bool operator==(const QuantizeConfig&) const = default;
};

/// The config of one MatMul: {"W": {...}, "X": {...}, "Symmetric": 0|1}.
struct NodeQuantConfig {
  QuantizeConfig w;
  QuantizeConfig x;
  bool symmetric = false;
  bool operator==(const NodeQuantConfig&) const = default;
};

/// Checks the rules the original asserted: 8 or 16 bits, at least one value bit, symmetric
/// needs signed W and X, W and X of the same width.
Status ValidateNodeConfig(const NodeQuantConfig& cfg, const std::string& where);

/// "asymm8_param0_input1" (default) or "symm16_param3_input3".
Expected<NodeQuantConfig> PresetConfig(const std::string& name);
const char* const kDefaultPreset = "asymm8_param0_input1";

/// Per-node configs keyed by MatMul (or Gemm) output name, in file / quantization order.
using QcfgTable = std::vector<std::pair<std::string, NodeQuantConfig>>;

struct QuantizeOptions {
  bool only_for_scan = false;             ///< only MatMuls in (or nested in) Scan/Loop bodies
  bool share_input_quantization = false;  ///< reuse X's quantization per graph
  bool guard_zero_delta = false;          ///< Max(delta, FLT_MIN) before Reciprocal (Q1)
  bool compute_weight_error = false;      ///< fill QuantizedMatMul::weight_* (for --report)
  /// Defaults to the asymm8_param0_input1 preset (PresetConfig(kDefaultPreset) gives the same).
  NodeQuantConfig default_config{QuantizeConfig{true, 0, 8}, QuantizeConfig{false, 1, 8}, false};
  /// Imported per-node configs; a non-empty table makes missing nodes print a warning.
  QcfgTable node_configs;
};

/// One quantized MatMul (or Gemm), in emission order.
struct QuantizedMatMul {
  std::string graph;        ///< "main" or the subgraph path, e.g. "main/Scan_3.body"
  std::string node;         ///< the MatMul / Gemm node name
  std::string op;           ///< "MatMul" or "Gemm"
  std::string output;       ///< the qcfg key
  std::string weight;       ///< float weight name
  int64_t k = 0, n = 0;     ///< weight shape
  NodeQuantConfig config;
  bool weight_reused = false;  ///< the weight had been quantized for an earlier MatMul
  double weight_max_abs_error = 0;  ///< max |W - dequant(Q)|
  double weight_max_abs = 0;        ///< max |W|
  double weight_rel_l2_error = 0;   ///< ||W - dequant(Q)||_2 / ||W||_2 (0 for an all-zero W)
};

struct QuantizeReport {
  std::vector<QuantizedMatMul> quantized;
  /// MatMul/Gemm candidates left float, one line each with the reason (--verbose).
  std::vector<std::string> skipped;
  /// Lines the original prints (qcfg fall-back warnings) and explicit opset conversions.
  std::vector<std::string> messages;
  /// Config used by every quantized node, for --export_qcfg_json.
  QcfgTable used_configs;
  int64_t opset = 0;       ///< final default-domain opset
  int64_t ir_version = 0;  ///< final IR version
};

/// Rewrites `model` in place. On error the model is partly rewritten and must be discarded.
Expected<QuantizeReport> Quantize(onnx::ModelProto* model, const QuantizeOptions& options);

}  // namespace nuphar::quant
