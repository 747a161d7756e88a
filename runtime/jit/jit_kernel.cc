// The kernel of a partition node (partitioner.h): builds the kernel IR of its body, compiles it
// at load time, and runs the generated function. The body also compiles on the reference
// executor, which runs it when the actual shapes do not fit the generated code's access
// pattern (declared shapes were wrong or too general) and, in nuphar_execution_mode:compare,
// after every generated run to check it (R1 tolerances: integer outputs identical, float outputs
// within 1e-5 relative).
#include "runtime/jit/jit_kernel.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <onnx/onnx_pb.h>

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
#include "runtime/jit/jit_engine.h"
#include "runtime/jit/jit_runtime_abi.h"
#include "runtime/jit/partition_reference.h"
#include "runtime/jit/partitioner.h"

namespace nuphar::jit {
namespace {

// R1: float outputs within 1e-5 relative (|jit - ref| <= 1e-5 * max(|ref|, 1)).
constexpr double kCompareRelTolerance = 1e-5;

}  // namespace

DumpOptions DumpOptionsFor(const NodeInfo& node) {
  DumpOptions dump;
  dump.ll = node.setting_is("codegen_dump_module", "ll");
  dump.asm_ = node.setting_is("codegen_dump_module", "asm");
  return dump;
}

Status QueueCompile(const NodeInfo& node, std::unique_ptr<llvm::LLVMContext> context,
                    std::unique_ptr<llvm::Module> module, std::shared_ptr<KernelCode> out,
                    std::function<void(const std::string& name)> done) {
  NUPHAR_ASSIGN_OR_RETURN(CodegenTarget target, ResolveTarget(node.setting("nuphar_codegen_target")));
  const CachePolicy policy = CachePolicyFor(node);
  // The job owns the module (std::function needs a copyable callable: shared ownership).
  struct Input {
    std::unique_ptr<llvm::LLVMContext> context;
    std::unique_ptr<llvm::Module> module;
    ~Input() { module.reset(); }  // before its context
  };
  auto input = std::make_shared<Input>();
  input->context = std::move(context);
  input->module = std::move(module);
  return node.DeferUntilLoaded([input, out, target, dump = DumpOptionsFor(node), policy, count = node.CounterSink(),
                                reported = node.name(), done]() -> Status {
    const auto start = std::chrono::steady_clock::now();
    auto code = CompileKernel(std::move(input->context), std::move(input->module), target, dump, policy);
    if (!code) return Diag::Msg("node '" + reported + "': " + code.diag().reason);
    out->entry = (*code)->entry();
    out->name = (*code)->name();
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
  });
}

Expected<std::unique_ptr<OpKernel>> JitElementwiseKernel::Create(const NodeInfo& node) {
  const onnx::GraphProto* body = node.GetGraph("body");
  if (!body) return node.Error("partition without a body");
  auto k = std::unique_ptr<JitElementwiseKernel>(new JitElementwiseKernel());
  for (const auto& n : body->node()) k->nodes_ += (k->nodes_.empty() ? "" : ", ") + n.name() + " (" + n.op_type() + ")";
  NUPHAR_ASSIGN_OR_RETURN(PartitionReference reference, PartitionReference::Create(node));
  k->reference_ = std::make_unique<PartitionReference>(std::move(reference));
  k->compare_ = node.setting_is("nuphar_execution_mode", "compare");
  auto ir = BuildElementwiseIR(*body);
  if (!ir) {  // the partitioner only forms groups the builder takes; stay correct regardless
    ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + node.name() + " runs on the reference executor: " + ir.message());
    node.AddCounter("jit_refused_partitions", 1);
    return std::unique_ptr<OpKernel>(std::move(k));
  }
  k->ir_ = std::move(*ir);
  k->has_ir_ = true;

  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = EmitElementwiseKernel(k->ir_, kKernelEntry, *context);
  std::function<void(const std::string&)> dump_lower;
  if (!node.setting("codegen_dump_lower").empty())
    dump_lower = [nodes = k->nodes_, text = k->ir_.ToText()](const std::string& name) {
      ReportDiagnostic(Severity::kNote, "codegen_dump_lower: " + name + " (" + nodes + ")\n" + text);
    };
  NUPHAR_RETURN_IF_ERROR(QueueCompile(node, std::move(context), std::move(module), k->code_, dump_lower));
  node.AddCounter("jit_kernels", 1);
  return std::unique_ptr<OpKernel>(std::move(k));
}

JitElementwiseKernel::~JitElementwiseKernel() {
  if (compare_ && compared_runs_ > 0)
    {
    char diffs[96];
    std::snprintf(diffs, sizeof(diffs), "max abs diff %.3g, max rel diff %.3g", max_abs_, max_rel_);
    ReportDiagnostic(Severity::kNote, "nuphar compare: " + code_->name + " [" + nodes_ + "]: " + std::to_string(compared_runs_) +
                                          " run(s), " + diffs);
  }
}

Status JitElementwiseKernel::Compute(KernelContext& ctx) const {
  if (!code_->entry) return RunReference(ctx);
  const Tensor* inputs_storage[16];
  std::vector<const Tensor*> inputs_heap;
  const Tensor** inputs = inputs_storage;
  if (ir_.inputs.size() > 16) {
    inputs_heap.resize(ir_.inputs.size());
    inputs = inputs_heap.data();
  }
  for (size_t i = 0; i < ir_.inputs.size(); ++i) inputs[i] = ctx.input(i);
  ElementwiseGeometry geo;
  if (!Fits(std::span<const Tensor* const>(inputs, ir_.inputs.size()), &geo)) return RunReference(ctx);
  std::vector<float*> buffers;
  buffers.reserve(ir_.inputs.size() + ir_.outputs.size());
  for (size_t i = 0; i < ir_.inputs.size(); ++i) buffers.push_back(const_cast<float*>(inputs[i]->data<float>()));
  for (size_t o = 0; o < ir_.outputs.size(); ++o)
    buffers.push_back(ctx.Output(o, DType::kFloat, geo.shape)->data<float>());
  reinterpret_cast<ElementwiseFn>(code_->entry)(buffers.data(), geo.rows, geo.cols, geo.input_cols.data(),
                                                RuntimeAbiTable());
  if (compare_) return Compare(ctx);
  return Status::OK();
}

// The broadcast result shape of the inputs (a sliced input counts as one of its parts), and
// whether each input is read as the IR says.
bool JitElementwiseKernel::Fits(std::span<const Tensor* const> inputs, ElementwiseGeometry* geo) const {
  std::vector<int64_t>* shape = &geo->shape;
  int64_t* rows = &geo->rows;
  int64_t* cols = &geo->cols;
  shape->clear();
  geo->input_cols.clear();
  for (size_t i = 0; i < ir_.inputs.size(); ++i) {
    const Tensor* t = inputs[i];
    if (!t || t->dtype() != DType::kFloat) return false;
    std::vector<int64_t> s = t->shape();
    if (ir_.inputs[i] == Access::kSliced) {
      if (s.empty() || s.back() != ir_.input_widths[i]) return false;
      s.back() = ir_.slice_cols;
    }
    if (s.size() > shape->size()) shape->insert(shape->begin(), s.size() - shape->size(), 1);
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& out = (*shape)[shape->size() - s.size() + d];
      if (s[d] == out || s[d] == 1) continue;
      if (out != 1) return false;
      out = s[d];
    }
  }
  *cols = shape->empty() ? 1 : shape->back();
  int64_t total = 1;
  for (int64_t d : *shape) total *= d;
  *rows = *cols == 0 ? 0 : total / *cols;
  bool flat = true;  // no row, column or sliced input: one loop over every element
  for (size_t i = 0; i < ir_.inputs.size(); ++i) {
    const Tensor* t = inputs[i];
    geo->input_cols.push_back(t->rank() == 0 ? 1 : t->shape().back());
    switch (ir_.inputs[i]) {
      case Access::kFull:
        if (t->shape() != *shape) return false;
        break;
      case Access::kRow:
        if (t->rank() == 0 || t->shape().back() != *cols || t->size() != *cols) return false;
        flat = false;
        break;
      case Access::kColumn:
        if (t->rank() != shape->size() || t->shape().back() != 1 || t->size() != *rows) return false;
        flat = false;
        break;
      case Access::kScalar:
        if (t->size() != 1) return false;
        break;
      case Access::kSliced:
        if (t->rank() != shape->size() || *cols != ir_.slice_cols || t->shape().back() != ir_.input_widths[i] ||
            !std::equal(shape->begin(), shape->end() - 1, t->shape().begin()))
          return false;
        flat = false;
        break;
    }
  }
  if (flat) {
    *cols = total;
    *rows = total == 0 ? 0 : 1;
  }
  return true;
}

Status JitElementwiseKernel::RunReference(KernelContext& ctx) const { return reference_->Run(ctx); }

Status JitElementwiseKernel::Compare(KernelContext& ctx) const {
  NUPHAR_ASSIGN_OR_RETURN(auto ref, reference_->Outputs(ctx));
  double worst_abs = 0, worst_rel = 0;
  for (size_t o = 0; o < ref.size(); ++o) {
    const Tensor& jit_out = *ctx.Output(o, DType::kFloat, ref[o].shape());  // same buffer, already written
    const float* a = jit_out.data<float>();
    const float* b = ref[o].data<float>();
    for (int64_t i = 0; i < ref[o].size(); ++i) {
      if (std::isnan(a[i]) && std::isnan(b[i])) continue;
      const double d = std::fabs(static_cast<double>(a[i]) - b[i]);
      worst_abs = std::max(worst_abs, d);
      // Relative to the reference value, and absolute below 1 (values near 0 have no
      // meaningful relative error).
      worst_rel = std::max(worst_rel, d / std::max(std::fabs(static_cast<double>(b[i])), 1.0));
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++compared_runs_;
    max_abs_ = std::max(max_abs_, worst_abs);
    max_rel_ = std::max(max_rel_, worst_rel);
  }
  if (worst_rel > kCompareRelTolerance)
    return Diag::Msg("compare: generated kernel " + code_->name + " differs from the reference by " +
                     std::to_string(worst_rel) + " (relative; tolerance 1e-5) on nodes " + nodes_);
  return Status::OK();
}

namespace {

Expected<std::unique_ptr<OpKernel>> CreateJitKernel(const NodeInfo& node) {
  if (node.has_attr(kDataMoveOpsetAttr)) return CreateJitDataMoveKernel(node);
  return JitElementwiseKernel::Create(node);
}

}  // namespace

void RegisterJitKernels(KernelRegistry& registry) {
  registry.Add(kFusedDomain, kJitKernelOp, CreateJitKernel);
  RegisterJitScanKernel(registry);
}

}  // namespace nuphar::jit
