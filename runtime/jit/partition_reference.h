// The reference side of a partition kernel (partitioner.h): the body compiled on the reference
// executor. Every generated kernel family runs it when a call's actual shapes do not fit its
// code, and nuphar_execution_mode:compare runs it after each generated run to check the code.
#pragma once

#include <memory>
#include <vector>

#include "graph/error.h"
#include "runtime/core/op_kernel.h"

namespace nuphar {
class GraphPlan;
}

namespace nuphar::jit {

class PartitionReference {
 public:
  /// Compiles the node's "body" graph. Its plan nodes are not nodes the session executes, so
  /// they are taken back out of the plan_nodes counters (perf_test's reference_nodes).
  static Expected<PartitionReference> Create(const NodeInfo& node);

  /// The body's outputs for the kernel's inputs, computed by the reference executor.
  Expected<std::vector<Tensor>> Outputs(KernelContext& ctx) const;
  /// Runs the body and makes its outputs the kernel's (aliased, no copy).
  Status Run(KernelContext& ctx) const;
  /// The body's kernel when the body is one node (a product partition calls its state), else null.
  const OpKernel* SoleKernel() const;

 private:
  explicit PartitionReference(std::shared_ptr<const GraphPlan> plan) : plan_(std::move(plan)) {}
  std::shared_ptr<const GraphPlan> plan_;
};

}  // namespace nuphar::jit
