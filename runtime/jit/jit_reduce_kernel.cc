// The kernel of a reduction partition node (jit_reduce_kernel.h): one reduction node, or the
// layer-norm chain around two ReduceMeans (reduce_ir.h).
#include "runtime/jit/jit_reduce_kernel.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <onnx/onnx_pb.h>

#include <optional>

#include "graph/diagnostics.h"
#include "runtime/jit/codegen_reduce.h"
#include "runtime/jit/jit_kernel.h"
#include "runtime/jit/jit_runtime_abi.h"
#include "runtime/jit/partition_fallback.h"
#include "runtime/jit/reduce_ir.h"

namespace nuphar::jit {
namespace {

class JitReduceKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<JitReduceKernel>(new JitReduceKernel());
    NUPHAR_ASSIGN_OR_RETURN(k->fallback_, PartitionFallback::Create(node));
    auto ir = BuildIR(node);
    if (!ir) {  // the partitioner only forms partitions the builder takes; stay correct regardless
      ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + node.name() + " runs on the reference executor: " + ir.message());
      node.AddCounter("jit_refused_partitions", 1);
      return std::unique_ptr<OpKernel>(std::move(k));
    }
    k->ir_ = std::move(*ir);
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = EmitReduceKernel(k->ir_, kKernelEntry, *context);
    NUPHAR_ASSIGN_OR_RETURN(k->code_, QueuePartitionCompile(node, std::move(context), std::move(module),
                                                            k->ir_.ToText(), *k->fallback_));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    int64_t outer = 1, n = 1, inner = 1;
    if (!code_ || !code_->entry || !Fits(x, &outer, &n, &inner)) return fallback_->Run(ctx);
    int64_t shape[kMaxReduceRank];
    const size_t rank = ir_.OutputShape(x->shape(), shape);
    Tensor* y = ctx.Output(0, DType::kFloat, std::span<const int64_t>(shape, rank));
    reinterpret_cast<ReduceFn>(code_->entry)(x->data<float>(), y->data<float>(), outer, n, inner, RuntimeAbiTable());
    if (fallback_->compare()) return fallback_->Compare(ctx);
    return Status::OK();
  }

  const char* profile_path() const override { return "jit"; }

 private:
  using ReduceFn = void (*)(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, void* const* abi);
  JitReduceKernel() = default;

  // A float scalar the body reads at load time: its initializer, or a partition input the
  // session knows as a constant.
  static std::optional<float> ScalarConstant(const NodeInfo& node, const onnx::GraphProto& body, const std::string& name) {
    for (const auto& t : body.initializer())
      if (t.name() == name && t.data_type() == onnx::TensorProto::FLOAT && t.float_data_size() == 1) return t.float_data(0);
    for (int k = 0; k < body.input_size(); ++k)
      if (body.input(k).name() == name) {
        const Tensor* c = node.constant_input(static_cast<size_t>(k));
        if (c && c->dtype() == DType::kFloat && c->size() == 1) return c->data<float>()[0];
      }
    return std::nullopt;
  }

  static Expected<ReduceIR> BuildIR(const NodeInfo& node) {
    const onnx::GraphProto& body = *node.GetGraph("body");
    const onnx::NodeProto& op = body.node(0);
    if (body.input_size() < 1 || !body.input(0).type().tensor_type().has_shape())
      return Diag::Node(op, "jit: the input has no declared rank");
    const int opset = static_cast<int>(node.GetInt(kOnnxOpsetAttr, 0));
    if (const LayerNormNodes chain = FindLayerNormNodes(body); chain.mean) {
      if (op.input_size() < 1 || body.input(0).name() != op.input(0))
        return Diag::Node(op, "jit: the layer norm's input is not the kernel's first");
      if (chain.add->input_size() != 2 || chain.pow->input_size() != 2 || chain.variance->output_size() != 1)
        return Diag::Node(*chain.add, "jit: the layer norm's Add or Pow does not have two inputs");
      const std::string& eps_name = chain.add->input(0) == chain.variance->output(0) ? chain.add->input(1) : chain.add->input(0);
      const auto exponent = ScalarConstant(node, body, chain.pow->input(1));
      const auto epsilon = ScalarConstant(node, body, eps_name);
      if (!exponent || !epsilon) return Diag::Node(*chain.add, "jit: the layer norm's exponent or epsilon is not a constant");
      return BuildLayerNormIR(chain, body.input(0).type().tensor_type().shape(), opset, *exponent, *epsilon);
    }
    std::vector<int64_t> axes;
    const std::vector<int64_t>* axes_input = nullptr;
    for (const auto& t : body.initializer())
      if (op.input_size() > 1 && t.name() == op.input(1) && t.data_type() == onnx::TensorProto::INT64) {
        axes.assign(t.int64_data().begin(), t.int64_data().end());
        axes_input = &axes;
      }
    return BuildReduceIR(op, body.input(0).type().tensor_type().shape(), opset, axes_input);
  }

  // Whether the actual input fits the code: float of the IR's rank, with the static products the
  // code bakes in; the three products of the call when it does.
  bool Fits(const Tensor* x, int64_t* outer, int64_t* n, int64_t* inner) const {
    if (!x || x->dtype() != DType::kFloat || static_cast<int64_t>(x->shape().size()) != ir_.rank) return false;
    for (int64_t d = 0; d < ir_.rank; ++d) {
      const int64_t v = x->shape()[static_cast<size_t>(d)];
      *(d < ir_.begin ? outer : d < ir_.end ? n : inner) *= v;
    }
    if (IsPool(ir_.kind) && (x->shape()[2] < ir_.kernel_h || x->shape()[3] < ir_.kernel_w)) return false;
    return (ir_.outer < 0 || ir_.outer == *outer) && (ir_.n < 0 || ir_.n == *n) && (ir_.inner < 0 || ir_.inner == *inner);
  }

  ReduceIR ir_;
  std::unique_ptr<PartitionFallback> fallback_;
  std::shared_ptr<KernelCode> code_;
};

}  // namespace

bool IsReducePartition(const onnx::GraphProto& body) {
  return (body.node_size() == 1 && HasReduceGenerator(body.node(0).op_type())) || FindLayerNormNodes(body).mean;
}

Expected<std::unique_ptr<OpKernel>> CreateJitReduceKernel(const NodeInfo& node) { return JitReduceKernel::Create(node); }

}  // namespace nuphar::jit
