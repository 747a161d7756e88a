// If: runs then_branch or else_branch (compiled at load time, each in a frame that the executing
// frame keeps between runs) and aliases the branch's outputs as the node's outputs (no copy).
// Branches may produce different shapes. Refused: sequence/optional-typed branch outputs (opset
// 13/16 forms).
#include <onnx/onnx_pb.h>

#include "runtime/core/graph_plan.h"
#include "runtime/kernels/control_flow/control_flow_common.h"
#include "runtime/kernels/control_flow/control_flow_kernels.h"

namespace nuphar {
namespace {

class IfKernel final : public OpKernel {
 public:
  IfKernel(std::shared_ptr<const GraphPlan> then_plan, std::shared_ptr<const GraphPlan> else_plan)
      : then_(std::move(then_plan)), else_(std::move(else_plan)) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* cond = ctx.input(0);
    if (!cond) return Diag::Msg("If needs its cond input");
    if (cond->size() != 1) return Diag::Msg("cond must hold one element, got shape " + ShapeToString(cond->shape()));
    bool take_then = false;
    if (cond->dtype() == DType::kBool) {
      take_then = cond->data<uint8_t>()[0] != 0;
    } else {
      auto v = cond->ToDoubleVector();
      if (!v) return v.status();
      take_then = (*v)[0] != 0;
    }
    const GraphPlan& plan = take_then ? *then_ : *else_;
    Frame& branch = ctx.SubgraphFrame(take_then ? 0 : 1, plan);  // a branch has no inputs to bind
    NUPHAR_RETURN_IF_ERROR(branch.Execute());
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      const Tensor* v = branch.Get(plan.output_ref(i));
      if (!v || !v->defined()) return Diag::Msg("If branch '" + plan.name() + "' did not produce output " + std::to_string(i));
      ctx.SetOutputAlias(i, *v);
    }
    // A value the outputs share (a large one: SetOutputAlias) leaves the kept branch frame, as a
    // Run's outputs leave the pooled frame (session.cc): the frame must not decide from a relaxed
    // use count whether it may write into a buffer that another thread may still read.
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      const int ref = plan.output_ref(i);
      const Tensor* out = ctx.output(i);
      if (ref >= 0 && ref < plan.num_locals() && out && out->SharesBufferWith(branch.Local(ref)))
        branch.Local(ref) = Tensor();
    }
    return Status::OK();
  }

 private:
  std::shared_ptr<const GraphPlan> then_, else_;
};

}  // namespace

Expected<std::unique_ptr<OpKernel>> CreateIf(const NodeInfo& node) {
  for (const char* attr : {"then_branch", "else_branch"}) {
    const onnx::GraphProto* g = node.GetGraph(attr);
    if (!g) return node.Error(std::string("If needs a '") + attr + "' graph attribute");
    NUPHAR_RETURN_IF_ERROR(CheckTensorOnlyGraph(node, *g, attr));
    if (g->output_size() != static_cast<int>(node.num_outputs()))
      return node.Error(std::string(attr) + " has " + std::to_string(g->output_size()) + " outputs, the node has " +
                        std::to_string(node.num_outputs()));
  }
  NUPHAR_ASSIGN_OR_RETURN(auto then_plan, node.CompileSubgraph("then_branch"));
  NUPHAR_ASSIGN_OR_RETURN(auto else_plan, node.CompileSubgraph("else_branch"));
  return MakeKernel<IfKernel>(std::move(then_plan), std::move(else_plan));
}

}  // namespace nuphar
