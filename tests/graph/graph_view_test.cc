// graph_view: outer-scope lookups, implicit inputs, use counts, topological sort.
#include "graph/graph_view.h"

#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include "graph/node_builder.h"
#include "graph/tensor_data.h"

namespace nuphar {
namespace {

// main: w (initializer), a = Relu(x); If(c) then: t = Add(a, w) -> output t
onnx::ModelProto ModelWithIf() {
  onnx::ModelProto m;
  auto* g = m.mutable_graph();
  NameTable names;
  NodeBuilder b(g, &names, 13);
  b.AddValueInfo("x", DType::kFloat, {DimSpec::Of(2)}, g->mutable_input());
  b.Const<float>({2}, {1.f, 2.f}, "w");
  b.Op("Relu", {"x"}, "a");
  onnx::GraphProto then_g;
  NodeBuilder tb(&then_g, &names, 13);
  tb.Op("Add", {"a", "w"}, "t");
  tb.AddValueInfo("t", DType::kFloat, {DimSpec::Of(2)}, then_g.mutable_output());
  auto& iff = b.Add("If", {"c"}, {"y"});
  SetAttr(iff, "then_branch", std::move(then_g));
  b.AddValueInfo("y", DType::kFloat, {DimSpec::Of(2)}, g->mutable_output());
  return m;
}

TEST(GraphView, ScopesResolveOuterNames) {
  auto m = ModelWithIf();
  int visited = 0;
  ForEachScope(m, [&](const GraphScope& scope) {
    ++visited;
    if (scope.IsMain()) return;
    const GraphScope* owner = nullptr;
    ASSERT_NE(scope.FindInitializer("w", &owner), nullptr);
    EXPECT_TRUE(owner->IsMain());
    ASSERT_NE(scope.FindProducer("a"), nullptr);
    EXPECT_EQ(scope.FindProducer("a")->op_type(), "Relu");
    EXPECT_NE(scope.FindValueInfo("x"), nullptr);
    EXPECT_EQ(scope.FindProducer("nothing"), nullptr);
  });
  EXPECT_EQ(visited, 2);
}

TEST(GraphView, ImplicitInputsAndUseCountsSeeSubgraphReads) {
  auto m = ModelWithIf();
  const auto& iff = m.graph().node(1);
  EXPECT_EQ(ImplicitInputs(iff), (std::vector<std::string>{"a", "w"}));
  UseCounts uses(m);
  EXPECT_EQ(uses.Count("a"), 1);  // only read inside the branch (B13)
  EXPECT_EQ(uses.Count("w"), 1);
  EXPECT_EQ(uses.Count("y"), 1);  // graph output
  EXPECT_EQ(uses.Count("x"), 1);
  auto names = CollectAllNames(m);
  EXPECT_TRUE(names.count("t") && names.count("w") && names.count("x"));
}

TEST(GraphView, TopologicalSortOrdersByDataAndSubgraphReads) {
  auto m = ModelWithIf();
  auto* g = m.mutable_graph();
  g->mutable_node()->SwapElements(0, 1);  // If before the Relu it reads implicitly
  ASSERT_TRUE(TopologicalSort(g).ok());
  EXPECT_EQ(g->node(0).op_type(), "Relu");
  EXPECT_EQ(g->node(1).op_type(), "If");
  NameTable names;
  NodeBuilder b(g, &names, 13);
  b.Op("Identity", {"q"}, "p");
  b.Op("Identity", {"p"}, "q");
  Status s = TopologicalSort(g);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("cycle"), std::string::npos);
}

TEST(GraphView, UseCountsListConsumersInWalkOrder) {
  auto m = ModelWithIf();
  UseCounts uses(m, UseCounts::Record::kConsumers);
  const auto& a = uses.Consumers("a");
  ASSERT_EQ(a.size(), 1u);
  EXPECT_EQ(a[0].op_type, "Add");
  EXPECT_EQ(a[0].input_index, 0);
  EXPECT_EQ(uses.Consumers("w")[0].input_index, 1);
  EXPECT_TRUE(uses.Consumers("nothing").empty());
}

TEST(GraphView, ChildScopesKnowWhetherTheyAreLoopBodies) {
  onnx::GraphProto main_graph, body, inner;
  onnx::NodeProto scan, iff;
  scan.set_op_type("Scan");
  scan.set_name("s");
  iff.set_op_type("If");
  iff.set_name("i");
  GraphScope main{&main_graph, nullptr, "main"};
  GraphScope then_scope = main.Child(&inner, iff, "then_branch");
  EXPECT_FALSE(then_scope.in_loop_body);
  EXPECT_EQ(then_scope.path, "main/i.then_branch");
  GraphScope body_scope = main.Child(&body, scan, "body");
  EXPECT_TRUE(body_scope.in_loop_body);
  EXPECT_TRUE(body_scope.Child(&inner, iff, "else_branch").in_loop_body);  // nested in a body
}

// 0: b = Relu(a)  1: a = Relu(x)  2: c = Relu(x)  3: d = Add(b, c): ready first {1, 2}.
onnx::GraphProto Unsorted() {
  onnx::GraphProto g;
  NameTable names;
  NodeBuilder b(&g, &names, 13);
  b.Op("Relu", {"a"}, "b");
  b.Op("Relu", {"x"}, "a");
  b.Op("Relu", {"x"}, "c");
  b.Op("Add", {"b", "c"}, "d");
  return g;
}

TEST(GraphView, TopologicalOrderTakesLowestIndexOrFifo) {
  const auto g = Unsorted();
  auto lowest = TopologicalOrder(g);
  ASSERT_TRUE(lowest.ok());
  EXPECT_EQ(lowest.order, (std::vector<int>{1, 0, 2, 3}));
  TopoOptions fifo;
  fifo.ready = ReadyOrder::kFifo;
  auto queued = TopologicalOrder(g, fifo);
  ASSERT_TRUE(queued.ok());
  EXPECT_EQ(queued.order, (std::vector<int>{1, 2, 0, 3}));  // 0 unlocked after 2 was queued
}

TEST(GraphView, SelfReadIsACycleOnlyWhenAsked) {
  onnx::GraphProto g;
  NameTable names;
  NodeBuilder b(&g, &names, 13);
  b.Op("Relu", {"x"}, "a");
  b.Op("Add", {"a", "s"}, "s");
  EXPECT_TRUE(TopologicalOrder(g).ok());
  TopoOptions strict;
  strict.self_read_is_cycle = true;
  auto topo = TopologicalOrder(g, strict);
  ASSERT_FALSE(topo.ok());
  EXPECT_TRUE(topo.self_read);
  EXPECT_EQ(topo.cycle_node, 1);
}

// CopyWithoutWeights: weights keep name, type and dims; everything else is copied whole.
TEST(CopyWithoutWeights, ReducesWeightsInBothConstantModes) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_initializer() = MakeTensor<float>("big", {4, 4}, std::vector<float>(16, 1.f));
  *g.add_initializer() = MakeTensor<float>("small", {2}, {1.f, 2.f});
  auto* constant = g.add_node();
  constant->set_op_type("Constant");
  constant->add_output("c");
  auto* value = constant->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  *value->mutable_t() = MakeTensor<float>("c_value", {8, 2}, std::vector<float>(16, 3.f));
  auto* relu = g.add_node();
  relu->set_op_type("Relu");
  relu->add_input("c");
  relu->add_output("y");
  WeightFreeCopyOptions options;
  options.is_weight = [](const onnx::TensorProto& t) { return t.dims_size() == 2; };

  std::vector<std::pair<std::string, const onnx::TensorProto*>> stripped;
  const onnx::GraphProto kept = CopyWithoutWeights(g, options, &stripped);
  ASSERT_EQ(kept.initializer_size(), 2);
  EXPECT_EQ(kept.initializer(0).name(), "big");
  EXPECT_FALSE(kept.initializer(0).has_raw_data());
  EXPECT_EQ(kept.initializer(0).dims_size(), 2);
  EXPECT_EQ(kept.initializer(1).raw_data(), g.initializer(1).raw_data());
  ASSERT_EQ(kept.node_size(), 2);
  EXPECT_EQ(kept.node(0).op_type(), "Constant");
  EXPECT_FALSE(kept.node(0).attribute(0).t().has_raw_data());
  EXPECT_EQ(kept.node(0).attribute(0).t().dims(0), 8);
  ASSERT_EQ(stripped.size(), 2u);
  EXPECT_EQ(stripped[0].second, &g.initializer(0));

  options.constants = ConstantWeights::kAsInitializer;
  stripped.clear();
  const onnx::GraphProto moved = CopyWithoutWeights(g, options, &stripped);
  ASSERT_EQ(moved.node_size(), 1);  // the Constant is an initializer header now
  EXPECT_EQ(moved.node(0).op_type(), "Relu");
  ASSERT_EQ(moved.initializer_size(), 3);
  EXPECT_EQ(moved.initializer(2).name(), "c");
  ASSERT_EQ(stripped.size(), 2u);
  EXPECT_EQ(stripped[1].first, "c");
  EXPECT_EQ(stripped[1].second, &g.node(0).attribute(0).t());

  // A Constant whose output name an initializer takes stays a node (the duplicate is reported later).
  g.mutable_node(0)->set_output(0, "big");
  EXPECT_EQ(CopyWithoutWeights(g, options).node_size(), 2);
}

}  // namespace
}  // namespace nuphar
