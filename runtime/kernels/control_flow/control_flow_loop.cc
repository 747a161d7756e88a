// Loop: runs a body while (i < M, when M is given) and (cond, when cond is given), carrying
// values between iterations; each scan output is the stack of its per-iteration values.
//   body inputs  (iteration_num: int64 scalar, cond_in: bool, carried...)
//   body outputs (cond_out, carried..., scan outputs...)
// One body Frame, kept by the executing frame between invocations (Frame::SubgraphFrame), is
// reused by every iteration; carried values ping-pong (control_flow_common.h). Refused:
// sequence/optional-typed values (opset 13/16 forms).
#include <onnx/onnx_pb.h>

#include <cstring>

#include "runtime/core/graph_plan.h"
#include "runtime/kernels/control_flow/control_flow_common.h"
#include "runtime/kernels/control_flow/control_flow_kernels.h"

namespace nuphar {
namespace {

Expected<bool> ReadCondition(const Tensor& t, const char* what) {
  if (t.size() != 1) return Diag::Msg(std::string(what) + " must hold one element, got shape " + ShapeToString(t.shape()));
  if (t.dtype() == DType::kBool || t.dtype() == DType::kUint8 || t.dtype() == DType::kInt8) return t.data<uint8_t>()[0] != 0;
  auto v = t.ToDoubleVector();
  if (!v) return v.status();
  return (*v)[0] != 0;
}

// Default of nuphar_max_loop_iterations: a Loop whose trip count is 2^62, or whose condition
// never turns false, would otherwise hang the caller. 10 million steps of a one-node body take a
// few seconds; real models loop over sequence lengths far below it. 0 means no limit.
constexpr int64_t kDefaultMaxLoopIterations = 10'000'000;

class LoopKernel final : public OpKernel {
 public:
  LoopKernel(std::shared_ptr<const GraphPlan> body, int num_carried, std::vector<DeclaredValue> declared,
             int64_t max_iterations)
      : body_(std::move(body)), num_carried_(num_carried), declared_(std::move(declared)),
        max_iterations_(max_iterations) {
    std::vector<int> ins, outs;
    for (int k = 0; k < num_carried_; ++k) {
      ins.push_back(2 + k);
      outs.push_back(1 + k);
    }
    carried_ = CarriedValues(*body_, ins, outs);
  }

  Status Compute(KernelContext& ctx) const override {
    Status s = RunLoop(ctx);
    carried_.Unbind(ctx, *body_, 2);
    return s;
  }

 private:
  Status RunLoop(KernelContext& ctx) const {
    const int N = num_carried_;
    const int K = static_cast<int>(body_->output_names().size()) - 1 - N;
    int64_t max_trips = -1;  // -1: no limit
    if (const Tensor* m = ctx.input(0)) {
      auto v = m->ToInt64Vector();
      if (!v || v->size() != 1) return Diag::Msg("M must be an int64 scalar");
      max_trips = std::max<int64_t>(0, (*v)[0]);
      if (max_iterations_ > 0 && max_trips > max_iterations_)
        return Diag::Msg("trip count M = " + std::to_string(max_trips) + " is above nuphar_max_loop_iterations (" +
                         std::to_string(max_iterations_) + ")");
    }
    const Tensor* cond_input = ctx.input(1);
    bool keep_going = true;
    if (cond_input) {
      NUPHAR_ASSIGN_OR_RETURN(keep_going, ReadCondition(*cond_input, "cond"));
    }

    Frame& body = ctx.SubgraphFrame(0, *body_);
    Tensor iteration(DType::kInt64, {}), cond(DType::kBool, {});
    body.SetInput(0, iteration);
    body.SetInput(1, cond);
    const Tensor* rewritten[] = {&iteration, &cond};
    std::vector<const Tensor*> initial(static_cast<size_t>(N));
    for (int k = 0; k < N; ++k)
      if (!(initial[k] = ctx.input(static_cast<size_t>(2 + k))))
        return Diag::Msg("loop-carried input " + std::to_string(k) + " is missing");
    carried_.Bind(body, initial);

    // Scan outputs grow by one slice per iteration; the count is not known in advance.
    std::vector<std::vector<char>> stacked(static_cast<size_t>(K));
    std::vector<std::vector<int64_t>> slice_shape(static_cast<size_t>(K));
    std::vector<DType> slice_type(static_cast<size_t>(K), DType::kUndefined);
    int64_t trips = 0;
    while ((max_trips < 0 || trips < max_trips) && keep_going) {
      if (max_iterations_ > 0 && trips == max_iterations_)
        return Diag::Msg("the loop is still running after nuphar_max_loop_iterations (" + std::to_string(max_iterations_) +
                         ") iterations: its condition never turned false");
      iteration.data<int64_t>()[0] = trips;
      cond.data<bool>()[0] = keep_going;
      NUPHAR_RETURN_IF_ERROR(body.Execute());
      if (cond_input) {
        const Tensor* c = body.Get(body_->output_ref(0));
        if (!c || !c->defined()) return Diag::Msg("Loop body did not produce cond_out");
        NUPHAR_ASSIGN_OR_RETURN(keep_going, ReadCondition(*c, "cond_out"));
      }
      for (int k = 0; k < K; ++k) {
        const Tensor* v = body.Get(body_->output_ref(static_cast<size_t>(1 + N + k)));
        if (!v || !v->defined()) return Diag::Msg("Loop body did not produce scan output " + std::to_string(k));
        if (trips == 0) {
          slice_shape[k] = v->shape();
          slice_type[k] = v->dtype();
          if (max_trips > 0) stacked[k].reserve(static_cast<size_t>(std::min<int64_t>(max_trips, 1 << 20)) * v->bytes());
        } else if (v->shape() != slice_shape[k] || v->dtype() != slice_type[k]) {
          return Diag::Msg("Loop scan output " + std::to_string(k) + " changes shape between iterations: " +
                           ShapeToString(slice_shape[k]) + " then " + ShapeToString(v->shape()));
        }
        const char* p = v->data<char>();
        stacked[k].insert(stacked[k].end(), p, p + v->bytes());
      }
      carried_.Advance(body, rewritten);
      ++trips;
    }

    for (int k = 0; k < N; ++k) ctx.SetOutputAlias(static_cast<size_t>(k), carried_.Current(body, static_cast<size_t>(k)));
    for (int k = 0; k < K; ++k) {
      std::vector<int64_t> shape = slice_shape[k];
      DType type = slice_type[k];
      if (trips == 0) {  // no iteration: an empty stack shaped from the body's declaration
        const DeclaredValue& d = declared_[static_cast<size_t>(1 + N + k)];
        shape = d.static_shape ? d.dims : std::vector<int64_t>{};
        type = d.dtype == DType::kUndefined ? DType::kFloat : d.dtype;
      }
      shape.insert(shape.begin(), trips);
      Tensor* out = ctx.Output(static_cast<size_t>(N + k), type, shape);
      if (!stacked[k].empty()) std::memcpy(out->raw(), stacked[k].data(), stacked[k].size());
    }
    return Status::OK();
  }

  std::shared_ptr<const GraphPlan> body_;
  int num_carried_;
  std::vector<DeclaredValue> declared_;
  int64_t max_iterations_;
  CarriedValues carried_;
};

}  // namespace

Expected<std::unique_ptr<OpKernel>> CreateLoop(const NodeInfo& node) {
  const onnx::GraphProto* g = node.GetGraph("body");
  if (!g) return node.Error("Loop needs a 'body' graph attribute");
  NUPHAR_RETURN_IF_ERROR(CheckTensorOnlyGraph(node, *g, "body"));
  if (node.num_inputs() < 2) return node.Error("Loop needs inputs M and cond (either may be empty)");
  const int N = static_cast<int>(node.num_inputs()) - 2;
  if (g->input_size() != 2 + N)
    return node.Error("body has " + std::to_string(g->input_size()) + " inputs, expected " + std::to_string(2 + N) +
                      " (iteration_num, cond, loop-carried values)");
  if (g->output_size() < 1 + N) return node.Error("body has fewer outputs than cond + loop-carried values");
  if (static_cast<int>(node.num_outputs()) > g->output_size() - 1)
    return node.Error("Loop has more outputs than its body's loop-carried values and scan outputs");
  for (int i = 0; i < N; ++i)
    if (!node.has_input(static_cast<size_t>(2 + i)))
      return node.Error("loop-carried input " + std::to_string(i) + " is empty (optional values are not supported)");
  std::vector<DeclaredValue> declared;
  for (int i = 0; i < g->output_size(); ++i) declared.push_back(DeclaredOutput(*g, i));
  int64_t max_iterations = kDefaultMaxLoopIterations;
  if (const std::string v = node.setting("nuphar_max_loop_iterations"); !v.empty())
    max_iterations = std::stoll(v);  // Settings::Parse has checked it is a non-negative integer
  NUPHAR_ASSIGN_OR_RETURN(auto plan, node.CompileSubgraph("body"));
  return MakeKernel<LoopKernel>(std::move(plan), N, std::move(declared), max_iterations);
}

}  // namespace nuphar
