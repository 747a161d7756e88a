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

}  // namespace
}  // namespace nuphar
