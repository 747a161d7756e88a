// The reference executor's run of a partition body (partition_reference.h).
#include "runtime/jit/partition_reference.h"

#include "runtime/core/graph_plan.h"

namespace nuphar::jit {

Expected<PartitionReference> PartitionReference::Create(const NodeInfo& node) {
  NUPHAR_ASSIGN_OR_RETURN(std::shared_ptr<const GraphPlan> plan, node.CompileSubgraph("body"));
  for (const PlanNode& n : plan->nodes()) {
    node.AddCounter("plan_nodes", -1);
    node.AddCounter(std::string("plan_nodes_") + n.kernel->profile_path(), -1);
  }
  return PartitionReference(std::move(plan));
}

Expected<std::vector<Tensor>> PartitionReference::Outputs(KernelContext& ctx) const {
  Frame frame(*plan_, &ctx.frame());
  for (size_t i = 0; i < ctx.num_inputs(); ++i) frame.SetInput(i, ctx.input(i) ? *ctx.input(i) : Tensor());
  NUPHAR_RETURN_IF_ERROR(frame.Execute());
  std::vector<Tensor> outs;
  for (size_t o = 0; o < plan_->output_names().size(); ++o) outs.push_back(*frame.Get(plan_->output_ref(o)));
  return outs;
}

Status PartitionReference::Run(KernelContext& ctx) const {
  NUPHAR_ASSIGN_OR_RETURN(auto outs, Outputs(ctx));
  for (size_t o = 0; o < outs.size(); ++o) ctx.SetOutputAlias(o, outs[o]);
  return Status::OK();
}

const OpKernel* PartitionReference::SoleKernel() const {
  return plan_->nodes().size() == 1 ? plan_->nodes()[0].kernel.get() : nullptr;
}

}  // namespace nuphar::jit
