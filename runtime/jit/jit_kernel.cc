// The kernel of an elementwise partition node (partitioner.h): builds the kernel IR of its body,
// compiles it at load time, and runs the generated function. Its PartitionFallback runs the body
// on the reference executor when the actual shapes do not fit the generated code's access
// pattern, and checks every generated run in nuphar_execution_mode:compare.
#include "runtime/jit/jit_kernel.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <mutex>

#include "graph/diagnostics.h"
#include "runtime/core/graph_plan.h"
#include "runtime/core/settings.h"
#include "runtime/jit/codegen_elementwise.h"
#include "runtime/jit/elementwise_ir.h"
#include "runtime/jit/jit.h"
#include "runtime/jit/jit_datamove_kernel.h"
#include "runtime/jit/jit_if_kernel.h"
#include "runtime/jit/jit_engine.h"
#include "runtime/jit/jit_product_kernel.h"
#include "runtime/jit/jit_reduce_kernel.h"
#include "runtime/jit/jit_runtime_abi.h"
#include "runtime/jit/partition_reference.h"
#include "runtime/jit/partitioner.h"
#include "runtime/jit/product_ir.h"

namespace nuphar::jit {
DumpOptions DumpOptionsFor(const NodeInfo& node) {
  DumpOptions dump;
  dump.ll = node.setting_is("codegen_dump_module", "ll");
  dump.asm_ = node.setting_is("codegen_dump_module", "asm");
  return dump;
}

Expected<std::shared_ptr<KernelCode>> QueueCompile(const NodeInfo& node, std::unique_ptr<llvm::LLVMContext> context,
                                                   std::unique_ptr<llvm::Module> module,
                                                   std::function<void(const std::string& name)> done) {
  // The job owns the module (std::function needs a copyable callable: shared ownership), and on
  // every path the module dies before its context (Input's destructor).
  struct Input {
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;
    ~Input() { module.reset(); }
  };
  auto input = std::make_shared<Input>();
  input->context = std::move(context);
  input->module = std::move(module);
  NUPHAR_ASSIGN_OR_RETURN(CodegenTarget target, ResolveTarget(node.setting("nuphar_codegen_target")));
  NUPHAR_ASSIGN_OR_RETURN(std::string name, NameKernel(*input->module, target));
  bool added = false;
  auto out = std::static_pointer_cast<KernelCode>(
      node.ShareLoadObject("jit_kernel_code:" + name, std::make_shared<KernelCode>(), &added));
  if (!added) {  // an identical kernel of this session queued it already
    node.AddCounter("jit_shared_kernels", 1);
    if (done) done(name);
    return out;
  }
  out->name = name;
  const CachePolicy policy = CachePolicyFor(node);
  NUPHAR_RETURN_IF_ERROR(node.DeferUntilLoaded([input, out, target, dump = DumpOptionsFor(node), policy,
                                                count = node.CounterSink(), reported = node.name(), done]() -> Status {
    const auto start = std::chrono::steady_clock::now();
    auto code = CompileKernel(std::move(input->context), std::move(input->module), out->name, target, dump, policy);
    if (!code) return Diag::Msg("node '" + reported + "': " + code.diag().reason);
    out->entry = (*code)->entry();
    switch ((*code)->source()) {
      case CodeSource::kCompiled: count("jit_compiled", 1); break;
      case CodeSource::kObjectCache: count("jit_from_cache", 1); break;
      case CodeSource::kSharedLibrary: count("jit_from_so", 1); break;
    }
    count("jit_compile_us",
          std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
    out->code = std::move(*code);
    if (done) done(out->name);
    return Status::OK();
  }));
  return out;
}

Expected<std::unique_ptr<OpKernel>> JitElementwiseKernel::Create(const NodeInfo& node) {
  auto k = std::unique_ptr<JitElementwiseKernel>(new JitElementwiseKernel());
  NUPHAR_ASSIGN_OR_RETURN(k->fallback_, PartitionFallback::Create(node));
  auto ir = BuildElementwiseIR(*node.GetGraph("body"), node.opset());
  if (!ir) {  // the partitioner only forms groups the builder takes; stay correct regardless
    ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + node.name() + " runs on the reference executor: " + ir.message());
    node.AddCounter("jit_refused_partitions", 1);
    return std::unique_ptr<OpKernel>(std::move(k));
  }
  k->ir_ = std::move(*ir);
  k->has_ir_ = true;

  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = EmitElementwiseKernel(k->ir_, kKernelEntry, *context);
  NUPHAR_ASSIGN_OR_RETURN(k->code_, QueuePartitionCompile(node, std::move(context), std::move(module), k->ir_.ToText(),
                                                          *k->fallback_));
  return std::unique_ptr<OpKernel>(std::move(k));
}

Expected<std::shared_ptr<KernelCode>> QueueKernelCompile(const NodeInfo& node, std::unique_ptr<llvm::LLVMContext> context,
                                                         std::unique_ptr<llvm::Module> module, const std::string& nodes,
                                                         std::string ir_text) {
  std::function<void(const std::string&)> dump_lower;
  if (!node.setting("codegen_dump_lower").empty())
    dump_lower = [nodes, text = std::move(ir_text)](const std::string& name) {
      ReportDiagnostic(Severity::kNote, "codegen_dump_lower: " + name + " (" + nodes + ")\n" + text);
    };
  NUPHAR_ASSIGN_OR_RETURN(auto code, QueueCompile(node, std::move(context), std::move(module), dump_lower));
  node.AddCounter("jit_kernels", 1);
  return code;
}

Expected<std::shared_ptr<KernelCode>> QueuePartitionCompile(const NodeInfo& node, std::unique_ptr<llvm::LLVMContext> context,
                                                            std::unique_ptr<llvm::Module> module, std::string ir_text,
                                                            PartitionFallback& fallback) {
  NUPHAR_ASSIGN_OR_RETURN(auto code, QueueKernelCompile(node, std::move(context), std::move(module), fallback.nodes(),
                                                        std::move(ir_text)));
  fallback.set_kernel_name(code->name);
  return code;
}

Status JitElementwiseKernel::Compute(KernelContext& ctx) const {
  if (!code_->entry) return fallback_->Run(ctx);
  const size_t num_inputs = ir_.inputs.size(), num_buffers = num_inputs + ir_.outputs.size();
  // Inputs first, then outputs: the generated function's buffer list (inline for the usual sizes).
  const Tensor* inputs_inline[ElementwiseGeometry::kInline];
  float* buffers_inline[2 * ElementwiseGeometry::kInline];
  std::vector<const Tensor*> inputs_heap;
  std::vector<float*> buffers_heap;
  const Tensor** inputs = inputs_inline;
  float** buffers = buffers_inline;
  if (num_inputs > ElementwiseGeometry::kInline) inputs = (inputs_heap.resize(num_inputs), inputs_heap.data());
  if (num_buffers > 2 * ElementwiseGeometry::kInline) buffers = (buffers_heap.resize(num_buffers), buffers_heap.data());
  for (size_t i = 0; i < num_inputs; ++i) inputs[i] = ctx.input(i);
  ElementwiseGeometry geo;
  if (!Fits(std::span<const Tensor* const>(inputs, num_inputs), &geo)) return fallback_->Run(ctx);
  // The generated function takes every buffer as float* and reads each with its IR type.
  for (size_t i = 0; i < num_inputs; ++i) buffers[i] = static_cast<float*>(const_cast<void*>(inputs[i]->raw()));
  for (size_t o = 0; o < ir_.outputs.size(); ++o)
    buffers[num_inputs + o] = static_cast<float*>(ctx.Output(o, ir_.TypeOf(ir_.outputs[o]), geo.shape())->raw());
  reinterpret_cast<ElementwiseFn>(code_->entry)(buffers, geo.rows, geo.cols, geo.input_cols().data(),
                                                RuntimeAbiTable());
  if (fallback_->compare()) return fallback_->Compare(ctx);
  return Status::OK();
}

// The broadcast result shape of the inputs (a sliced input counts as one of its parts), and
// whether each input is read as the IR says.
bool JitElementwiseKernel::Fits(std::span<const Tensor* const> inputs, ElementwiseGeometry* geo) const {
  size_t rank = 0;
  for (size_t i = 0; i < ir_.inputs.size(); ++i) {
    const Tensor* t = inputs[i];
    if (!t || t->dtype() != ir_.input_types[i]) return false;
    rank = std::max(rank, t->shape().size());
  }
  if (ir_.rank > 0 && rank != static_cast<size_t>(ir_.rank)) return false;  // strided: the geometry's layout
  const size_t ni = ir_.inputs.size();
  geo->rank_ = rank;
  geo->inputs_ = ni + ir_.StridedGeometrySize();
  int64_t* shape = ElementwiseGeometry::Resize(geo->shape_inline_, geo->shape_heap_, rank);
  int64_t* input_cols = ElementwiseGeometry::Resize(geo->cols_inline_, geo->cols_heap_, geo->inputs_);
  std::fill(shape, shape + rank, int64_t{1});
  for (size_t i = 0; i < ir_.inputs.size(); ++i) {
    if (ir_.inputs[i] == Access::kChannel) continue;  // [C] at dim 1: checked below
    const std::vector<int64_t>& s = inputs[i]->shape();
    const bool sliced = ir_.inputs[i] == Access::kSliced;
    if (sliced && (s.empty() || s.back() != ir_.input_widths[i])) return false;
    for (size_t d = 0; d < s.size(); ++d) {
      // A sliced input counts as one of its parts: its last dim is the part's width.
      const int64_t dim = sliced && d + 1 == s.size() ? ir_.slice_cols : s[d];
      int64_t& out = shape[rank - s.size() + d];
      if (dim == out || dim == 1) continue;
      if (out != 1) return false;
      out = dim;
    }
  }
  const std::span<const int64_t> result(shape, rank);
  const int64_t cols = rank == 0 ? 1 : shape[rank - 1];
  int64_t total = 1;
  for (int64_t d : result) total *= d;
  geo->cols = cols;
  geo->rows = cols == 0 ? 0 : total / cols;
  bool flat = true;  // no row, column or sliced input: one loop over every element
  for (size_t i = 0; i < ir_.inputs.size(); ++i) {
    const Tensor* t = inputs[i];
    const std::vector<int64_t>& s = t->shape();
    input_cols[i] = s.empty() ? 1 : s.back();
    switch (ir_.inputs[i]) {
      case Access::kFull:
        if (!std::equal(s.begin(), s.end(), result.begin(), result.end())) return false;
        break;
      case Access::kRow:
        if (s.empty() || s.back() != cols || t->size() != cols) return false;
        flat = false;
        break;
      case Access::kColumn:
        if (s.size() != rank || s.back() != 1 || t->size() != geo->rows) return false;
        flat = false;
        break;
      case Access::kScalar:
        if (t->size() != 1) return false;
        break;
      case Access::kSliced:
        if (s.size() != rank || cols != ir_.slice_cols || s.back() != ir_.input_widths[i] ||
            !std::equal(result.begin(), result.end() - 1, s.begin()))
          return false;
        flat = false;
        break;
      case Access::kChannel:
        if (rank < 3 || s.size() != 1 || s[0] != shape[1]) return false;
        flat = false;
        break;
      case Access::kStrided:
      case Access::kStridedColumn: {
        // Every dim broadcasts (the result shape above); the last must be read as the code bakes it.
        const int64_t last = s.empty() ? 1 : s.back();
        if (ir_.inputs[i] == Access::kStrided ? last != cols : last != 1) return false;
        flat = false;
        break;
      }
    }
  }
  if (ir_.rank > 0) {  // the strided geometry: the result's outer dims, then each strided input's strides
    ir_.FillStridedGeometry(result, [&](size_t i) { return std::span<const int64_t>(inputs[i]->shape()); },
                            input_cols + ni);
    // Baked into the code: a call of another geometry (a declared shape the actual contradicts).
    if (!ir_.static_geometry.empty() &&
        !std::equal(ir_.static_geometry.begin(), ir_.static_geometry.end(), input_cols + ni))
      return false;
  }
  if (flat) {
    geo->cols = total;
    geo->rows = total == 0 ? 0 : 1;
  }
  return true;
}

namespace {

Expected<std::unique_ptr<OpKernel>> CreateJitKernel(const NodeInfo& node) {
  if (node.has_attr(kDataMoveOpsetAttr)) return CreateJitDataMoveKernel(node);
  // A reduction partition (one Reduce*/Softmax/pool node, or a layer-norm chain) has its own kernel.
  if (const onnx::GraphProto* body = node.GetGraph("body"); body && IsReducePartition(*body))
    return CreateJitReduceKernel(node);
  // A product partition (one FusedConv / ConvTranspose / MatMul / MatMulAddBias) calls the product's core.
  if (const onnx::GraphProto* body = node.GetGraph("body"); body && IsProductPartition(*body))
    return CreateJitProductKernel(node);
  return JitElementwiseKernel::Create(node);
}

}  // namespace

void RegisterJitKernels(KernelRegistry& registry) {
  registry.Add(kFusedDomain, kJitKernelOp, CreateJitKernel);
  RegisterJitScanKernel(registry);
  registry.Add(kFusedDomain, kJitIfOp, CreateJitIfKernel);
}

}  // namespace nuphar::jit
