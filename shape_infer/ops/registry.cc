// The (domain, op_type) -> handler table, filled once from the op family files.
#include "shape_infer/ops/registry.h"

#include <map>
#include <set>
#include <utility>

namespace nuphar::shape_infer {

struct HandlerTable::Impl {
  std::map<std::pair<std::string, std::string>, OpHandler> handlers;
};

HandlerTable::HandlerTable() : impl_(new Impl()) {}

static std::string NormalizeDomain(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }

void HandlerTable::Add(const std::string& domain, const std::string& op_type, OpHandler h) {
  impl_->handlers[{NormalizeDomain(domain), op_type}] = h;
}

OpHandler HandlerTable::Find(const std::string& domain, const std::string& op_type) const {
  auto it = impl_->handlers.find({NormalizeDomain(domain), op_type});
  return it == impl_->handlers.end() ? nullptr : it->second;
}

const HandlerTable& Handlers() {
  static const HandlerTable* table = [] {
    auto* t = new HandlerTable();
    RegisterElementwiseHandlers(*t);
    RegisterShapeValueHandlers(*t);
    RegisterReshapeHandlers(*t);
    RegisterSliceGatherHandlers(*t);
    RegisterConvPoolHandlers(*t);
    RegisterMatMulHandlers(*t);
    RegisterMiscHandlers(*t);
    RegisterControlFlowHandlers(*t);
    RegisterContribHandlers(*t);
    RegisterOpset18Handlers(*t);
    return t;
  }();
  return *table;
}

OpHandler FindHandler(const std::string& domain, const std::string& op_type) {
  return Handlers().Find(domain, op_type);
}

bool SkipsOnnxInference(const std::string& domain, const std::string& op_type) {
  static const std::set<std::string> kOnnx = {"If", "Loop", "Scan", "SplitToSequence"};
  static const std::set<std::string> kMs = {"Attention", "BiasGelu", "EmbedLayerNormalization", "FastGelu", "Gelu",
                                            "LayerNormalization", "LongformerAttention", "SkipLayerNormalization"};
  std::string d = NormalizeDomain(domain);
  if (d.empty()) return kOnnx.count(op_type) > 0;
  if (d == "ai.onnx.ml") return op_type == "ZipMap";
  return d == "com.microsoft" && kMs.count(op_type) > 0;
}

bool IsMergeOp(const std::string& domain, const std::string& op_type) {
  static const std::set<std::string> kOnnx = {"Add", "Sub", "Mul", "Div", "MatMul", "MatMulInteger", "Where", "Sum",
                                              "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "Min",
                                              "Max"};
  std::string d = NormalizeDomain(domain);
  if (d.empty()) return kOnnx.count(op_type) > 0;
  return d == "com.microsoft" && op_type == "MatMulInteger16";
}

}  // namespace nuphar::shape_infer
