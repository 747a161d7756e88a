// Data-movement partition kernels (jit_datamove_kernel.h).
//
// Identical kernels of a session (the same IR text for the same target) share one compiled
// function (QueueCompile), so a model's many identical Slices or Transposes cost one compile.
#include "runtime/jit/jit_datamove_kernel.h"

#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "graph/diagnostics.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/jit/codegen_datamove.h"
#include "runtime/jit/datamove_ir.h"
#include "runtime/jit/jit_kernel.h"
#include "runtime/jit/partition_reference.h"
#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::jit {
namespace {

using MoveFn = int32_t (*)(void* const* buffers, const int64_t* numbers);

class JitDataMoveKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node);
  ~JitDataMoveKernel() override {
    if (compare_ && compared_runs_ > 0)
      ReportDiagnostic(Severity::kNote, "nuphar compare: " + nodes_ + ": " + std::to_string(compared_runs_.load()) +
                                            " run(s), identical");
  }
  Status Compute(KernelContext& ctx) const override;
  const char* profile_path() const override { return has_ir_ && op_ == MoveOp::kView ? "jit_view" : "jit"; }

 private:
  JitDataMoveKernel(PartitionReference reference) : reference_(std::move(reference)) {}
  /// Fills the per-call fields below from ir_ (after the IR is built).
  void Prepare();
  const Tensor* Operand(KernelContext& ctx, int i) const {
    const int in = operand_input_[i];
    return in >= 0 ? ctx.input(static_cast<size_t>(in)) : &constants_[static_cast<size_t>(i)];
  }
  Status Compare(KernelContext& ctx) const;
  struct ComputedValues {
    int64_t storage[4][kMaxMoveRank];
    MoveParams params;
  };
  bool ReadComputedParams(const Tensor* const* operands, ComputedValues* out) const;

  // The plan of the first call's shapes, kept: a streaming model calls with the same shapes
  // every frame, and then a call compares its shapes and reuses the numbers instead of planning
  // (published once, immutable, freed with the kernel: concurrent Runs read it without locks).
  struct CachedPlan {
    int rank[kMaxMoveOperands];
    std::vector<int64_t> dims;      ///< the operands' dims, concatenated
    int64_t out_shape[kMaxMoveRank * 2];
    std::vector<int64_t> numbers;
  };
  const CachedPlan* FindCachedPlan(const std::span<const int64_t>* shapes, size_t count) const {
    const CachedPlan* c = cached_.load(std::memory_order_acquire);
    if (!c) return nullptr;
    size_t at = 0;
    for (size_t i = 0; i < count; ++i) {
      if (static_cast<size_t>(c->rank[i]) != shapes[i].size() ||
          !std::equal(shapes[i].begin(), shapes[i].end(), c->dims.begin() + static_cast<std::ptrdiff_t>(at)))
        return nullptr;
      at += shapes[i].size();
    }
    return c;
  }
  void CachePlan(const std::span<const int64_t>* shapes, size_t count, const int64_t* numbers,
                 const int64_t* out_shape) const {
    if (cached_.load(std::memory_order_relaxed)) return;
    auto plan = std::make_unique<CachedPlan>();
    for (size_t i = 0; i < count; ++i) {
      plan->rank[i] = static_cast<int>(shapes[i].size());
      plan->dims.insert(plan->dims.end(), shapes[i].begin(), shapes[i].end());
    }
    std::copy(out_shape, out_shape + out_rank_, plan->out_shape);
    if (numbers) plan->numbers.assign(numbers, numbers + ir_.numbers.size());  // views have none
    const CachedPlan* expected = nullptr;
    if (cached_.compare_exchange_strong(expected, plan.get(), std::memory_order_acq_rel)) owned_plan_ = std::move(plan);
  }
  mutable std::atomic<const CachedPlan*> cached_{nullptr};
  mutable std::unique_ptr<CachedPlan> owned_plan_;  ///< written once, by the thread that published it

  // What every call reads, together at the front of the object: a streaming model runs a
  // hundred of these per frame, and each cache line a call touches is a likely miss there (a
  // first layout behind vectors and the shared code cost 0.1 us per node on Silero v3.1).
  mutable std::atomic<void*> entry_{nullptr};  ///< code_->entry, cached
  MoveOp op_ = MoveOp::kView;
  bool has_ir_ = false;
  bool computed_ = false;
  bool compare_ = false;
  int8_t out_rank_ = 0;
  int8_t count_ = 0;                           ///< operands
  int8_t operand_input_[kMaxMoveOperands];     ///< per operand: the kernel input, or -1 for constants_
  uint8_t checks_ = 0;                         ///< baked numbers a call checks, in check_slot_/check_value_
  static constexpr int kInlineChecks = 8;
  uint8_t check_slot_[kInlineChecks];
  int64_t check_value_[kInlineChecks];
  std::vector<std::pair<size_t, int64_t>> more_checks_;  ///< beyond kInlineChecks

  PartitionReference reference_;
  DataMoveIR ir_;
  std::vector<Tensor> constants_;      ///< per operand
  DType out_dtype_ = DType::kUndefined;
  std::shared_ptr<KernelCode> code_;  ///< shared with identical kernels of the session (QueueCompile)
  std::string nodes_;
  mutable std::atomic<int64_t> compared_runs_{0};
};

Expected<std::unique_ptr<OpKernel>> JitDataMoveKernel::Create(const NodeInfo& node) {
  const onnx::GraphProto* body = node.GetGraph("body");
  if (!body || body->node_size() != 1) return node.Error("data-movement partition without a one-node body");
  NUPHAR_ASSIGN_OR_RETURN(PartitionReference reference, PartitionReference::Create(node));
  auto k = std::unique_ptr<JitDataMoveKernel>(new JitDataMoveKernel(std::move(reference)));
  const onnx::NodeProto& n = body->node(0);
  k->nodes_ = n.name() + " (" + n.op_type() + ")";
  k->compare_ = node.setting_is("nuphar_execution_mode", "compare");

  // The node's inputs as the body declares them: initializers are constants, the rest inputs.
  std::vector<MoveOperand> operands(static_cast<size_t>(n.input_size()));
  std::vector<Tensor> constants(operands.size());
  std::vector<int> input_of(operands.size(), -1);
  for (int i = 0; i < n.input_size(); ++i) {
    const std::string& name = n.input(i);
    MoveOperand& op = operands[static_cast<size_t>(i)];
    for (const auto& init : body->initializer()) {
      if (init.name() != name) continue;
      NUPHAR_ASSIGN_OR_RETURN(constants[static_cast<size_t>(i)], TensorFromProto(init));
      op.constant = &constants[static_cast<size_t>(i)];
      op.dtype = op.constant->dtype();
      op.has_shape = true;
      op.dims = op.constant->shape();
      op.dim_params.assign(op.dims.size(), "");
    }
    for (int b = 0; b < body->input_size() && !op.constant; ++b) {
      const auto& vi = body->input(b);
      if (vi.name() != name) continue;
      input_of[static_cast<size_t>(i)] = b;
      const auto& tt = vi.type().tensor_type();
      op.dtype = static_cast<DType>(tt.elem_type());
      op.has_shape = tt.has_shape();
      for (const auto& d : tt.shape().dim()) {
        op.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
        op.dim_params.push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
  }
  const auto& out_type = body->output(0).type().tensor_type();
  k->out_dtype_ = static_cast<DType>(out_type.elem_type());
  auto ir = BuildDataMoveIR(n, static_cast<int>(node.GetInt(kDataMoveOpsetAttr, 0)), operands, k->out_dtype_);
  if (!ir) {  // the partitioner only forms partitions the builder takes; stay correct regardless
    ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + node.name() + " runs on the reference executor: " + ir.message());
    node.AddCounter("jit_refused_partitions", 1);
    return std::unique_ptr<OpKernel>(std::move(k));
  }
  k->ir_ = std::move(*ir);
  for (size_t i = 0; i < k->ir_.operand_node_input.size(); ++i) {
    const int node_input = k->ir_.operand_node_input[i];
    k->operand_input_[i] = static_cast<int8_t>(input_of[static_cast<size_t>(node_input)]);
    k->constants_.push_back(std::move(constants[static_cast<size_t>(node_input)]));
  }
  k->Prepare();
  if (k->ir_.op == MoveOp::kView) return std::unique_ptr<OpKernel>(std::move(k));  // no code

  const std::string text = k->ir_.ToText();
  auto context = std::make_unique<llvm::LLVMContext>();
  auto module = EmitDataMoveKernel(k->ir_, kKernelEntry, *context);
  NUPHAR_ASSIGN_OR_RETURN(k->code_, QueueKernelCompile(node, std::move(context), std::move(module), k->nodes_, text));
  return std::unique_ptr<OpKernel>(std::move(k));
}

void JitDataMoveKernel::Prepare() {
  has_ir_ = true;
  op_ = ir_.op;
  computed_ = ir_.computed_params;
  out_rank_ = static_cast<int8_t>(ir_.out_rank);
  count_ = static_cast<int8_t>(ir_.num_operands);
  for (size_t n = 0; n < ir_.numbers.size(); ++n) {
    if (!ir_.checked[n]) continue;
    if (checks_ < kInlineChecks) {
      check_slot_[checks_] = static_cast<uint8_t>(n);
      check_value_[checks_++] = ir_.numbers[n];
    } else {
      more_checks_.emplace_back(n, ir_.numbers[n]);
    }
  }
}

Status JitDataMoveKernel::Compute(KernelContext& ctx) const {
  if (!has_ir_) return reference_.Run(ctx);
  if (op_ == MoveOp::kView && !computed_) {  // the common view: as little as the reference does
    const Tensor* x = Operand(ctx, 0);
    if (!x) return reference_.Run(ctx);
    const std::span<const int64_t> x_shape = x->shape();
    if (const CachedPlan* c = FindCachedPlan(&x_shape, 1)) {
      ctx.SetOutputReshaped(0, *x, std::span<const int64_t>(c->out_shape, static_cast<size_t>(out_rank_)));
      return Status::OK();
    }
    int64_t out_shape[kMaxMoveRank * 2];
    if (!PlanDataMove(ir_, std::span<const std::span<const int64_t>>(&x_shape, 1), nullptr, out_shape))
      return reference_.Run(ctx);
    CachePlan(&x_shape, 1, nullptr, out_shape);
    ctx.SetOutputReshaped(0, *x, std::span<const int64_t>(out_shape, static_cast<size_t>(out_rank_)));
    return Status::OK();
  }
  const size_t count = static_cast<size_t>(count_);
  const Tensor* operands[kMaxMoveOperands];
  std::span<const int64_t> shapes[kMaxMoveOperands];
  void* buffers[kMaxMoveOperands + 1];
  for (size_t i = 0; i < count; ++i) {
    const Tensor* t = Operand(ctx, static_cast<int>(i));
    if (!t) return reference_.Run(ctx);
    operands[i] = t;
    shapes[i] = t->shape();
    buffers[i] = const_cast<void*>(t->raw());
  }
  // The element types the code was generated for (of the data operands: computed parameters
  // follow them).
  const bool metadata = op_ == MoveOp::kShape || op_ == MoveOp::kSize;
  const bool fill = op_ == MoveOp::kFill;  // reads only the values of its computed dims
  const size_t data_operands = op_ == MoveOp::kConcat || op_ == MoveOp::kScatter ? count : op_ == MoveOp::kGather ? 2 : 1;
  for (size_t i = 0; i < data_operands && !metadata && !fill; ++i) {
    const bool index = op_ == MoveOp::kGather && i == 1;
    const DType t = operands[i]->dtype();
    const bool fits = index ? DTypeSize(t) == static_cast<size_t>(ir_.index_bytes) && (t == DType::kInt32 || t == DType::kInt64)
                      : op_ == MoveOp::kCast ? t == ir_.cast_from
                                             : t == operands[0]->dtype() && DTypeSize(t) == static_cast<size_t>(ir_.elem_bytes);
    if (!fits) return reference_.Run(ctx);
  }
  int64_t plan_numbers[kMaxPlanNumbers];
  int64_t plan_out_shape[kMaxMoveRank * 2];
  const int64_t* numbers = plan_numbers;
  const int64_t* out_shape = plan_out_shape;
  const CachedPlan* cached = computed_ ? nullptr : FindCachedPlan(shapes, count);
  if (cached) {
    numbers = cached->numbers.data();
    out_shape = cached->out_shape;
  } else {
    ComputedValues computed;
    if (computed_ && !ReadComputedParams(operands, &computed)) return reference_.Run(ctx);
    if (!PlanDataMove(ir_, std::span<const std::span<const int64_t>>(shapes, count), plan_numbers, plan_out_shape,
                      computed_ ? &computed.params : nullptr))
      return reference_.Run(ctx);
    for (int c = 0; c < checks_; ++c)
      if (plan_numbers[check_slot_[c]] != check_value_[c]) return reference_.Run(ctx);
    for (const auto& [slot, value] : more_checks_)
      if (plan_numbers[slot] != value) return reference_.Run(ctx);
    if (!computed_) CachePlan(shapes, count, plan_numbers, plan_out_shape);
  }
  const std::span<const int64_t> shape(out_shape, static_cast<size_t>(out_rank_));
  // A Transpose that moves only unit dims is a view too (the reference kernel's rule).
  if (op_ == MoveOp::kView || (op_ == MoveOp::kTranspose && tensor_kernels::TransposeKeepsOffsets(shapes[0], ir_.perm))) {
    ctx.SetOutputReshaped(0, *operands[0], shape);
    return compare_ ? Compare(ctx) : Status::OK();  // a view is checked like generated code
  }
  // KernelCode is read-only once the session is loaded: the entry is cached in this object's
  // first cache line.
  void* entry = entry_.load(std::memory_order_relaxed);
  if (!entry) {
    entry = code_->entry;
    if (!entry) return reference_.Run(ctx);
    entry_.store(entry, std::memory_order_relaxed);
  }
  const DType out_type = metadata ? DType::kInt64 : op_ == MoveOp::kCast ? ir_.cast_to : fill ? ir_.fill_type : operands[0]->dtype();
  Tensor* y = ctx.Output(0, out_type, shape);
  buffers[count] = y->raw();
  if (reinterpret_cast<MoveFn>(entry)(buffers, numbers) != 0)
    return reference_.Run(ctx);  // an index out of range: the reference names it
  if (compare_) return Compare(ctx);
  return Status::OK();
}

// The computed parameters' values, defaulted as the reference does (Slice: axes 0..n-1, steps
// 1); false when one is not an int64/int32 vector of at most kMaxMoveRank values.
bool JitDataMoveKernel::ReadComputedParams(const Tensor* const* operands, ComputedValues* out) const {
  const std::vector<int64_t>* held[4] = {&ir_.starts, &ir_.ends, &ir_.axes, &ir_.steps};
  if (ir_.op == MoveOp::kView || ir_.op == MoveOp::kFill || ir_.op == MoveOp::kPad) held[0] = &ir_.target;
  std::span<const int64_t> values[4];
  for (int k = 0; k < 4; ++k) {
    const int o = ir_.param_operands[k];
    if (o < 0) {
      values[k] = *held[k];
      continue;
    }
    const Tensor* t = operands[o];
    if ((t->dtype() != DType::kInt64 && t->dtype() != DType::kInt32) || t->rank() != 1 ||
        t->size() > static_cast<int64_t>(kMaxMoveRank))
      return false;
    for (int64_t i = 0; i < t->size(); ++i)
      out->storage[k][i] = t->dtype() == DType::kInt64 ? t->data<int64_t>()[i] : t->data<int32_t>()[i];
    values[k] = std::span<const int64_t>(out->storage[k], static_cast<size_t>(t->size()));
  }
  if (ir_.op == MoveOp::kView || ir_.op == MoveOp::kFill || ir_.op == MoveOp::kPad) {  // one computed vector
    out->params.target = values[0];
    return true;
  }
  const size_t n = values[0].size();
  if (values[2].empty() && n <= kMaxMoveRank) {
    for (size_t i = 0; i < n; ++i) out->storage[2][i] = static_cast<int64_t>(i);
    values[2] = std::span<const int64_t>(out->storage[2], n);
  }
  if (values[3].empty() && n <= kMaxMoveRank) {
    for (size_t i = 0; i < n; ++i) out->storage[3][i] = 1;
    values[3] = std::span<const int64_t>(out->storage[3], n);
  }
  out->params = {values[0], values[1], values[2], values[3], {}};
  return true;
}

// R1: integer outputs identical; moved bytes are identical whatever their type.
Status JitDataMoveKernel::Compare(KernelContext& ctx) const {
  NUPHAR_ASSIGN_OR_RETURN(auto ref, reference_.Outputs(ctx));
  const Tensor* got = ctx.output(0);
  ++compared_runs_;
  if (!got || got->shape() != ref[0].shape() || got->bytes() != ref[0].bytes() ||
      std::memcmp(got->raw(), ref[0].raw(), ref[0].bytes()) != 0)
    return Diag::Msg("compare: generated data movement " + nodes_ + " differs from the reference");
  return Status::OK();
}

}  // namespace

Expected<std::unique_ptr<OpKernel>> CreateJitDataMoveKernel(const NodeInfo& node) { return JitDataMoveKernel::Create(node); }

}  // namespace nuphar::jit
