// Scan: runs a body once per slice of its scan inputs, carrying state between iterations.
//   opset 8:  inputs (sequence_lens?, states..., scan inputs...), every value has a batch dim 0;
//             each batch row runs its own sequence_lens[b] steps; scan outputs are zero beyond.
//   opset 9+: no batch dim; scan_input_axes/directions and scan_output_axes/directions.
// One body Frame, kept by the executing frame between invocations (Frame::SubgraphFrame), is
// reused by every step: per-step slices are copied into input buffers allocated once per call,
// states ping-pong (control_flow_common.h), scan outputs are written straight into the node's
// outputs.
#include <onnx/onnx_pb.h>

#include <cstring>

#include "runtime/core/graph_plan.h"
#include "runtime/kernels/control_flow/control_flow_common.h"
#include "runtime/kernels/control_flow/control_flow_kernels.h"
#include "runtime/kernels/kernel.h"

namespace nuphar {
namespace {

int64_t NormalizeAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

class ScanKernel final : public OpKernel {
 public:
  ScanKernel(std::shared_ptr<const GraphPlan> body, int opset, int num_states, int num_scan_inputs,
             std::vector<int64_t> in_axes, std::vector<int64_t> in_reverse, std::vector<int64_t> out_axes,
             std::vector<int64_t> out_reverse, std::vector<DeclaredValue> declared_outputs)
      : body_(std::move(body)),
        opset_(opset),
        num_states_(num_states),
        num_scan_inputs_(num_scan_inputs),
        in_axes_(std::move(in_axes)),
        in_reverse_(std::move(in_reverse)),
        out_axes_(std::move(out_axes)),
        out_reverse_(std::move(out_reverse)),
        declared_(std::move(declared_outputs)) {
    std::vector<int> ins, outs;
    for (int k = 0; k < num_states_; ++k) {
      ins.push_back(k);
      outs.push_back(k);
    }
    carried_ = CarriedValues(*body_, ins, outs);
  }

  Status Compute(KernelContext& ctx) const override {
    Status s = opset_ >= 9 ? ComputeUnbatched(ctx) : ComputeBatched(ctx);
    carried_.Unbind(ctx, *body_, opset_ >= 9 ? 0 : 1);
    return s;
  }

 private:
  int num_scan_outputs() const { return static_cast<int>(body_->output_names().size()) - num_states_; }

  /// Steps the body `steps` times over prepared slices. `bind_step(t)` fills the scan-input
  /// buffers for step t; `store_step(t, k, value)` consumes scan output k. The states start from
  /// whatever `initial` holds and end in carried_.Current().
  template <class BindStep, class StoreStep>
  Status RunSteps(Frame& body, int64_t steps, std::span<const Tensor* const> initial,
                  std::span<const Tensor* const> rewritten, BindStep bind_step, StoreStep store_step) const {
    carried_.Bind(body, initial);
    const int K = num_scan_outputs();
    for (int64_t t = 0; t < steps; ++t) {
      bind_step(t);
      NUPHAR_RETURN_IF_ERROR(body.Execute());
      for (int k = 0; k < K; ++k) {
        const Tensor* v = body.Get(body_->output_ref(static_cast<size_t>(num_states_ + k)));
        if (!v || !v->defined()) return Diag::Msg("Scan body did not produce scan output " + std::to_string(k));
        NUPHAR_RETURN_IF_ERROR(store_step(t, k, *v));
      }
      carried_.Advance(body, rewritten);
    }
    return Status::OK();
  }

  // Opset 9+: scan inputs sliced along scan_input_axes; outputs stacked along scan_output_axes.
  Status ComputeUnbatched(KernelContext& ctx) const {
    const int N = num_states_, M = num_scan_inputs_, K = num_scan_outputs();
    std::vector<const Tensor*> initial(static_cast<size_t>(N));
    for (int i = 0; i < N; ++i)
      if (!(initial[i] = ctx.input(static_cast<size_t>(i)))) return Diag::Msg("Scan state input " + std::to_string(i) + " is missing");
    int64_t seq = -1;
    std::vector<AxisSlices> in_slices(static_cast<size_t>(M));
    std::vector<Tensor> step_inputs(static_cast<size_t>(M));
    Frame& body = ctx.SubgraphFrame(0, *body_);
    for (int j = 0; j < M; ++j) {
      const Tensor* x = ctx.input(static_cast<size_t>(N + j));
      if (!x) return Diag::Msg("Scan input " + std::to_string(j) + " is missing");
      const int64_t axis = NormalizeAxis(in_axes_[j], x->rank());
      if (axis < 0 || axis >= x->rank())
        return Diag::Msg("scan_input_axes[" + std::to_string(j) + "] is out of range for shape " + ShapeToString(x->shape()));
      if (seq >= 0 && x->dim(axis) != seq)
        return Diag::Msg("scan inputs disagree on the sequence length: " + std::to_string(seq) + " vs " +
                         std::to_string(x->dim(axis)));
      seq = x->dim(axis);
      in_slices[j] = AxisSlices::Of(x->raw(), x->shape(), axis, DTypeSize(x->dtype()));
      step_inputs[j] = Tensor(x->dtype(), ShapeWithout(x->shape(), axis));
      body.SetInput(static_cast<size_t>(N + j), step_inputs[j]);
    }
    if (seq < 0) seq = 0;
    std::vector<const Tensor*> rewritten;
    for (const auto& t : step_inputs) rewritten.push_back(&t);

    std::vector<AxisSlices> out_slices(static_cast<size_t>(K));
    std::vector<std::vector<int64_t>> out_step_shapes(static_cast<size_t>(K));
    auto bind = [&](int64_t t) {
      for (int j = 0; j < M; ++j) in_slices[j].Gather(in_reverse_[j] ? seq - 1 - t : t, step_inputs[j].raw());
    };
    auto store = [&](int64_t t, int k, const Tensor& v) -> Status {
      // Absent outputs all share the frame's scratch tensor, so they are not written at all.
      if (!ctx.output_needed(static_cast<size_t>(N + k))) return Status::OK();
      if (t == 0) {  // the first step fixes each scan output's shape
        const int64_t axis = NormalizeAxis(out_axes_[k], v.rank() + 1);
        if (axis < 0 || axis > v.rank()) return Diag::Msg("scan_output_axes[" + std::to_string(k) + "] is out of range");
        Tensor* out = ctx.Output(static_cast<size_t>(N + k), v.dtype(), ShapeWith(v.shape(), axis, seq));
        out_slices[k] = AxisSlices::Of(out->raw(), out->shape(), axis, DTypeSize(v.dtype()));
        out_step_shapes[k] = v.shape();
      } else if (v.shape() != out_step_shapes[k]) {
        return Diag::Msg("Scan output " + std::to_string(k) + " changes shape between steps: " +
                         ShapeToString(out_step_shapes[k]) + " then " + ShapeToString(v.shape()));
      }
      out_slices[k].Scatter(out_reverse_[k] ? seq - 1 - t : t, v.raw());
      return Status::OK();
    };
    NUPHAR_RETURN_IF_ERROR(RunSteps(body, seq, initial, rewritten, bind, store));
    for (int i = 0; i < N; ++i) ctx.SetOutputAlias(static_cast<size_t>(i), carried_.Current(body, static_cast<size_t>(i)));
    if (seq == 0) EmptyScanOutputs(ctx, [&](int k, std::vector<int64_t> dims) {
        return ShapeWith(dims, NormalizeAxis(out_axes_[k], static_cast<int64_t>(dims.size()) + 1), 0);
      });
    return Status::OK();
  }

  // Opset 8: a batch dim 0 on every input and output; row b runs sequence_lens[b] steps.
  Status ComputeBatched(KernelContext& ctx) const {
    const int N = num_states_, M = num_scan_inputs_, K = num_scan_outputs();
    const Tensor* lens = ctx.input(0);
    int64_t batch = -1, seq = -1;
    std::vector<const Tensor*> states(static_cast<size_t>(N)), inputs(static_cast<size_t>(M));
    for (int i = 0; i < N + M; ++i) {
      const Tensor* v = ctx.input(static_cast<size_t>(1 + i));
      if (!v) return Diag::Msg("Scan input " + std::to_string(1 + i) + " is missing");
      if (v->rank() < (i < N ? 1 : 2)) return Diag::Msg("Scan (opset 8) values need a batch dimension");
      if (batch >= 0 && v->dim(0) != batch) return Diag::Msg("Scan inputs disagree on the batch size");
      batch = v->dim(0);
      if (i < N) {
        states[i] = v;
      } else {
        inputs[i - N] = v;
        if (seq >= 0 && v->dim(1) != seq) return Diag::Msg("Scan inputs disagree on the sequence length");
        seq = v->dim(1);
      }
    }
    if (seq < 0) return Diag::Msg("Scan needs at least one scan input");
    std::vector<int64_t> len(static_cast<size_t>(batch), seq);
    if (lens) {
      auto v = lens->ToInt64Vector();
      if (!v || static_cast<int64_t>(v->size()) != batch) return Diag::Msg("sequence_lens must hold one length per batch row");
      for (int64_t b = 0; b < batch; ++b) {
        if ((*v)[b] < 0 || (*v)[b] > seq) return Diag::Msg("sequence_lens[" + std::to_string(b) + "] is out of range");
        len[b] = (*v)[b];
      }
    }

    Frame& body = ctx.SubgraphFrame(0, *body_);
    // Per-row copies of the states and the per-step input buffers, allocated once per call.
    std::vector<Tensor> row_states(static_cast<size_t>(N)), step_inputs(static_cast<size_t>(M));
    std::vector<AxisSlices> in_slices(static_cast<size_t>(M));
    std::vector<const Tensor*> initial, rewritten;
    std::vector<Tensor*> state_out(static_cast<size_t>(N));
    for (int i = 0; i < N; ++i) {
      row_states[i] = Tensor(states[i]->dtype(), ShapeWithout(states[i]->shape(), 0));
      initial.push_back(&row_states[i]);
      if (ctx.output_needed(static_cast<size_t>(i)))
        state_out[i] = ctx.Output(static_cast<size_t>(i), states[i]->dtype(), states[i]->shape());
    }
    for (int j = 0; j < M; ++j) {
      std::vector<int64_t> row_shape = ShapeWithout(inputs[j]->shape(), 0);
      step_inputs[j] = Tensor(inputs[j]->dtype(), ShapeWithout(row_shape, 0));
      body.SetInput(static_cast<size_t>(N + j), step_inputs[j]);
      rewritten.push_back(&step_inputs[j]);
    }
    std::vector<Tensor*> outs(static_cast<size_t>(K), nullptr);
    std::vector<std::vector<int64_t>> out_step_shapes(static_cast<size_t>(K));
    for (int64_t b = 0; b < batch; ++b) {
      for (int i = 0; i < N; ++i)
        std::memcpy(row_states[i].raw(), states[i]->data<char>() + b * row_states[i].bytes(), row_states[i].bytes());
      for (int j = 0; j < M; ++j) {
        std::vector<int64_t> row_shape = ShapeWithout(inputs[j]->shape(), 0);
        in_slices[j] = AxisSlices::Of(inputs[j]->data<char>() + b * seq * step_inputs[j].bytes(), row_shape, 0,
                                      DTypeSize(inputs[j]->dtype()));
      }
      auto bind = [&](int64_t t) {
        for (int j = 0; j < M; ++j) in_slices[j].Gather(in_reverse_[j] ? len[b] - 1 - t : t, step_inputs[j].raw());
      };
      auto store = [&](int64_t t, int k, const Tensor& v) -> Status {
        if (!ctx.output_needed(static_cast<size_t>(N + k))) return Status::OK();  // see ComputeUnbatched
        if (!outs[k]) {  // the first step of any row fixes the shape; rows not yet run are zero
          std::vector<int64_t> shape = v.shape();
          shape.insert(shape.begin(), {batch, seq});
          outs[k] = ctx.Output(static_cast<size_t>(N + k), v.dtype(), shape);
          std::memset(outs[k]->raw(), 0, outs[k]->bytes());
          out_step_shapes[k] = v.shape();
        } else if (v.shape() != out_step_shapes[k]) {
          return Diag::Msg("Scan output " + std::to_string(k) + " changes shape between steps");
        }
        std::memcpy(outs[k]->data<char>() + (b * seq + t) * v.bytes(), v.raw(), v.bytes());
        return Status::OK();
      };
      NUPHAR_RETURN_IF_ERROR(RunSteps(body, len[b], initial, rewritten, bind, store));
      for (int i = 0; i < N; ++i) {
        const Tensor& final_state = carried_.Current(body, static_cast<size_t>(i));
        if (final_state.bytes() != row_states[i].bytes()) return Diag::Msg("Scan state " + std::to_string(i) + " changes shape");
        if (state_out[i]) std::memcpy(state_out[i]->data<char>() + b * final_state.bytes(), final_state.raw(), final_state.bytes());
      }
    }
    bool any_missing = false;
    for (int k = 0; k < K; ++k) any_missing |= outs[k] == nullptr && ctx.output_needed(static_cast<size_t>(N + k));
    if (any_missing) EmptyScanOutputs(ctx, [&](int, std::vector<int64_t> dims) {
        dims.insert(dims.begin(), {batch, seq});
        return dims;
      }, &outs);
    return Status::OK();
  }

  /// Scan outputs of a scan that ran no step: zeros shaped from the body's declared outputs
  /// (unknown per-step dims become 0).
  template <class ShapeFn>
  void EmptyScanOutputs(KernelContext& ctx, ShapeFn shape_fn, std::vector<Tensor*>* done = nullptr) const {
    for (int k = 0; k < num_scan_outputs(); ++k) {
      if ((done && (*done)[k]) || !ctx.output_needed(static_cast<size_t>(num_states_ + k))) continue;
      const DeclaredValue& d = declared_[static_cast<size_t>(num_states_ + k)];
      std::vector<int64_t> dims = d.dims;
      for (auto& x : dims) x = x < 0 ? 0 : x;
      Tensor* out = ctx.Output(static_cast<size_t>(num_states_ + k), d.dtype == DType::kUndefined ? DType::kFloat : d.dtype,
                               shape_fn(k, dims));
      if (out->bytes() > 0) std::memset(out->raw(), 0, out->bytes());
    }
  }

  std::shared_ptr<const GraphPlan> body_;
  int opset_, num_states_, num_scan_inputs_;
  std::vector<int64_t> in_axes_, in_reverse_, out_axes_, out_reverse_;
  std::vector<DeclaredValue> declared_;
  CarriedValues carried_;
};

// Reads an optional per-value INTS attribute with a default, checking its length.
Expected<std::vector<int64_t>> PerValueInts(const NodeInfo& node, const char* name, int count, int64_t fallback) {
  std::vector<int64_t> v = node.GetInts(name);
  if (!node.has_attr(name)) return std::vector<int64_t>(static_cast<size_t>(count), fallback);
  if (static_cast<int>(v.size()) != count)
    return node.Error(std::string(name) + " has " + std::to_string(v.size()) + " entries, expected " + std::to_string(count));
  return v;
}

}  // namespace

Expected<std::unique_ptr<OpKernel>> CreateScan(const NodeInfo& node) { return CreateScanWithBody(node, nullptr); }

Expected<std::unique_ptr<OpKernel>> CreateScanWithBody(const NodeInfo& node, std::shared_ptr<const GraphPlan> plan) {
  const onnx::GraphProto* g = node.GetGraph("body");
  if (!g) return node.Error("Scan needs a 'body' graph attribute");
  NUPHAR_RETURN_IF_ERROR(CheckTensorOnlyGraph(node, *g, "body"));
  const int opset = node.opset();
  const int first_state = opset >= 9 ? 0 : 1;  // opset 8 starts with sequence_lens
  // Checked as int64 before narrowing: 2^31 would wrap to a negative count (found by tests/fuzz).
  const int64_t num_scan_inputs = node.GetInt("num_scan_inputs", -1);
  const int64_t inputs = static_cast<int64_t>(node.num_inputs());
  if (num_scan_inputs < 1 || num_scan_inputs > inputs - first_state)
    return node.Error("num_scan_inputs must be in [1, number of inputs]");
  const int M = static_cast<int>(num_scan_inputs);
  const int N = static_cast<int>(inputs) - first_state - M;
  if (g->input_size() != N + M)
    return node.Error("body has " + std::to_string(g->input_size()) + " inputs, expected " + std::to_string(N + M) +
                      " (states + scan inputs)");
  if (g->output_size() < N) return node.Error("body has fewer outputs than there are states");
  const int K = g->output_size() - N;
  if (static_cast<int>(node.num_outputs()) > N + K) return node.Error("Scan has more outputs than its body");
  std::vector<int64_t> in_axes, in_rev, out_axes, out_rev;
  if (opset >= 9) {
    NUPHAR_ASSIGN_OR_RETURN(in_axes, PerValueInts(node, "scan_input_axes", M, 0));
    NUPHAR_ASSIGN_OR_RETURN(in_rev, PerValueInts(node, "scan_input_directions", M, 0));
    NUPHAR_ASSIGN_OR_RETURN(out_axes, PerValueInts(node, "scan_output_axes", K, 0));
    NUPHAR_ASSIGN_OR_RETURN(out_rev, PerValueInts(node, "scan_output_directions", K, 0));
  } else {
    NUPHAR_ASSIGN_OR_RETURN(in_rev, PerValueInts(node, "directions", M, 0));
    in_axes.assign(static_cast<size_t>(M), 0);
    out_axes.assign(static_cast<size_t>(K), 0);
    out_rev.assign(static_cast<size_t>(K), 0);
  }
  for (auto d : in_rev)
    if (d != 0 && d != 1) return node.Error("scan directions must be 0 or 1");
  for (auto d : out_rev)
    if (d != 0 && d != 1) return node.Error("scan_output_directions must be 0 or 1");
  std::vector<DeclaredValue> declared;
  for (int i = 0; i < g->output_size(); ++i) declared.push_back(DeclaredOutput(*g, i));
  if (!plan) {
    NUPHAR_ASSIGN_OR_RETURN(plan, node.CompileSubgraph("body"));
  }
  return MakeKernel<ScanKernel>(std::move(plan), opset, N, M, std::move(in_axes), std::move(in_rev),
                                std::move(out_axes), std::move(out_rev), std::move(declared));
}

}  // namespace nuphar
