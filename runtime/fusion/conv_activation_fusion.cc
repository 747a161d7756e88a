// Conv + epilogue fusion (runtime/fusion/conv_activation_fusion.h).
//
// Before:  Y = Conv(X, W, B)  -> s1 -> s2 -> ... -> Z      W, B constant float; each s_i is one of
//            Relu, LeakyRelu, HardSigmoid, HardSwish, Sigmoid, Clip (constant bounds),
//            Mul/Add/Max/Min with a constant of 1 or M (per channel) elements (either order),
//            Sub/Div by such a constant (Y first), BatchNormalization (inference, constants),
//            Mul(Y, Sigmoid(Y))                      (SiLU / Swish)
//            Div(Mul(Y, Clip(Add(Y, a), lo, hi)), d)  (HardSwish as PaddleOCR exports it)
// After:   Z = com.nuphar.internal.FusedConv(X, W, B, operands...)  steps = [s1, s2, ...]
//          A Conv with nothing to absorb still becomes a FusedConv (with no steps): the direct
//          and GEMM kernels replace the reference im2col path.
// Refused: a non-constant or non-float W/B (the Conv stays); the chain stops at a value with
//          another consumer (also inside a subgraph) or that is a graph output, at a constant
//          whose shape would broadcast Y to a larger shape, and at any other op.
// The removed nodes had a single consumer each, inside the chain, so nothing else reads them.
// Each step rounds as its node does (conv.h), except BatchNormalization, whose per-channel
// scale and shift are folded in double and rounded once (as ONNX Runtime folds it).
#include "runtime/fusion/conv_activation_fusion.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "runtime/kernels/conv/conv.h"

namespace nuphar {
namespace {

struct Step {
  ConvStep kind;
  float p[4] = {0, 0, 0, 0};
  std::string operand;  // constant input name, or ""
};

class ChainMatcher {
 public:
  ChainMatcher(onnx::GraphProto* g, const ConstantLookup& lookup) : g_(g), lookup_(lookup) {
    for (int i = 0; i < g->node_size(); ++i)
      for (const auto& in : g->node(i).input())
        if (!in.empty()) consumers_[in].push_back(i);
    for (const auto& o : g->output()) pinned_.insert(o.name());
    for (const auto& n : g->node())
      for (auto& name : ImplicitInputs(n)) pinned_.insert(std::move(name));  // read by a subgraph
  }

  // The nodes reading `v`, or empty when v is pinned (graph output, read by a subgraph).
  std::vector<int> Consumers(const std::string& v) const {
    if (pinned_.count(v)) return {};
    auto it = consumers_.find(v);
    return it == consumers_.end() ? std::vector<int>{} : it->second;
  }

  // A float constant of 1 or M elements whose shape does not grow Y's (rank R, channel axis 1).
  bool ChannelConstant(const std::string& name, int64_t M, int64_t R) const {
    const Tensor* t = lookup_(name);
    if (!t || t->dtype() != DType::kFloat || t->rank() > R) return false;
    if (t->size() == 1) return true;
    if (t->size() != M || t->rank() < R - 1) return false;
    // Right-aligned against [N, M, spatial...]: M sits at axis 1, everything else is 1.
    for (int64_t i = 0; i < t->rank(); ++i) {
      const int64_t axis = R - t->rank() + i;
      if (t->dim(i) != (axis == 1 ? M : 1)) return false;
    }
    return true;
  }

  bool ScalarConstant(const std::string& name, float* v) const {
    const Tensor* t = lookup_(name);
    if (!t || t->dtype() != DType::kFloat || t->size() != 1) return false;
    *v = t->data<float>()[0];
    return true;
  }

  // Clip's bounds: attributes before opset 11, optional constant inputs after.
  bool ClipBounds(const onnx::NodeProto& n, float* lo, float* hi) const {
    *lo = AttrFloat(n, "min", std::numeric_limits<float>::lowest());
    *hi = AttrFloat(n, "max", std::numeric_limits<float>::max());
    if (n.input_size() > 1 && !n.input(1).empty() && !ScalarConstant(n.input(1), lo)) return false;
    if (n.input_size() > 2 && !n.input(2).empty() && !ScalarConstant(n.input(2), hi)) return false;
    return true;
  }

  // Tries to absorb what reads `y`; on success appends the step(s), marks the nodes and returns
  // the new chain end.
  bool Extend(const std::string& y, int64_t M, int64_t R, std::vector<Step>* steps, std::vector<int>* absorbed,
              std::string* end) {
    const std::vector<int> cons = Consumers(y);
    if (cons.size() == 2) return ExtendPair(y, cons, steps, absorbed, end);
    if (cons.size() != 1) return false;
    const onnx::NodeProto& n = g_->node(cons[0]);
    if (!n.domain().empty() && n.domain() != "ai.onnx") return false;
    if (n.output_size() != 1) return false;
    const std::string& op = n.op_type();
    Step s{};
    if (op == "Relu") {
      s.kind = ConvStep::kRelu;
    } else if (op == "LeakyRelu") {
      s.kind = ConvStep::kLeakyRelu;
      s.p[0] = AttrFloat(n, "alpha", 0.01f);
    } else if (op == "HardSigmoid") {
      s.kind = ConvStep::kHardSigmoid;
      s.p[0] = AttrFloat(n, "alpha", 0.2f);
      s.p[1] = AttrFloat(n, "beta", 0.5f);
    } else if (op == "HardSwish") {
      s.kind = ConvStep::kHardSwish;
    } else if (op == "Sigmoid") {
      s.kind = ConvStep::kSigmoid;
    } else if (op == "Clip") {
      s.kind = ConvStep::kClip;
      if (!ClipBounds(n, &s.p[2], &s.p[3])) return false;
    } else if (op == "Mul" || op == "Add" || op == "Max" || op == "Min" || op == "Sub" || op == "Div") {
      if (n.input_size() != 2 || n.input(0) == n.input(1)) return false;
      const bool commutes = op == "Mul" || op == "Add" || op == "Max" || op == "Min";
      const int other = n.input(0) == y ? 1 : 0;
      if (other == 0 && !commutes) return false;
      if (!ChannelConstant(n.input(other), M, R)) return false;
      s.kind = op == "Mul"   ? ConvStep::kMul
               : op == "Add" ? ConvStep::kAdd
               : op == "Max" ? ConvStep::kMax
               : op == "Min" ? ConvStep::kMin
               : op == "Sub" ? ConvStep::kSub
                             : ConvStep::kDiv;
      s.operand = n.input(other);
    } else if (op == "BatchNormalization") {
      return ExtendBatchNorm(n, cons[0], M, steps, absorbed, end);
    } else {
      return false;
    }
    steps->push_back(s);
    absorbed->push_back(cons[0]);
    *end = n.output(0);
    return true;
  }

  std::vector<onnx::TensorProto> new_initializers;

 private:
  // Mul(y, Sigmoid(y)) or Div(Mul(y, Clip(Add(y, a), lo, hi)), d), operands in either order.
  bool ExtendPair(const std::string& y, const std::vector<int>& cons, std::vector<Step>* steps,
                  std::vector<int>* absorbed, std::string* end) {
    const onnx::NodeProto* a = &g_->node(cons[0]);
    const onnx::NodeProto* b = &g_->node(cons[1]);
    int ia = cons[0], ib = cons[1];
    if (a->op_type() == "Mul") {
      std::swap(a, b);
      std::swap(ia, ib);
    }
    // b is the Mul(y, t); a produces t from y.
    if (b->op_type() != "Mul" || b->input_size() != 2 || b->input(0) == b->input(1) || a->output_size() != 1 ||
        b->output_size() != 1)
      return false;
    const int y_slot = b->input(0) == y ? 0 : b->input(1) == y ? 1 : -1;
    if (y_slot < 0) return false;
    const std::string& t = b->input(1 - y_slot);
    if (a->op_type() == "Sigmoid" && a->output(0) == t && Consumers(t).size() == 1) {
      Step s{};
      s.kind = ConvStep::kMulSigmoid;
      steps->push_back(s);
      absorbed->insert(absorbed->end(), {ia, ib});
      *end = b->output(0);
      return true;
    }
    // Add(y, add) -> Clip -> t, then Div(Mul, d).
    if (a->op_type() != "Add" || a->input_size() != 2) return false;
    Step s{};
    s.kind = ConvStep::kMulClipAddDiv;
    const int a_other = a->input(0) == y ? 1 : 0;
    if (!ScalarConstant(a->input(a_other), &s.p[0])) return false;
    const std::vector<int> clip = Consumers(a->output(0));
    if (clip.size() != 1 || g_->node(clip[0]).op_type() != "Clip") return false;
    const onnx::NodeProto& c = g_->node(clip[0]);
    if (c.output_size() != 1 || c.output(0) != t || Consumers(t).size() != 1 || !ClipBounds(c, &s.p[2], &s.p[3]))
      return false;
    const std::vector<int> div = Consumers(b->output(0));
    if (div.size() != 1) return false;
    const onnx::NodeProto& d = g_->node(div[0]);
    if (d.op_type() != "Div" || d.input_size() != 2 || d.output_size() != 1 || d.input(0) != b->output(0) ||
        !ScalarConstant(d.input(1), &s.p[1]))
      return false;
    steps->push_back(s);
    absorbed->insert(absorbed->end(), {ia, clip[0], ib, div[0]});
    *end = d.output(0);
    return true;
  }

  // Inference BatchNormalization: y * a + b with a = scale / sqrt(var + eps), b = B - mean * a,
  // folded in double as the BatchNormalization kernel computes.
  bool ExtendBatchNorm(const onnx::NodeProto& n, int index, int64_t M, std::vector<Step>* steps,
                       std::vector<int>* absorbed, std::string* end) {
    if (n.input_size() != 5 || n.output_size() < 1) return false;
    for (int o = 1; o < n.output_size(); ++o)
      if (!n.output(o).empty()) return false;
    if (AttrInt(n, "training_mode", 0) != 0) return false;
    const Tensor* p[4];
    for (int i = 0; i < 4; ++i) {
      p[i] = lookup_(n.input(i + 1));
      if (!p[i] || p[i]->dtype() != DType::kFloat || p[i]->size() != M) return false;
    }
    const double eps = AttrFloat(n, "epsilon", 1e-5f);
    onnx::TensorProto scale, shift;
    for (int64_t c = 0; c < M; ++c) {
      const double a =
          static_cast<double>(p[0]->data<float>()[c]) / std::sqrt(static_cast<double>(p[3]->data<float>()[c]) + eps);
      scale.add_float_data(static_cast<float>(a));
      shift.add_float_data(static_cast<float>(static_cast<double>(p[1]->data<float>()[c]) -
                                              static_cast<double>(p[2]->data<float>()[c]) * a));
    }
    const std::string base = n.output(0) + "/fused_bn_";
    for (auto* t : {&scale, &shift}) {
      t->set_data_type(onnx::TensorProto::FLOAT);
      t->add_dims(M);
      t->set_name(base + (t == &scale ? "scale" : "shift"));
    }
    Step ms{}, as{};
    ms.kind = ConvStep::kMul;
    ms.operand = scale.name();
    as.kind = ConvStep::kAdd;
    as.operand = shift.name();
    new_initializers.push_back(std::move(scale));
    new_initializers.push_back(std::move(shift));
    steps->push_back(ms);
    steps->push_back(as);
    absorbed->push_back(index);
    *end = n.output(0);
    return true;
  }

  onnx::GraphProto* g_;
  const ConstantLookup& lookup_;
  std::unordered_map<std::string, std::vector<int>> consumers_;
  std::unordered_set<std::string> pinned_;
};

}  // namespace

int FuseConvActivation(onnx::GraphProto* graph, const ConstantLookup& lookup, ConvFusionReport* report) {
  ChainMatcher matcher(graph, lookup);
  std::vector<bool> remove(static_cast<size_t>(graph->node_size()), false);
  int fused = 0;
  for (int i = 0; i < graph->node_size(); ++i) {
    onnx::NodeProto* conv = graph->mutable_node(i);
    if (conv->op_type() != "Conv" || (!conv->domain().empty() && conv->domain() != "ai.onnx") || remove[i]) continue;
    auto refuse = [&](const std::string& why) {
      if (report) report->refused.push_back(conv->name() + ": " + why);
    };
    if (conv->input_size() < 2 || conv->output_size() != 1) continue;
    const Tensor* w = lookup(conv->input(1));
    if (!w || w->dtype() != DType::kFloat || w->rank() < 3) {
      refuse("W is not a constant float tensor of rank >= 3");
      continue;
    }
    if (conv->input_size() > 2 && !conv->input(2).empty()) {
      const Tensor* b = lookup(conv->input(2));
      if (!b || b->dtype() != DType::kFloat || b->size() != w->dim(0)) {
        refuse("B is not a constant float tensor of M elements");
        continue;
      }
    }
    std::vector<Step> steps;
    std::vector<int> absorbed;
    std::string end = conv->output(0);
    while (matcher.Extend(end, w->dim(0), w->rank(), &steps, &absorbed, &end)) {
    }
    for (int a : absorbed) remove[static_cast<size_t>(a)] = true;
    conv->set_op_type(kFusedConvOp);
    conv->set_domain(kFusedDomain);
    while (conv->input_size() < 3) conv->add_input("");
    conv->set_output(0, end);
    std::vector<int64_t> kinds, inputs;
    std::vector<float> params;
    for (const Step& s : steps) {
      kinds.push_back(static_cast<int64_t>(s.kind));
      params.insert(params.end(), std::begin(s.p), std::end(s.p));
      if (s.operand.empty()) {
        inputs.push_back(-1);
      } else {
        inputs.push_back(conv->input_size());
        conv->add_input(s.operand);
      }
    }
    SetAttr(*conv, "steps", kinds);
    SetAttr(*conv, "step_params", params);
    SetAttr(*conv, "step_inputs", inputs);
    ++fused;
    if (report) report->absorbed_nodes += static_cast<int>(absorbed.size());
  }
  for (auto& t : matcher.new_initializers) *graph->add_initializer() = std::move(t);
  if (fused > 0) {
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (int i = 0; i < graph->node_size(); ++i)
      if (!remove[static_cast<size_t>(i)]) *kept.Add() = std::move(*graph->mutable_node(i));
    graph->mutable_node()->Swap(&kept);
  }
  if (report) report->convs += fused;
  return fused;
}

namespace {

class ConvActivationFusion final : public RuntimeGraphPass {
 public:
  std::string Name() const override { return "conv_activation_fusion"; }
  bool MayApply(const onnx::GraphProto& graph) const override {
    const auto& nodes = graph.node();
    return std::any_of(nodes.begin(), nodes.end(), [](const onnx::NodeProto& n) { return n.op_type() == "Conv"; });
  }
  Expected<int> RewriteGraph(onnx::GraphProto* graph, const GraphRewriteContext& ctx) override {
    return FuseConvActivation(graph, ctx.constants);
  }
};

}  // namespace

std::unique_ptr<GraphPass> CreateConvActivationFusion() { return std::make_unique<ConvActivationFusion>(); }

}  // namespace nuphar
