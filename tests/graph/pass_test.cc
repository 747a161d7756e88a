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

}  // namespace
}  // namespace nuphar
