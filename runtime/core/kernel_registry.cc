// Kernel lookup by op, opset range and first-input type (runtime/core/kernel_registry.h).
#include "runtime/core/kernel_registry.h"

#include <algorithm>

namespace nuphar {

std::string KernelRegistry::Key(const std::string& domain, const std::string& op_type) {
  return (domain == "ai.onnx" ? std::string() : domain) + ":" + op_type;
}

void KernelRegistry::Add(const std::string& domain, const std::string& op_type, KernelFactory factory) {
  KernelDef def;
  def.domain = domain;
  def.op_type = op_type;
  def.factory = factory;
  Add(std::move(def));
}

void KernelRegistry::Add(KernelDef def) {
  NUPHAR_CHECK(def.factory != nullptr, "a kernel definition needs a factory");
  NUPHAR_CHECK(def.since_version <= def.until_version, "empty opset range");
  defs_[Key(def.domain, def.op_type)].push_back(std::move(def));
}

KernelFactory KernelRegistry::Find(const std::string& domain, const std::string& op_type, int opset) const {
  auto it = defs_.find(Key(domain, op_type));
  if (it == defs_.end()) return nullptr;
  for (const KernelDef& d : it->second)
    if (opset >= d.since_version && opset <= d.until_version) return d.factory;
  return nullptr;
}

bool KernelRegistry::HasOp(const std::string& domain, const std::string& op_type) const {
  return defs_.count(Key(domain, op_type)) > 0;
}

std::optional<std::string> KernelRegistry::WhyUnsupported(const std::string& domain, const std::string& op_type,
                                                          int opset, DType input0) const {
  auto it = defs_.find(Key(domain, op_type));
  if (it == defs_.end()) return "no kernel for op '" + op_type + "'";
  bool opset_matched = false;
  for (const KernelDef& d : it->second) {
    if (opset < d.since_version || opset > d.until_version) continue;
    opset_matched = true;
    const auto bit = static_cast<uint32_t>(input0);
    if (d.input0_types == 0 || input0 == DType::kUndefined || (bit < 32 && (d.input0_types >> bit) & 1u))
      return std::nullopt;
  }
  if (!opset_matched) return "no kernel for op '" + op_type + "' at opset " + std::to_string(opset);
  return "no kernel for op '" + op_type + "' with input type " + DTypeName(input0);
}

std::vector<std::string> KernelRegistry::OpNames() const {
  std::vector<std::string> names;
  for (const auto& e : defs_) names.push_back(e.first);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace nuphar
