// Compare mode and fallback of a generated partition kernel: its body's reference run
// (PartitionReference) plus nuphar_execution_mode:compare's check of every generated run against
// it (R1 tolerances: float outputs within 1e-5 relative), the worst difference reported when the
// kernel is destroyed. One per kernel; Compare may run on several threads at once (its
// statistics are locked).
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/core/op_kernel.h"
#include "runtime/jit/partition_reference.h"

namespace nuphar::jit {

class PartitionFallback {
 public:
  /// The node's body on the reference executor (PartitionReference::Create).
  static Expected<std::unique_ptr<PartitionFallback>> Create(const NodeInfo& node);
  ~PartitionFallback();

  /// "name (Op), name (Op)": the body's nodes, for reports.
  const std::string& nodes() const { return nodes_; }
  bool compare() const { return compare_; }
  /// The name compare reports use (the generated kernel's k_<hash>); set once its code is named.
  void set_kernel_name(std::string name) { kernel_name_ = std::move(name); }

  /// The body's outputs on the reference executor for the node's current inputs.
  Expected<std::vector<Tensor>> ReferenceOutputs(KernelContext& ctx) const;
  /// Runs the body on the reference executor and makes its outputs the node's.
  Status Run(KernelContext& ctx) const;
  /// PartitionReference::SoleKernel.
  const OpKernel* SoleKernel() const { return reference_.SoleKernel(); }
  /// Checks the outputs the generated code wrote against the reference's: float within 1e-5
  /// relative, integers and bools identical.
  Status Compare(KernelContext& ctx) const;

 private:
  explicit PartitionFallback(PartitionReference reference) : reference_(std::move(reference)) {}
  std::string nodes_;
  std::string kernel_name_;
  PartitionReference reference_;
  bool compare_ = false;
  mutable std::mutex mutex_;
  mutable int64_t compared_runs_ = 0;
  mutable double max_abs_ = 0, max_rel_ = 0;
  mutable bool compared_floats_ = false;  ///< a float output was compared (else the report says "identical")
};

}  // namespace nuphar::jit
