// Whole-Scan compilation (spec runtime.md R1, §8.2(1)): the kernel of com.nuphar.internal.JitScan,
// the partitioner's name for a Scan (opset 9+). When every node of the (rewritten) body is a
// generated elementwise kernel or a kernel generated code may call directly (the fused int8
// product), the whole time loop is one generated function (codegen_scan.h). Otherwise, and for
// calls it cannot take, the reference Scan kernel runs with the same body plan.
//
// A call runs step 0 on the reference executor (it validates the shapes and sizes every body
// value's buffer), then steps 1..seq-1 in the generated loop on those buffers: no per-step
// dispatch and no per-step allocation. Results are bit-identical to the reference Scan because
// the steps are the same kernels.
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <cstdio>
#include <cstring>
#include <unordered_map>

#include "graph/diagnostics.h"
#include "runtime/core/graph_plan.h"
#include "runtime/jit/codegen_scan.h"
#include "runtime/jit/jit.h"
#include "runtime/jit/jit_engine.h"
#include "runtime/jit/jit_kernel.h"
#include "runtime/jit/jit_runtime_abi.h"
#include "runtime/jit/partitioner.h"
#include "runtime/kernels/control_flow/control_flow_kernels.h"

namespace nuphar::jit {
namespace {

using ScanLoopFn = void (*)(float** slots, const int64_t* params, int64_t t0, int64_t seq, void* const* abi);

class JitScanKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<JitScanKernel>(new JitScanKernel());
    NUPHAR_ASSIGN_OR_RETURN(k->body_, node.CompileSubgraph("body"));
    NUPHAR_ASSIGN_OR_RETURN(k->fallback_, CreateScanWithBody(node, k->body_));
    k->num_states_ = static_cast<int>(node.num_inputs()) - static_cast<int>(node.GetInt("num_scan_inputs", 0));
    std::string why;
    if (!k->BuildLayout(node, &why)) {
      if (!node.setting("nuphar_dump_partition").empty())
        ReportDiagnostic(Severity::kNote, "nuphar_dump_partition: Scan '" + node.name() + "' runs step by step: " + why);
      return std::unique_ptr<OpKernel>(std::move(k));
    }
    auto context = std::make_unique<llvm::LLVMContext>();
    auto module = EmitScanLoop(k->layout_, kKernelEntry, *context);
    std::function<void(const std::string&)> dump;
    if (!node.setting("nuphar_dump_partition").empty())
      dump = [scan = node.name(), steps = k->layout_.steps.size()](const std::string& name) {
        ReportDiagnostic(Severity::kNote, "nuphar_dump_partition: Scan '" + scan + "' is one generated loop (" + name +
                                              ") of " + std::to_string(steps) + " step(s)");
      };
    NUPHAR_ASSIGN_OR_RETURN(k->code_, QueueCompile(node, std::move(context), std::move(module), dump));
    k->has_loop_ = true;
    // The body's kernels that the loop calls directly (fused products, MatMul by a constant) run
    // in generated code from step 1 on: count them with the generated kernels, not the reference.
    for (const PlanNode& n : k->body_->nodes()) {
      const std::string path = n.kernel->profile_path();
      if (path.rfind("jit", 0) == 0) continue;
      node.AddCounter("plan_nodes_" + path, -1);
      node.AddCounter("plan_nodes_jit_loop_call", 1);
    }
    k->node_name_ = node.name();
    k->compare_ = node.setting_is("nuphar_execution_mode", "compare");
    node.AddCounter("jit_scan_loops", 1);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    if (!code_->entry) return fallback_->Compute(ctx);
    Status s = RunLoop(ctx);
    ctx.SubgraphFrame(0, *body_).ClearInputs();  // step 0's frame is kept: it must not hold our inputs
    if (!s.ok()) return s.diag().reason == kFallback ? fallback_->Compute(ctx) : s;
    return compare_ ? Compare(ctx) : Status::OK();
  }

  ~JitScanKernel() override {
    if (compare_ && compared_runs_ > 0) {
      char diffs[96];
      std::snprintf(diffs, sizeof(diffs), "max abs diff %.3g", max_abs_);
      ReportDiagnostic(Severity::kNote, "nuphar compare: scan loop " + code_->name + " [" + node_name_ + "]: " +
                                            std::to_string(compared_runs_) + " run(s), " + diffs);
    }
  }

  const char* profile_path() const override { return has_loop_ ? "jit_scan" : "reference"; }

 private:
  // nuphar_execution_mode:compare: the reference Scan runs again with the same inputs (same body
  // plan, step by step); the loop's outputs must be identical, since its steps are the same
  // kernels. The outputs left are the reference's.
  Status Compare(KernelContext& ctx) const {
    std::vector<Tensor> generated;
    for (size_t i = 0; i < ctx.num_outputs(); ++i) {
      const Tensor* t = ctx.output(i);
      generated.push_back(t && t->defined() ? t->Clone() : Tensor());
    }
    NUPHAR_RETURN_IF_ERROR(fallback_->Compute(ctx));
    double worst = 0;
    for (size_t i = 0; i < generated.size(); ++i) {
      const Tensor* ref = ctx.output(i);
      if (!ref || !generated[i].defined()) continue;
      if (ref->shape() != generated[i].shape())
        return Diag::Msg("compare: scan loop " + code_->name + " output " + std::to_string(i) + " has shape " +
                         ShapeToString(generated[i].shape()) + ", the reference Scan " + ShapeToString(ref->shape()));
      const float* a = generated[i].data<float>();
      const float* b = ref->data<float>();
      for (int64_t k = 0; k < ref->size(); ++k)
        if (!(std::isnan(a[k]) && std::isnan(b[k]))) worst = std::max(worst, std::fabs(static_cast<double>(a[k]) - b[k]));
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      ++compared_runs_;
      max_abs_ = std::max(max_abs_, worst);
    }
    if (worst != 0)
      return Diag::Msg("compare: scan loop " + code_->name + " differs from the reference Scan by " + std::to_string(worst) +
                       " (absolute; the loop runs the same kernels and must be identical)");
    return Status::OK();
  }


 private:
  static constexpr const char* kFallback = "jit scan: fallback";

  JitScanKernel() = default;

  // Slots for every ref the steps and the loop touch; refuses bodies the loop cannot run.
  bool BuildLayout(const NodeInfo& node, std::string* why) {
    const GraphPlan& body = *body_;
    const int N = num_states_;
    const int M = static_cast<int>(body.input_names().size()) - N;
    const int K = static_cast<int>(body.output_names().size()) - N;
    if (node.opset() < 9) return *why = "Scan-8 (batched)", false;
    for (const char* attr : {"scan_input_axes", "scan_output_axes"})
      for (int64_t a : node.GetInts(attr))
        if (a != 0) return *why = std::string(attr) + " other than 0", false;
    if (N < 0 || M < 1 || K < 0 || static_cast<int>(node.num_outputs()) != N + K)
      return *why = "outputs or inputs not all present", false;
    if (body.nodes().empty()) return *why = "an empty body", false;
    std::unordered_map<int, int> slot_of;
    auto slot = [&](int ref) {
      if (ref == -1) return -1;
      auto [it, inserted] = slot_of.emplace(ref, layout_.num_slots);
      if (inserted) ++layout_.num_slots;
      return it->second;
    };
    for (const PlanNode& n : body.nodes()) {
      ScanLoopStep step;
      if (const auto* ew = dynamic_cast<const JitElementwiseKernel*>(n.kernel.get())) {
        if (!ew->ir()) return *why = "partition '" + n.name + "' has no generated code", false;
        if (!ew->ir()->AllFloat()) return *why = "partition '" + n.name + "' computes values other than float", false;
        if (ew->ir()->StridedInputs() > 0) return *why = "partition '" + n.name + "' reads a strided broadcast", false;
        step.elementwise = ew->ir();
      } else if (const DirectCall* dc = n.kernel->direct_call()) {
        step.direct = dc;
      } else {
        return *why = "node '" + n.name + "' (" + n.op_type + ") is not generated code", false;
      }
      // Implicit inputs that are the body's constants are a product partition's weights, which its
      // direct call reads from its state; any other is a subgraph's input the loop cannot pass.
      const bool reads_values = std::any_of(n.implicit_inputs.begin(), n.implicit_inputs.end(),
                                            [&](int ref) { return ref < body.num_locals(); });
      if (reads_values || n.run_with_next) return *why = "node '" + n.name + "' has a subgraph", false;
      for (int ref : n.inputs) step.input_slots.push_back(slot(ref));
      for (int ref : n.outputs) step.output_slots.push_back(slot(ref));
      steps_nodes_.push_back(&n);
      layout_.steps.push_back(std::move(step));
    }
    // Body values produced by the steps (body outputs must be among them).
    std::unordered_map<int, int> produced;
    for (const PlanNode& n : body.nodes())
      for (int ref : n.outputs)
        if (ref >= 0) produced[ref] = 1;
    std::unordered_map<int, int> output_uses;
    for (int i = 0; i < N + K; ++i) {
      const int ref = body.output_ref(static_cast<size_t>(i));
      if (!produced.count(ref))
        return *why = "body output " + std::to_string(i) + " is not computed by the body", false;
      if (++output_uses[ref] > 1 && i < N) return *why = "a state is also another body output", false;
    }
    std::vector<int64_t> in_rev = node.GetInts("scan_input_directions");
    std::vector<int64_t> out_rev = node.GetInts("scan_output_directions");
    for (int k = 0; k < N; ++k) {
      layout_.state_in.push_back(slot(body.input_slot(static_cast<size_t>(k))));
      const int out_ref = body.output_ref(static_cast<size_t>(k));
      layout_.state_out.push_back(slot(out_ref));
      bool is_scan_output = false;
      for (int j = 0; j < K; ++j) is_scan_output |= body.output_ref(static_cast<size_t>(N + j)) == out_ref;
      layout_.state_out_is_scan_output.push_back(is_scan_output);
    }
    for (int j = 0; j < M; ++j) {
      layout_.scan_in.push_back(slot(body.input_slot(static_cast<size_t>(N + j))));
      layout_.scan_in_reverse.push_back(j < static_cast<int>(in_rev.size()) && in_rev[j] != 0);
    }
    for (int k = 0; k < K; ++k) {
      const int ref = body.output_ref(static_cast<size_t>(N + k));
      for (int j = 0; j < k; ++j)
        if (body.output_ref(static_cast<size_t>(N + j)) == ref) return *why = "two scan outputs are one value", false;
      layout_.scan_out.push_back(slot(ref));
      layout_.scan_out_reverse.push_back(k < static_cast<int>(out_rev.size()) && out_rev[k] != 0);
    }
    refs_.assign(static_cast<size_t>(layout_.num_slots), 0);
    for (const auto& [ref, s] : slot_of) refs_[static_cast<size_t>(s)] = ref;
    layout_.AssignParams();
    return true;
  }

  // Step 0 on the reference executor, then the generated loop. Returns kFallback when the
  // actual shapes or types do not fit the loop (the caller then runs the reference Scan).
  Status RunLoop(KernelContext& ctx) const {
    const int N = num_states_, M = static_cast<int>(layout_.scan_in.size()),
              K = static_cast<int>(layout_.scan_out.size());
    auto fallback = [] { return Status(Diag::Msg(kFallback)); };
    int64_t seq = -1;
    for (int j = 0; j < M; ++j) {
      const Tensor* x = ctx.input(static_cast<size_t>(N + j));
      if (!x || x->dtype() != DType::kFloat || x->rank() < 1 || (seq >= 0 && x->dim(0) != seq)) return fallback();
      seq = x->dim(0);
    }
    for (int k = 0; k < N; ++k) {
      const Tensor* s = ctx.input(static_cast<size_t>(k));
      if (!s || s->dtype() != DType::kFloat) return fallback();
    }
    if (seq < 2) return fallback();

    // Step 0 on the reference executor: every body value gets its buffer and its shape, in the
    // body frame that the executing frame keeps between runs (its buffers are reused).
    Frame& frame = ctx.SubgraphFrame(0, *body_);
    std::vector<Tensor> step0_inputs(static_cast<size_t>(M));
    for (int k = 0; k < N; ++k) frame.SetInput(static_cast<size_t>(k), *ctx.input(static_cast<size_t>(k)));
    for (int j = 0; j < M; ++j) {
      const Tensor* x = ctx.input(static_cast<size_t>(N + j));
      std::vector<int64_t> shape(x->shape().begin() + 1, x->shape().end());
      step0_inputs[j] = Tensor(DType::kFloat, shape);
      const int64_t step = x->size() / seq;
      const int64_t pos = layout_.scan_in_reverse[j] ? seq - 1 : 0;
      std::memcpy(step0_inputs[j].raw(), x->data<float>() + pos * step, static_cast<size_t>(step) * sizeof(float));
      frame.SetInput(static_cast<size_t>(N + j), step0_inputs[j]);
    }
    NUPHAR_RETURN_IF_ERROR(frame.Execute());

    // Loop bounds of every step from step 0's values.
    std::vector<int64_t> params(static_cast<size_t>(layout_.num_params), 0);
    size_t scratch_bytes = 0;
    for (size_t s = 0; s < layout_.steps.size(); ++s) {
      const ScanLoopStep& step = layout_.steps[s];
      const PlanNode& node = *steps_nodes_[s];
      std::vector<const Tensor*> inputs;
      for (int ref : node.inputs) inputs.push_back(ref == -1 ? nullptr : frame.Get(ref));
      for (int ref : node.outputs)
        if (ref >= 0 && frame.Get(ref)->dtype() != DType::kFloat) return fallback();
      if (step.elementwise) {
        ElementwiseGeometry geo;
        const auto* kernel = static_cast<const JitElementwiseKernel*>(node.kernel.get());
        if (!kernel->Fits(inputs, &geo)) return fallback();
        params[step.params] = geo.rows;
        params[step.params + 1] = geo.cols;
        for (size_t i = 0; i < geo.input_cols().size(); ++i) params[step.params + 2 + i] = geo.input_cols()[i];
      } else {
        const Tensor* x = inputs.empty() ? nullptr : inputs[0];
        if (!x || x->rank() < 1 || x->shape().back() == 0) return fallback();
        if (step.direct->accepts && !step.direct->accepts(step.direct->state, inputs.data(), inputs.size()))
          return fallback();
        const int64_t rows = x->size() / x->shape().back();
        params[step.params] = rows;
        for (size_t i = 0; i < inputs.size(); ++i) params[step.params + 1 + i] = inputs[i] ? inputs[i]->size() : 0;
        scratch_bytes = std::max(scratch_bytes, step.direct->scratch_bytes(step.direct->state, rows));
        const int fn_param = ScanLoopLayout::DirectFnParam(step);
        params[fn_param] = reinterpret_cast<int64_t>(step.direct->fn);
        params[fn_param + 1] = reinterpret_cast<int64_t>(step.direct->state);
      }
    }

    // Slots: step 0's buffers; owned ping-pong buffers for the states; scan outputs in place.
    std::vector<float*> slots(static_cast<size_t>(layout_.num_slots), nullptr);
    for (size_t s = 0; s < slots.size(); ++s) {
      const Tensor* t = frame.Get(refs_[s]);
      slots[s] = t && t->defined() ? const_cast<float*>(static_cast<const float*>(t->raw())) : nullptr;
    }
    std::vector<Tensor> state_buffers(static_cast<size_t>(2 * N));
    for (int k = 0; k < N; ++k) {
      const Tensor& produced = *frame.Get(body_->output_ref(static_cast<size_t>(k)));
      if (produced.shape() != ctx.input(static_cast<size_t>(k))->shape()) return fallback();
      Tensor& first = state_buffers[2 * k];
      first = Tensor(DType::kFloat, produced.shape());
      std::memcpy(first.raw(), produced.raw(), produced.bytes());
      slots[static_cast<size_t>(layout_.state_in[k])] = first.data<float>();
      if (!layout_.state_out_is_scan_output[k]) {
        state_buffers[2 * k + 1] = Tensor(DType::kFloat, produced.shape());
        slots[static_cast<size_t>(layout_.state_out[k])] = state_buffers[2 * k + 1].data<float>();
      }
    }
    for (int j = 0; j < M; ++j) {
      const Tensor* x = ctx.input(static_cast<size_t>(N + j));
      params[layout_.ScanInParams(j)] = reinterpret_cast<int64_t>(x->data<float>());
      params[layout_.ScanInParams(j) + 1] = x->size() / seq;
    }
    std::vector<Tensor> unused_outputs(static_cast<size_t>(K));  // absent outputs share one frame tensor
    for (int k = 0; k < K; ++k) {
      const Tensor& v = *frame.Get(body_->output_ref(static_cast<size_t>(N + k)));
      std::vector<int64_t> shape = v.shape();
      shape.insert(shape.begin(), seq);
      Tensor* y = &unused_outputs[static_cast<size_t>(k)];
      if (ctx.output_needed(static_cast<size_t>(N + k)))
        y = ctx.Output(static_cast<size_t>(N + k), DType::kFloat, shape);
      else
        *y = Tensor(DType::kFloat, shape);
      const int64_t pos = layout_.scan_out_reverse[k] ? seq - 1 : 0;
      std::memcpy(y->data<float>() + pos * v.size(), v.raw(), v.bytes());
      params[layout_.ScanOutParams(k)] = reinterpret_cast<int64_t>(y->data<float>());
      params[layout_.ScanOutParams(k) + 1] = v.size();
    }
    void* scratch = scratch_bytes > 0 ? ctx.Scratch(scratch_bytes) : nullptr;
    params[0] = reinterpret_cast<int64_t>(scratch);

    reinterpret_cast<ScanLoopFn>(code_->entry)(slots.data(), params.data(), 1, seq, RuntimeAbiTable());

    for (int k = 0; k < N; ++k) {
      const Tensor* initial = ctx.input(static_cast<size_t>(k));
      Tensor* out = ctx.Output(static_cast<size_t>(k), DType::kFloat, initial->shape());
      std::memcpy(out->raw(), slots[static_cast<size_t>(layout_.state_in[k])], out->bytes());
    }
    return Status::OK();
  }

  std::shared_ptr<const GraphPlan> body_;
  std::unique_ptr<OpKernel> fallback_;
  int num_states_ = 0;
  ScanLoopLayout layout_;
  std::vector<const PlanNode*> steps_nodes_;
  std::vector<int> refs_;  ///< body ref per slot
  std::shared_ptr<KernelCode> code_ = std::make_shared<KernelCode>();
  bool has_loop_ = false;  ///< the body fits a generated loop (its code comes with the load jobs)
  std::string node_name_;
  bool compare_ = false;
  mutable std::mutex mutex_;
  mutable int64_t compared_runs_ = 0;
  mutable double max_abs_ = 0;
};

Expected<std::unique_ptr<OpKernel>> CreateJitScan(const NodeInfo& node) { return JitScanKernel::Create(node); }

}  // namespace

void RegisterJitScanKernel(KernelRegistry& registry) { registry.Add(kFusedDomain, kJitScanOp, CreateJitScan); }

}  // namespace nuphar::jit
