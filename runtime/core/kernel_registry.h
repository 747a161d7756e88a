// The kernel registry: which factory builds the kernel of an (domain, op, opset, input types)
// node. Families register into it (runtime/kernels/kernel.h, runtime/jit/); the graph compiler
// and the JIT partitioner ask it whether a node is supported. Modelled on ONNX Runtime's
// KernelRegistry: each entry covers an opset range and, optionally, the element types of its
// first input, so "supported?" has one answer with a reason.
//
// Not thread-safe while being filled; immutable (and safe to share) once a session uses it.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/core/op_kernel.h"

namespace nuphar {

/// One registration.
struct KernelDef {
  std::string domain;   ///< "" (= "ai.onnx") for ONNX ops
  std::string op_type;
  int since_version = 1;           ///< first opset version the factory implements
  int until_version = INT_MAX;     ///< last one (inclusive)
  /// Element types the first input may have (bit i = DType i); 0 = any type, the factory decides.
  uint32_t input0_types = 0;
  KernelFactory factory = nullptr;
};

class KernelRegistry {
 public:
  /// Every opset version, any input type.
  void Add(const std::string& domain, const std::string& op_type, KernelFactory factory);
  void Add(KernelDef def);

  /// The factory for this op at `opset` (input types not checked), or null.
  KernelFactory Find(const std::string& domain, const std::string& op_type, int opset) const;
  /// Whether any opset of the op has a factory (ONNX function expansion asks this).
  bool HasOp(const std::string& domain, const std::string& op_type) const;
  /// Null when a registered factory takes the node; otherwise why not (no kernel for the op,
  /// none for this opset, or none for the first input's element type).
  std::optional<std::string> WhyUnsupported(const std::string& domain, const std::string& op_type, int opset,
                                            DType input0) const;
  /// "domain:op" of every registered op, sorted.
  std::vector<std::string> OpNames() const;

 private:
  static std::string Key(const std::string& domain, const std::string& op_type);
  std::unordered_map<std::string, std::vector<KernelDef>> defs_;
};

}  // namespace nuphar
