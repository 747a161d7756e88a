// Mode loop_to_scan: Loops that walk their data with the iteration number become Scans (§2.3, E6).
//
// Before:  outs = Loop(M, cond, v...)  body(i, cond_in, v...) { x_k = Gather(data_k, i) ...;
//                                                              cond_out = Cast(Constant True) }
// After:   outs = Scan(v..., data_k...)  body(v..., x_k...)   num_scan_inputs = #Gathers
//          Duplicate body outputs get Identity(<o>) -> <o>_extend_<n> (Scan needs distinct outputs).
//          The cond Cast/Constant and the trip-count chain are removed once nothing reads them.
// Refused (E4 error, or kept with a warning under --keep_unconvertible_loop_ops):
//          cond or cond_out not constant True; no Gather(data, i); Gather axis != 0; other uses of i
//          or cond_in; data defined inside the body; M neither empty nor the scanned dim of the data.
#include <onnx/onnx_pb.h>

#include "editor/passes.h"
#include "graph/const_fold.h"
#include "graph/tensor_data.h"

namespace nuphar::editor {
namespace {

bool IsConstantTrue(const GraphScope& scope, const std::string& name) {
  auto v = FoldConstant(scope, name);
  if (!v.ok()) return false;
  auto values = ReadTensorAsDouble(v->tensor());
  return values.ok() && values->size() == 1 && (*values)[0] != 0;
}

int CountReads(const onnx::GraphProto& g, const std::string& name) {
  int n = 0;
  for (const auto& node : g.node()) {
    for (const auto& i : node.input()) n += i == name;
    for (const auto* sub : Subgraphs(node)) n += CountReads(*sub, name);
  }
  for (const auto& o : g.output()) n += o.name() == name;
  return n;
}

bool DefinedIn(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& vi : g.input())
    if (vi.name() == name) return true;
  for (const auto& t : g.initializer())
    if (t.name() == name) return true;
  for (const auto& n : g.node())
    for (const auto& o : n.output())
      if (o == name) return true;
  return false;
}

// M equals dim 0 of `data`: M = Gather(Shape(data), 0), or a constant equal to a static dim 0.
bool TripCountMatches(const GraphScope& scope, const std::string& m, const std::string& data) {
  if (m.empty()) return true;
  if (const auto* g = scope.FindProducer(m); g && g->op_type() == "Gather" && AttrInt(*g, "axis", 0) == 0) {
    const auto* shape = scope.FindProducer(g->input(0));
    auto index = FoldConstant(scope, g->input(1));
    if (shape && shape->op_type() == "Shape" && shape->input(0) == data && AttrInt(*shape, "start", 0) == 0 &&
        index.ok()) {
      auto idx = ReadTensorAsInt64(index->tensor());
      if (idx.ok() && idx->size() == 1 && (*idx)[0] == 0) return true;
    }
  }
  auto value = FoldConstant(scope, m);
  const auto* vi = scope.FindValueInfo(data);
  if (!value.ok() || !vi) return false;
  auto count = ReadTensorAsInt64(value->tensor());
  auto dims = StaticDims(*vi);
  return count.ok() && count->size() == 1 && dims.ok() && !dims->empty() && (*dims)[0] == (*count)[0];
}

class LoopToScanPass final : public GraphPass {
 public:
  explicit LoopToScanPass(const EditorOptions& options) : keep_(options.keep_unconvertible_loop_ops) {}
  std::string Name() const override { return "loop_to_scan"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Loop"}; }
  int64_t MinOpset() const override { return 9; }

  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    std::string why;
    auto effect = Convert(ctx, node, &why);
    if (!why.empty()) {
      if (!keep_)
        return Diag::Node(node, "cannot convert the Loop to Scan: " + why +
                                    " (--keep_unconvertible_loop_ops keeps such Loops)");
      ctx.Warn("Model contains a Loop op that cannot be converted to Scan (" + why + "). Op name = " + node.name());
      return Effect::Kept(why);
    }
    return effect;
  }

 private:
  // Returns the effect, or sets *why when the Loop is not convertible (nothing emitted then).
  Expected<Effect> Convert(RewriteContext& ctx, const onnx::NodeProto& node, std::string* why) {
    const GraphScope& scope = ctx.scope();
    const auto* body_attr = FindAttr(node, "body");
    if (!body_attr || node.input_size() < 2) return Diag::Node(node, "Loop without body or cond input");
    const onnx::GraphProto& body = body_attr->g();
    if (body.input_size() < 2 || body.output_size() < 1) return Diag::Node(node, "malformed Loop body");
    const std::string& cond = node.input(1);
    if (cond.empty() || !IsConstantTrue(scope, cond)) return Fail(why, "loop cond should be fixed True");
    const std::string& iter = body.input(0).name();
    const std::string& cond_in = body.input(1).name();
    const std::string& cond_out = body.output(0).name();
    const GraphScope body_scope = scope.Child(const_cast<onnx::GraphProto*>(&body), node, "body");
    if (cond_out != cond_in && !IsConstantTrue(body_scope, cond_out))
      return Fail(why, "the body's cond output should be fixed True");
    if (CountReads(body, cond_in) > (cond_out == cond_in ? 1 : 0))
      return Fail(why, "the body reads its loop condition");

    std::vector<const onnx::NodeProto*> gathers;
    for (const auto& n : body.node())
      if (n.op_type() == "Gather" && n.input_size() == 2 && n.input(1) == iter) gathers.push_back(&n);
    if (gathers.empty())
      return Fail(why, "the loop's trip count (i) must be used to index input data");
    if (CountReads(body, iter) != static_cast<int>(gathers.size()))
      return Fail(why, "the iteration number i has uses other than Gather(data, i)");
    for (const auto* g : gathers) {
      if (AttrInt(*g, "axis", 0) != 0) return Fail(why, "Gather '" + g->name() + "' does not index axis 0");
      if (DefinedIn(body, g->input(0))) return Fail(why, "gathered '" + g->input(0) + "' is computed inside the body");
      if (!TripCountMatches(scope, node.input(0), g->input(0)))
        return Fail(why, "the trip count is not the scanned dim of '" + g->input(0) + "'");
      if (!scope.FindValueInfo(g->input(0)) && !body_scope.FindValueInfo(g->output(0)))
        return Fail(why, "no value_info for '" + g->input(0) + "' (run shape inference first)");
    }

    onnx::GraphProto scan_body = body;
    NodeBuilder body_builder(&scan_body, &ctx.names(), ctx.builder().opset());
    scan_body.mutable_input()->DeleteSubrange(0, 2);
    scan_body.mutable_output()->DeleteSubrange(0, 1);
    google::protobuf::RepeatedPtrField<onnx::NodeProto> kept;
    for (auto& n : *scan_body.mutable_node()) {
      bool is_gather = n.op_type() == "Gather" && n.input_size() == 2 && n.input(1) == iter;
      if (!is_gather) kept.Add()->Swap(&n);
    }
    scan_body.mutable_node()->Swap(&kept);
    for (const auto* g : gathers) AddScanInput(&scan_body, scope, body_scope, *g);
    DeduplicateOutputs(&scan_body, &body_builder);
    ctx.MarkMaybeDead(cond_out);  // the body's cond Cast, then its Constant (possibly outer)
    ctx.MarkMaybeDead(cond);
    ctx.MarkMaybeDead(node.input(0));

    std::vector<std::string> inputs(node.input().begin() + 2, node.input().end());
    for (const auto* g : gathers) inputs.push_back(g->input(0));
    std::vector<std::string> outputs(node.output().begin(), node.output().end());
    auto& scan = ctx.builder().Add("Scan", inputs, outputs);
    SetAttr(scan, "body", std::move(scan_body));
    SetAttr(scan, "num_scan_inputs", static_cast<int64_t>(gathers.size()));
    return Effect::Replaced();
  }

  static Expected<Effect> Fail(std::string* why, std::string reason) {
    *why = std::move(reason);
    return Effect::Kept(*why);
  }

  // The Gather output becomes a body input; its value_info moves there, or is computed from
  // the data's shape without axis 0 (B15).
  static void AddScanInput(onnx::GraphProto* body, const GraphScope& scope, const GraphScope& body_scope,
                           const onnx::NodeProto& gather) {
    const std::string& name = gather.output(0);
    auto* vis = body->mutable_value_info();
    for (int i = 0; i < vis->size(); ++i) {
      if (vis->Get(i).name() == name) {
        body->add_input()->Swap(vis->Mutable(i));
        vis->DeleteSubrange(i, 1);
        return;
      }
    }
    onnx::ValueInfoProto vi = *scope.FindValueInfo(gather.input(0));
    vi.set_name(name);
    auto* shape = vi.mutable_type()->mutable_tensor_type()->mutable_shape();
    if (shape->dim_size() > 0) shape->mutable_dim()->DeleteSubrange(0, 1);
    *body->add_input() = std::move(vi);
  }

  // Scan outputs must be distinct: a repeated output k reads Identity(o) -> o_extend_<n>.
  static void DeduplicateOutputs(onnx::GraphProto* body, NodeBuilder* b) {
    for (int j = 0; j < body->output_size(); ++j) {
      for (int k = j + 1; k < body->output_size(); ++k) {
        const std::string name = body->output(j).name();
        if (body->output(k).name() != name) continue;
        std::string extended = b->names().Fixed(name + "_extend_0");
        auto& id = b->Add("Identity", {name}, {extended});
        id.set_name(b->names().Fixed(name + "_identity"));
        body->mutable_output(k)->set_name(extended);
      }
    }
  }

  bool keep_;
};

}  // namespace

std::unique_ptr<GraphPass> CreateLoopToScanPass(const EditorOptions& options) {
  return std::make_unique<LoopToScanPass>(options);
}

}  // namespace nuphar::editor
