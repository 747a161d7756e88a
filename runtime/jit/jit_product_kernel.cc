// The kernel of a product partition node (jit_product_kernel.h).
#include "runtime/jit/jit_product_kernel.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <onnx/onnx_pb.h>

#include "graph/diagnostics.h"
#include "runtime/jit/codegen_product.h"
#include "runtime/jit/jit_kernel.h"
#include "runtime/jit/jit_runtime_abi.h"
#include "runtime/jit/partition_fallback.h"
#include "runtime/jit/product_ir.h"

namespace nuphar::jit {
namespace {

class JitProductKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<JitProductKernel>(new JitProductKernel());
    NUPHAR_ASSIGN_OR_RETURN(k->fallback_, PartitionFallback::Create(node));
    const onnx::GraphProto& body = *node.GetGraph("body");
    const OpKernel* product = k->fallback_->SoleKernel();
    k->product_ = product ? product->product_call() : nullptr;
    const int64_t rank = body.input_size() > 0 && body.input(0).type().tensor_type().has_shape()
                             ? body.input(0).type().tensor_type().shape().dim_size()
                             : -1;
    auto ir = k->product_ ? BuildProductIR(body.node(0), rank)
                          : Expected<ProductIR>(Diag::Node(body.node(0), "jit: its kernel offers no product call"));
    if (!ir) {  // the partitioner only forms products the builder takes; stay correct regardless
      ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + node.name() + " runs on the reference executor: " + ir.message());
      node.AddCounter("jit_refused_partitions", 1);
      k->product_ = nullptr;
      return std::unique_ptr<OpKernel>(std::move(k));
    }
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = EmitProductKernel(*ir, kKernelEntry, *context);
    NUPHAR_ASSIGN_OR_RETURN(k->code_, QueuePartitionCompile(node, std::move(context), std::move(module), ir->ToText(),
                                                            *k->fallback_));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!code_ || !code_->entry || !x || x->dtype() != DType::kFloat || x->rank() > ProductCall::kMaxRank)
      return fallback_->Run(ctx);
    const int rank = static_cast<int>(x->rank());
    int64_t shape[ProductCall::kMaxRank];
    size_t scratch_bytes = 0;
    ProductCall::Plan plan;
    const int out_rank = product_->prepare(product_->state, x->shape().data(), rank, shape, &plan, &scratch_bytes);
    if (out_rank == 0) return fallback_->Run(ctx);
    Tensor* y = ctx.Output(0, DType::kFloat, std::span<const int64_t>(shape, static_cast<size_t>(out_rank)));
    void* scratch = ctx.Scratch(scratch_bytes);
    const ProductInvocation invocation{product_, &plan};
    reinterpret_cast<ProductFn>(code_->entry)(&invocation, x->data<float>(), x->shape().data(), rank, y->data<float>(),
                                              scratch, RuntimeAbiTable());
    if (fallback_->compare()) return fallback_->Compare(ctx);
    return Status::OK();
  }

  const char* profile_path() const override { return "jit"; }
  /// Inside a Scan body the whole-Scan loop calls the product's own direct call (a MatMul by a
  /// constant matrix reads only input 0: its state holds B and the bias).
  const DirectCall* direct_call() const override {
    const OpKernel* product = product_ ? fallback_->SoleKernel() : nullptr;
    return product ? product->direct_call() : nullptr;
  }

 private:
  using ProductFn = void (*)(const ProductInvocation* call, const float* x, const int64_t* x_dims, int64_t rank, float* y,
                             void* scratch, void* const* abi);
  JitProductKernel() = default;

  std::unique_ptr<PartitionFallback> fallback_;
  const ProductCall* product_ = nullptr;  ///< the body kernel's (owned by fallback_'s plan)
  std::shared_ptr<KernelCode> code_;
};

}  // namespace

Expected<std::unique_ptr<OpKernel>> CreateJitProductKernel(const NodeInfo& node) { return JitProductKernel::Create(node); }

}  // namespace nuphar::jit
