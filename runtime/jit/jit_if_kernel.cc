// Whole-If kernel (jit_if_kernel.h). The reference If runs the chosen branch in a frame and its
// view kernels one by one; here the branch is a few shape computations and the outputs share
// the operands' buffers (SetOutputReshaped: the view rule of the reference kernels), so the
// common PyTorch squeeze-if costs neither a frame nor a dispatch nor a copy.
#include "runtime/jit/jit_if_kernel.h"

#include <onnx/onnx_pb.h>

#include <atomic>
#include <cstring>

#include "graph/diagnostics.h"
#include "runtime/jit/if_ir.h"
#include "runtime/kernels/control_flow/control_flow_kernels.h"

namespace nuphar::jit {
namespace {

class JitIfKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<JitIfKernel>(new JitIfKernel());
    NUPHAR_ASSIGN_OR_RETURN(k->reference_, CreateIf(node));  // compiles both branches
    k->name_ = node.name();
    k->compare_ = node.setting_is("nuphar_execution_mode", "compare");
    const std::vector<int64_t> ranks = node.GetInts(kIfOperandRanksAttr);
    std::vector<IfOperand> operands;
    for (size_t i = 1; i < node.num_inputs(); ++i)
      operands.push_back({node.proto().input(static_cast<int>(i)), node.input_type(i),
                          i - 1 < ranks.size() ? static_cast<int>(ranks[i - 1]) : -1});
    k->num_operands_ = operands.size();
    for (int b = 0; b < 2; ++b) {
      const onnx::GraphProto* g = node.GetGraph(b == 0 ? "then_branch" : "else_branch");
      auto ir = g ? BuildIfBranchIR(*g, node.opset(), operands) : Expected<IfBranchIR>(Diag::Msg("no branch graph"));
      if (!ir) {  // the partitioner only forms JitIf nodes the builder takes; stay correct regardless
        ReportDiagnostic(Severity::kWarning, "nuphar: warning: If '" + node.name() + "' runs on the reference executor: " + ir.message());
        node.AddCounter("jit_refused_partitions", 1);
        return std::unique_ptr<OpKernel>(std::move(k));
      }
      k->branches_[b] = std::move(*ir);
    }
    k->has_ir_ = true;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  ~JitIfKernel() override {
    if (compare_ && compared_runs_ > 0)
      ReportDiagnostic(Severity::kNote, "nuphar compare: whole If '" + name_ + "': " + std::to_string(compared_runs_.load()) +
                                            " run(s), identical");
  }

  Status Compute(KernelContext& ctx) const override {
    if (!has_ir_) return reference_->Compute(ctx);
    // The condition as the reference reads it; other element types are the reference's to convert.
    const Tensor* cond = ctx.input(0);
    if (!cond || cond->dtype() != DType::kBool || cond->size() != 1) return reference_->Compute(ctx);
    const IfBranchIR& branch = branches_[cond->data<uint8_t>()[0] != 0 ? 0 : 1];
    const Tensor* operands[kMaxIfValues];
    std::span<const int64_t> shapes[kMaxIfValues];
    for (size_t i = 0; i < num_operands_; ++i) {
      operands[i] = ctx.input(i + 1);
      if (!operands[i] || !operands[i]->defined()) return reference_->Compute(ctx);
      shapes[i] = operands[i]->shape();
    }
    int ranks[kMaxIfValues];
    int64_t dims[kMaxIfValues * kMaxMoveRank];
    if (!PlanIfBranch(branch, std::span<const std::span<const int64_t>>(shapes, num_operands_), ranks, dims))
      return reference_->Compute(ctx);
    for (size_t o = 0; o < branch.outputs.size(); ++o) {
      const size_t v = static_cast<size_t>(branch.outputs[o]);
      ctx.SetOutputReshaped(o, *operands[branch.output_operands[o]],
                            std::span<const int64_t>(dims + v * kMaxMoveRank, static_cast<size_t>(ranks[v])));
    }
    return compare_ ? Compare(ctx) : Status::OK();
  }

  const char* profile_path() const override { return has_ir_ ? "jit_view" : "reference"; }

 private:
  JitIfKernel() = default;

  // nuphar_execution_mode:compare: the reference If runs again with the same inputs; its outputs
  // must be byte-identical (views move no value). The outputs left are the reference's.
  Status Compare(KernelContext& ctx) const {
    std::vector<Tensor> generated;
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      const Tensor* t = ctx.output(i);
      generated.push_back(t && t->defined() ? t->Clone() : Tensor());
    }
    NUPHAR_RETURN_IF_ERROR(reference_->Compute(ctx));
    for (size_t i = 0; i < generated.size(); ++i) {
      const Tensor* ref = ctx.output(i);
      if (!ref || !ref->defined() || !generated[i].defined()) continue;
      if (ref->dtype() != generated[i].dtype() || ref->shape() != generated[i].shape() ||
          std::memcmp(ref->raw(), generated[i].raw(), ref->bytes()) != 0)
        return Diag::Msg("compare: whole If '" + name_ + "' output " + std::to_string(i) + " (" +
                         ShapeToString(generated[i].shape()) + ") differs from the reference If's (" +
                         ShapeToString(ref->shape()) + ")");
    }
    ++compared_runs_;
    return Status::OK();
  }

  std::unique_ptr<OpKernel> reference_;  ///< the reference If over the same (compiled) branches
  IfBranchIR branches_[2];               ///< then, else
  size_t num_operands_ = 0;
  bool has_ir_ = false;
  bool compare_ = false;
  std::string name_;
  mutable std::atomic<int64_t> compared_runs_{0};
};

}  // namespace

Expected<std::unique_ptr<OpKernel>> CreateJitIfKernel(const NodeInfo& node) { return JitIfKernel::Create(node); }

}  // namespace nuphar::jit
