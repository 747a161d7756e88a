// Quantize(): opset/IR preparation, then the MatMul/Gemm pass over every graph.
#include "quantizer/quantizer.h"

#include <onnx/onnx_pb.h>

#include "quantizer/matmul_quantizer.h"
#include "quantizer/opset_upgrade.h"

namespace nuphar::quant {

Status ValidateNodeConfig(const NodeQuantConfig& cfg, const std::string& where) {
  for (const auto* side : {&cfg.w, &cfg.x}) {
    const char* which = side == &cfg.w ? "W" : "X";
    if (side->type_bits != 8 && side->type_bits != 16) {
      return Diag::Msg(where + ": " + which + " QuantizeBit must be 8 or 16, got " + std::to_string(side->type_bits));
    }
    if (side->reserved_bits < 0 || side->usable_bits() < (side->is_signed ? 2 : 1)) {
      return Diag::Msg(where + ": " + which + " ReservedBit " + std::to_string(side->reserved_bits) +
                       " leaves no value bits in " + std::to_string(side->type_bits) + " bits");
    }
  }
  if (cfg.symmetric && !(cfg.w.is_signed && cfg.x.is_signed)) {
    return Diag::Msg(where + ": symmetric quantization needs signed W and X");
  }
  if (cfg.w.type_bits != cfg.x.type_bits) {
    return Diag::Msg(where + ": W and X must have the same QuantizeBit");
  }
  return Status::OK();
}

Expected<NodeQuantConfig> PresetConfig(const std::string& name) {
  NodeQuantConfig cfg;
  if (name == "asymm8_param0_input1") {
    cfg.w = QuantizeConfig{true, 0, 8};
    cfg.x = QuantizeConfig{false, 1, 8};
    cfg.symmetric = false;
    return cfg;
  }
  if (name == "symm16_param3_input3") {
    cfg.w = QuantizeConfig{true, 3, 16};
    cfg.x = QuantizeConfig{true, 3, 16};
    cfg.symmetric = true;
    return cfg;
  }
  return Diag::Msg("unknown qcfg preset '" + name + "' (choices: asymm8_param0_input1, symm16_param3_input3)");
}

Expected<QuantizeReport> Quantize(onnx::ModelProto* model, const QuantizeOptions& options) {
  NUPHAR_RETURN_IF_ERROR(ValidateNodeConfig(options.default_config, "default qcfg"));
  for (const auto& [output, cfg] : options.node_configs) {
    NUPHAR_RETURN_IF_ERROR(ValidateNodeConfig(cfg, "qcfg entry \"" + output + "\""));
  }
  // MatMulInteger needs opset 10 (E2).
  NUPHAR_ASSIGN_OR_RETURN(const OpsetRaise raise, RaiseOpsetForQuantization(model, 10));
  const bool upgrade = raise.raised() && raise.old_version < 10;
  MatMulQuantizer pass(model, options, raise.new_version, upgrade);
  NUPHAR_RETURN_IF_ERROR(RunPass(*model, pass).status());
  QuantizeReport report = pass.TakeReport();
  const int64_t ir = std::max<int64_t>(model->ir_version(), RequiredIrVersion(raise.new_version));
  model->set_ir_version(ir);
  report.opset = raise.new_version;
  report.ir_version = ir;
  return report;
}

}  // namespace nuphar::quant
