// pass: the driver recurses into bodies, splices replacements in place and removes dead values.
#include "graph/pass.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include "graph/tensor_data.h"

namespace nuphar {
namespace {

// Relu(x) -> Max(x, 0) with a constant; marks nothing.
class ReluToMax final : public GraphPass {
 public:
  std::string Name() const override { return "relu_to_max"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Relu"}; }
  int64_t MinOpset() const override { return 12; }
  bool Matches(const onnx::NodeProto& node, std::string* why_not) const override {
    if (node.name() == "skip_me") {
      *why_not = "named skip_me";
      return false;
    }
    return true;
  }
  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    ctx.builder().Op("Max", {node.input(0), ctx.builder().ScalarF(0.f)}, node.output(0));
    return Effect::Replaced();
  }
};

// Identity(w) where w is an initializer -> Identity of a copy; marks w as maybe-dead.
class RetargetIdentity final : public GraphPass {
 public:
  std::string Name() const override { return "retarget"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Identity"}; }
  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    ctx.builder().Op("Identity", {ctx.builder().ScalarF(1.f)}, node.output(0));
    ctx.MarkMaybeDead(node.input(0));
    return Effect::Replaced();
  }
};

onnx::ModelProto Model() {
  onnx::ModelProto m;
  m.add_opset_import()->set_version(11);
  auto* g = m.mutable_graph();
  NameTable names;
  NodeBuilder b(g, &names, 11);
  b.Op("Relu", {"x"}, "a");
  auto& skipped = b.Add("Relu", {"a"}, {"b"});
  skipped.set_name("skip_me");
  onnx::GraphProto body;
  NodeBuilder bb(&body, &names, 11);
  bb.Op("Relu", {"b"}, "inner");
  bb.AddValueInfo("inner", DType::kFloat, {}, body.mutable_output());
  auto& iff = b.Add("If", {"cond"}, {"y"});
  SetAttr(iff, "then_branch", std::move(body));
  b.AddValueInfo("y", DType::kFloat, {}, g->mutable_output());
  return m;
}

TEST(PassDriver, RewritesEveryGraphInPlaceAndRaisesOpset) {
  auto m = Model();
  ReluToMax pass;
  std::vector<std::string> log;
  PassRunOptions options;
  options.verbose = true;
  options.log = [&](const std::string& line) { log.push_back(line); };
  auto stats = RunPass(m, pass, options);
  ASSERT_TRUE(stats.ok()) << stats.message();
  EXPECT_EQ(stats->rewritten, 2);
  EXPECT_EQ(stats->opset, 12);
  EXPECT_EQ(m.opset_import(0).version(), 12);
  EXPECT_EQ(m.graph().node(0).op_type(), "Max");  // at the Relu's position
  EXPECT_EQ(m.graph().node(1).name(), "skip_me");
  EXPECT_EQ(m.graph().node(2).attribute(0).g().node(0).op_type(), "Max");
  ASSERT_EQ(log.size(), 1u);
  EXPECT_NE(log[0].find("named skip_me"), std::string::npos);
}

TEST(PassDriver, RemovesMaybeDeadValuesOnlyWhenNothingReadsThem) {
  onnx::ModelProto m;
  auto* g = m.mutable_graph();
  NameTable names;
  NodeBuilder b(g, &names, 11);
  b.Const<float>({1}, {2.f}, "w_alone");
  b.Const<float>({1}, {3.f}, "w_shared");
  b.Op("Identity", {"w_alone"}, "o1");
  b.Op("Identity", {"w_shared"}, "o2");
  b.Op("Neg", {"w_shared"}, "o3");
  b.AddValueInfo("w_alone", DType::kFloat, {DimSpec::Of(1)}, g->mutable_input());
  for (const char* o : {"o1", "o2", "o3"}) b.AddValueInfo(o, DType::kFloat, {}, g->mutable_output());
  RetargetIdentity pass;
  ASSERT_TRUE(RunPass(m, pass).ok());
  std::vector<std::string> inits;
  for (const auto& t : m.graph().initializer()) inits.push_back(t.name());
  EXPECT_EQ(std::count(inits.begin(), inits.end(), "w_alone"), 0);
  EXPECT_EQ(std::count(inits.begin(), inits.end(), "w_shared"), 1);  // Neg still reads it
  EXPECT_EQ(m.graph().input_size(), 0);                                // backing input went with it
}

// Records the order in which the driver offers nodes; replaces Relu named "replace".
class OrderProbe final : public GraphPass {
 public:
  explicit OrderProbe(SubgraphOrder order) : order_(order) {}
  std::string Name() const override { return "order_probe"; }
  std::vector<std::string> TargetOpTypes() const override { return {"Relu", "If"}; }
  SubgraphOrder Order() const override { return order_; }
  Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) override {
    seen.push_back(node.output(0));
    if (node.name() != "replace") return Effect::Kept("");
    ctx.builder().Op("Identity", {node.input(0)}, node.output(0));
    return Effect::Replaced();
  }
  std::vector<std::string> seen;

 private:
  SubgraphOrder order_;
};

TEST(PassDriver, SubgraphOrderIsAParameterOfTheWalk) {
  // Model(): a = Relu(x); b = Relu(a) "skip_me"; y = If(cond){ inner = Relu(b) }.
  auto before = Model();
  OrderProbe bodies_first(SubgraphOrder::kBeforeNode);
  ASSERT_TRUE(RunPass(before, bodies_first).ok());
  EXPECT_EQ(bodies_first.seen, (std::vector<std::string>{"a", "b", "inner", "y"}));

  auto after = Model();
  OrderProbe node_first(SubgraphOrder::kAfterKeptNode);
  ASSERT_TRUE(RunPass(after, node_first).ok());
  EXPECT_EQ(node_first.seen, (std::vector<std::string>{"a", "b", "y", "inner"}));

  // A replaced node's subgraphs are not walked under kAfterKeptNode.
  auto replaced = Model();
  replaced.mutable_graph()->mutable_node(2)->set_name("replace");
  OrderProbe skip_body(SubgraphOrder::kAfterKeptNode);
  ASSERT_TRUE(RunPass(replaced, skip_body).ok());
  EXPECT_EQ(skip_body.seen, (std::vector<std::string>{"a", "b", "y"}));
  EXPECT_EQ(replaced.graph().node(2).op_type(), "Identity");
}

TEST(PassDriver, ScopedDeadValuesKeepOtherGraphsAndValueInfo) {
  // main: initializer w (unread, with a value_info); If whose branch has its own w.
  onnx::ModelProto m;
  NameTable names;
  NodeBuilder b(m.mutable_graph(), &names, 13);
  b.Const<float>({1}, {1.f}, "w");
  b.AddValueInfo("w", DType::kFloat, {DimSpec::Of(1)});
  onnx::GraphProto body;
  body.add_initializer()->set_name("w");  // a same-named initializer of another graph
  auto* in = body.add_input();
  in->set_name("w");
  auto& iff = b.Add("If", {"c"}, {"y"});
  SetAttr(iff, "then_branch", std::move(body));
  DeadValueOptions options;
  options.follow_producers = false;
  options.drop_value_info = false;
  options.drop_subgraph_inputs = true;
  std::vector<std::pair<const onnx::GraphProto*, std::string>> dead = {{&m.graph(), "w"}};
  EXPECT_EQ(RemoveDeadValues(m, dead, options), 1);
  EXPECT_EQ(m.graph().initializer_size(), 0);
  EXPECT_EQ(m.graph().value_info_size(), 1);  // kept: drop_value_info = false
  EXPECT_EQ(m.graph().node(0).attribute(0).g().initializer_size(), 1);
  EXPECT_EQ(m.graph().node(0).attribute(0).g().input_size(), 1);
}

TEST(PassDriver, DeadCodeEliminationOfOneGraph) {
  // x -> a -> b (unread) ; x -> c (graph output); w feeds only the dead chain.
  onnx::GraphProto g;
  NameTable names;
  NodeBuilder b(&g, &names, 13);
  b.Const<float>({1}, {1.f}, "w");
  b.Op("Add", {"x", "w"}, "a");
  b.Op("Relu", {"a"}, "b");
  b.Op("Relu", {"x"}, "c");
  g.add_output()->set_name("c");
  DeadValueOptions dce;
  dce.all_nodes = true;
  dce.follow_producers = false;  // initializers are not candidates
  dce.subgraphs = false;
  EXPECT_EQ(RemoveDeadValues(&g, /*is_main=*/false, {}, dce), 2);
  ASSERT_EQ(g.node_size(), 1);
  EXPECT_EQ(g.node(0).output(0), "c");
  EXPECT_EQ(g.initializer_size(), 1);
}

// A pass that rewrites a whole graph level at once (as the runtime's fusions do): it counts Relus.
class CountRelus final : public GraphPass {
 public:
  std::string Name() const override { return "count_relus"; }
  SubgraphOrder Order() const override { return SubgraphOrder::kEachGraphByDriver; }
  bool MayApply(const onnx::GraphProto& graph) const override { return graph.node_size() > 0; }
  Expected<int> ApplyToGraph(onnx::GraphProto* graph, PassContext&) override {
    int n = 0;
    for (const auto& node : graph->node()) n += node.op_type() == "Relu";
    return n;
  }
};

class OtherContext final : public PassContext {};

TEST(PassInterface, GraphLevelPassesRunThroughTheSameInterface) {
  auto m = Model();
  CountRelus counter;
  GraphPass& pass = counter;
  OtherContext ctx;
  EXPECT_TRUE(pass.MayApply(m.graph()));
  auto counted = pass.ApplyToGraph(m.mutable_graph(), ctx);
  ASSERT_TRUE(counted.ok()) << counted.message();
  EXPECT_EQ(*counted, 2);  // this level only: the If body's Relu is the driver's to hand in
  // RunPass walks whole models with node-wise passes; a graph-level pass is refused, not skipped.
  auto refused = RunPass(m, pass);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("count_relus"), std::string::npos) << refused.message();
}

TEST(PassInterface, NodeWisePassNeedsRunPassContext) {
  auto m = Model();
  ReluToMax pass;
  OtherContext ctx;
  auto result = pass.ApplyToGraph(m.mutable_graph(), ctx);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.message().find("relu_to_max"), std::string::npos) << result.message();
  EXPECT_EQ(m.graph().node(0).op_type(), "Relu");  // untouched
}

// A target op with no schema at the model's opset (here opset 0) is arity-checked against its
// newest schema before any pass indexes its inputs (fuzz_graph_tools: one-input MatMul and Gemm).
class ReadsTwoInputs final : public GraphPass {
 public:
  std::string Name() const override { return "reads_two_inputs"; }
  std::vector<std::string> TargetOpTypes() const override { return {"MatMul"}; }
  Expected<Effect> Rewrite(RewriteContext&, const onnx::NodeProto& node) override {
    return Effect::Kept(node.input(1));  // out of bounds unless the driver checked the count
  }
};

TEST(PassDriver, OpWithoutSchemaAtTheOpsetIsCheckedAgainstItsNewest) {
  onnx::ModelProto m;
  m.add_opset_import()->set_version(0);
  auto* n = m.mutable_graph()->add_node();
  n->set_op_type("MatMul");
  n->add_input("u");
  n->add_output("y");
  ReadsTwoInputs pass;
  auto result = RunPass(m, pass);
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.message().find("inputs"), std::string::npos) << result.message();
}

}  // namespace
}  // namespace nuphar
