// Scan, Loop and If: ONNX backend node tests, edge cases they miss (axes, directions, ragged
// opset-8 batches, zero iterations, states that alias inputs or each other, outer-scope values,
// branches of different shapes) and proofs that Scan steps and kept If branches do not allocate.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <string>
#include <vector>

#include "runtime/session.h"
#include "tests/modellib/model_builder.h"

namespace nuphar::testing {

Status RunBackendNodeTest(const std::string& name);  // rnn_test.cc

namespace {

std::vector<float> Floats(const Tensor& t) { return std::vector<float>(t.data<float>(), t.data<float>() + t.size()); }

Expected<std::vector<Tensor>> RunModel(const onnx::GraphProto& g, int opset, const NamedTensors& feeds) {
  auto session = Session::CreateFromModel(MakeModel(g, opset));
  if (!session) return session.status();
  return (*session)->Run(feeds);
}

// ---------------------------------------------------------------------------------------------
// Backend node tests.

class ControlFlowBackendTest : public ::testing::TestWithParam<const char*> {};

TEST_P(ControlFlowBackendTest, Passes) {
  Status s = RunBackendNodeTest(GetParam());
  EXPECT_TRUE(s.ok()) << s.message();
}

INSTANTIATE_TEST_SUITE_P(Node, ControlFlowBackendTest,
                         ::testing::Values("test_scan_sum", "test_scan9_sum", "test_loop11", "test_if",
                                           "test_range_float_type_positive_delta_expanded",
                                           "test_range_int32_type_negative_delta_expanded"),
                         [](const auto& info) { return std::string(info.param); });

class RefusedBackendTest : public ::testing::TestWithParam<const char*> {};

// Sequence- and optional-typed subgraph values are refused at load time, naming the reason.
TEST_P(RefusedBackendTest, IsRefusedAtLoad) {
  Status s = RunBackendNodeTest(GetParam());
  ASSERT_FALSE(s.ok());
  const std::string m = s.message();
  EXPECT_TRUE(m.find("sequence") != std::string::npos || m.find("optional") != std::string::npos ||
              m.find("Sequence") != std::string::npos || m.find("Optional") != std::string::npos)
      << m;
}

INSTANTIATE_TEST_SUITE_P(Node, RefusedBackendTest,
                         ::testing::Values("test_if_seq", "test_if_opt", "test_loop13_seq", "test_loop16_seq_none"),
                         [](const auto& info) { return std::string(info.param); });

// ---------------------------------------------------------------------------------------------
// Scan.

// Body: sum_out = sum_in + x_t; scan_out = sum_out (running sums).
onnx::GraphProto RunningSumBody(int64_t width) {
  onnx::GraphProto body;
  body.set_name("sum_body");
  *body.add_input() = MakeValueInfo("sum_in", DType::kFloat, {width});
  *body.add_input() = MakeValueInfo("x_t", DType::kFloat, {width});
  *body.add_output() = MakeValueInfo("sum_out", DType::kFloat, {width});
  *body.add_output() = MakeValueInfo("scan_out", DType::kFloat, {width});
  AddNode(body, "Add", {"sum_in", "x_t"}, {"sum_out"});
  AddNode(body, "Identity", {"sum_out"}, {"scan_out"});
  return body;
}

TEST(Scan, InputAxisAndReverseDirectionsMatchNaive) {
  // x [W=2, S=4]: scanned along axis 1 in reverse; output stacked along axis 1, reversed again.
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("init", DType::kFloat, {2});
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {2, 4});
  g.add_output()->set_name("final");
  g.add_output()->set_name("sums");
  auto& scan = AddNode(g, "Scan", {"init", "x"}, {"final", "sums"});
  SetAttr(scan, "num_scan_inputs", int64_t(1));
  SetAttr(scan, "scan_input_axes", std::vector<int64_t>{-1});
  SetAttr(scan, "scan_input_directions", std::vector<int64_t>{1});
  SetAttr(scan, "scan_output_axes", std::vector<int64_t>{1});
  SetAttr(scan, "scan_output_directions", std::vector<int64_t>{1});
  SetAttr(scan, "body", RunningSumBody(2));
  std::vector<float> x = {1, 2, 3, 4, 10, 20, 30, 40};
  auto out = RunModel(g, 16, {{"init", Tensor::FromVector<float>({2}, {100, 200})},
                              {"x", Tensor::FromVector<float>({2, 4}, x)}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{110, 300}));
  // Step t reads column 3-t; its running sum is written to column 3-t.
  std::vector<float> want(8);
  for (int w = 0; w < 2; ++w) {
    float s = w == 0 ? 100 : 200;
    for (int t = 0; t < 4; ++t) {
      s += x[w * 4 + (3 - t)];
      want[w * 4 + (3 - t)] = s;
    }
  }
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{2, 4}));
  EXPECT_EQ(Floats((*out)[1]), want);
}

TEST(Scan, Opset8RaggedBatchWithReverseInput) {
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("lens", DType::kInt32, {2});
  *g.add_input() = MakeValueInfo("init", DType::kFloat, {2, 1});
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {2, 3, 1});
  g.add_output()->set_name("final");
  g.add_output()->set_name("sums");
  auto& scan = AddNode(g, "Scan", {"lens", "init", "x"}, {"final", "sums"});
  SetAttr(scan, "num_scan_inputs", int64_t(1));
  SetAttr(scan, "directions", std::vector<int64_t>{1});
  SetAttr(scan, "body", RunningSumBody(1));
  auto out = RunModel(g, 8, {{"lens", Tensor::FromVector<int32_t>({2}, {3, 2})},
                             {"init", Tensor::FromVector<float>({2, 1}, {0, 1000})},
                             {"x", Tensor::FromVector<float>({2, 3, 1}, {1, 2, 3, 10, 20, 30})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{6, 1030}));
  // Row 1 has length 2: reverse reads 20 then 10; step 2 is padding (zero).
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{3, 5, 6, 1020, 1030, 0}));
}

TEST(Scan, ZeroLengthKeepsStatesAndGivesEmptyOutputs) {
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("init", DType::kFloat, {2});
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {0, 2});
  g.add_output()->set_name("final");
  g.add_output()->set_name("sums");
  auto& scan = AddNode(g, "Scan", {"init", "x"}, {"final", "sums"});
  SetAttr(scan, "num_scan_inputs", int64_t(1));
  SetAttr(scan, "body", RunningSumBody(2));
  auto out = RunModel(g, 11, {{"init", Tensor::FromVector<float>({2}, {5, 6})},
                              {"x", Tensor::FromVector<float>({0, 2}, {})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{5, 6}));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{0, 2}));
}

// States that swap with each other and a state that is the scan input slice itself: the
// ping-pong must fall back to rebinding and must not let a state share the slice buffer.
TEST(Scan, StatesAliasingInputsAndEachOther) {
  onnx::GraphProto body;
  body.set_name("alias_body");
  *body.add_input() = MakeValueInfo("a_in", DType::kFloat, {1});
  *body.add_input() = MakeValueInfo("b_in", DType::kFloat, {1});
  *body.add_input() = MakeValueInfo("last_in", DType::kFloat, {1});
  *body.add_input() = MakeValueInfo("x_t", DType::kFloat, {1});
  for (const char* o : {"b_in", "a_in", "x_t", "prev"}) body.add_output()->set_name(o);
  AddNode(body, "Identity", {"last_in"}, {"prev"});
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("a", DType::kFloat, {1});
  *g.add_input() = MakeValueInfo("b", DType::kFloat, {1});
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {3, 1});
  for (const char* o : {"a_out", "b_out", "last", "prevs"}) g.add_output()->set_name(o);
  auto& scan = AddNode(g, "Scan", {"a", "b", "a", "x"}, {"a_out", "b_out", "last", "prevs"});
  SetAttr(scan, "num_scan_inputs", int64_t(1));
  SetAttr(scan, "body", body);
  auto out = RunModel(g, 11, {{"a", Tensor::FromVector<float>({1}, {1})},
                              {"b", Tensor::FromVector<float>({1}, {2})},
                              {"x", Tensor::FromVector<float>({3, 1}, {7, 8, 9})}});
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{2}));  // three swaps
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{1}));
  EXPECT_EQ(Floats((*out)[2]), (std::vector<float>{9}));
  EXPECT_EQ(Floats((*out)[3]), (std::vector<float>{1, 7, 8}));  // each step sees the previous slice
}

TEST(Scan, StepsDoNotAllocate) {
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("init", DType::kFloat, {4});
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {"S", 4});
  g.add_output()->set_name("final");
  g.add_output()->set_name("sums");
  auto& scan = AddNode(g, "Scan", {"init", "x"}, {"final", "sums"});
  SetAttr(scan, "num_scan_inputs", int64_t(1));
  SetAttr(scan, "body", RunningSumBody(4));
  auto session = Session::CreateFromModel(MakeModel(g, 11));
  ASSERT_TRUE(session) << session.status().message();
  auto allocations_for = [&](int64_t steps) {
    NamedTensors feeds = {{"init", Tensor::FromVector<float>({4}, {0, 0, 0, 0})},
                          {"x", Tensor::FromVector<float>({steps, 4}, std::vector<float>(size_t(steps * 4), 1.0f))}};
    EXPECT_TRUE((*session)->Run(feeds));  // warm-up
    const uint64_t before = Buffer::AllocationCount();
    auto out = (*session)->Run(feeds);
    EXPECT_TRUE(out);
    EXPECT_EQ((*out)[0].data<float>()[0], float(steps));
    return Buffer::AllocationCount() - before;
  };
  const uint64_t short_run = allocations_for(4);
  const uint64_t long_run = allocations_for(400);
  EXPECT_EQ(short_run, long_run) << "allocations grow with the number of steps";
  EXPECT_LE(long_run, 8u);
}

// ---------------------------------------------------------------------------------------------
// Loop.

// Body: acc_out = acc_in + float(i), cond_out = acc_out < limit (shape [1]), scan = acc_out.
onnx::GraphProto CountingBody() {
  onnx::GraphProto body;
  body.set_name("count_body");
  *body.add_input() = MakeValueInfo("i", DType::kInt64, {});
  *body.add_input() = MakeValueInfo("cond_in", DType::kBool, {});
  *body.add_input() = MakeValueInfo("acc_in", DType::kFloat, {1});
  *body.add_output() = MakeValueInfo("cond_out", DType::kBool, {1});
  *body.add_output() = MakeValueInfo("acc_out", DType::kFloat, {1});
  *body.add_output() = MakeValueInfo("scan", DType::kFloat, {1});
  auto& cast = AddNode(body, "Cast", {"i"}, {"i_f"});
  SetAttr(cast, "to", int64_t(1));
  AddNode(body, "Add", {"acc_in", "i_f"}, {"acc_out"});
  AddNode(body, "Less", {"acc_out", "limit"}, {"cond_out"});  // "limit" comes from the outer graph
  AddNode(body, "Identity", {"acc_out"}, {"scan"});
  return body;
}

Expected<std::vector<Tensor>> RunCountingLoop(bool with_m, int64_t m, bool with_cond, float limit) {
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("M", DType::kInt64, {});
  *g.add_input() = MakeValueInfo("cond", DType::kBool, {});
  *g.add_input() = MakeValueInfo("acc", DType::kFloat, {1});
  *g.add_input() = MakeValueInfo("limit", DType::kFloat, {1});
  g.add_output()->set_name("acc_final");
  g.add_output()->set_name("accs");
  auto& loop = AddNode(g, "Loop", {with_m ? "M" : "", with_cond ? "cond" : "", "acc"}, {"acc_final", "accs"});
  SetAttr(loop, "body", CountingBody());
  return RunModel(g, 13, {{"M", Tensor::Scalar<int64_t>(m)},
                          {"cond", Tensor::Scalar<bool>(true)},
                          {"acc", Tensor::FromVector<float>({1}, {0})},
                          {"limit", Tensor::FromVector<float>({1}, {limit})}});
}

TEST(Loop, TripCountOnlyIgnoresCond) {
  auto out = RunCountingLoop(true, 5, false, 2.0f);  // cond_out turns false early but is ignored
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{10}));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{5, 1}));
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{0, 1, 3, 6, 10}));
}

TEST(Loop, CondOnlyStopsWhenBodySaysSo) {
  auto out = RunCountingLoop(false, 0, true, 5.0f);  // 0, 1, 3, 6 -> stops after 6 >= 5
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{6}));
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{0, 1, 3, 6}));
}

TEST(Loop, TripCountAndCondWhicheverComesFirst) {
  auto out = RunCountingLoop(true, 3, true, 100.0f);
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{3}));
  EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{0, 1, 3}));
}

TEST(Loop, ZeroIterationsGiveInitialValuesAndEmptyScanOutputs) {
  auto out = RunCountingLoop(true, 0, true, 100.0f);
  ASSERT_TRUE(out) << out.status().message();
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{0}));
  EXPECT_EQ((*out)[1].shape(), (std::vector<int64_t>{0, 1}));
}

// ---------------------------------------------------------------------------------------------
// If.

// A session of one If node on input "c" with output "out"; the branches read the float graph
// inputs `inputs` (name, length) from the outer graph.
std::unique_ptr<Session> IfSession(const onnx::GraphProto& then_g, const onnx::GraphProto& else_g,
                                   const std::vector<std::pair<std::string, int64_t>>& inputs) {
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("c", DType::kBool, {});
  for (const auto& [name, length] : inputs) *g.add_input() = MakeValueInfo(name, DType::kFloat, {length});
  g.add_output()->set_name("out");
  auto& n = AddNode(g, "If", {"c"}, {"out"});
  SetAttr(n, "then_branch", then_g);
  SetAttr(n, "else_branch", else_g);
  auto session = Session::CreateFromModel(MakeModel(g, 13));
  EXPECT_TRUE(session) << session.status().message();
  return session ? std::move(*session) : nullptr;
}

TEST(If, BranchesWithDifferentShapesAndOuterValues) {
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  else_g.set_name("else");
  then_g.add_output()->set_name("t_out");
  else_g.add_output()->set_name("e_out");
  AddNode(then_g, "Add", {"x", "x"}, {"t_out"});  // x from the outer graph
  AddNode(else_g, "Identity", {"y"}, {"e_out"});
  auto session = IfSession(then_g, else_g, {{"x", 2}, {"y", 3}});
  ASSERT_TRUE(session);
  for (bool c : {true, false}) {
    auto out = session->Run({{"c", Tensor::Scalar<bool>(c)},
                             {"x", Tensor::FromVector<float>({2}, {1, 2})},
                             {"y", Tensor::FromVector<float>({3}, {7, 8, 9})}});
    ASSERT_TRUE(out) << out.status().message();
    EXPECT_EQ(Floats((*out)[0]), (c ? std::vector<float>{2, 4} : std::vector<float>{7, 8, 9}));
  }
}

// The executing frame keeps each branch's frame (Frame::SubgraphFrame): after each branch has
// run once, a Run allocates only the output it hands to the caller, however many nodes the
// branch has, and the kept branch reads each Run's outer values, not the first Run's.
TEST(If, KeptBranchFramesReadNewOuterValuesAndDoNotAllocate) {
  constexpr int kChain = 8;
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  else_g.set_name("else");
  std::string t = "x", e = "x";
  for (int i = 0; i < kChain; ++i) {
    const std::string tn = "t" + std::to_string(i), en = "e" + std::to_string(i);
    AddNode(then_g, "Add", {t, "x"}, {tn});  // x from the outer graph
    AddNode(else_g, "Sub", {e, "x"}, {en});
    t = tn;
    e = en;
  }
  then_g.add_output()->set_name(t);
  else_g.add_output()->set_name(e);
  auto session = IfSession(then_g, else_g, {{"x", 3}});
  ASSERT_TRUE(session);
  for (int run = 0; run < 4; ++run) {
    const bool c = run % 2 == 0;
    const float x = static_cast<float>(run + 1);
    const NamedTensors feeds = {{"c", Tensor::Scalar<bool>(c)}, {"x", Tensor::FromVector<float>({3}, {x, x, x})}};
    const uint64_t before = Buffer::AllocationCount();
    auto out = session->Run(feeds);
    const uint64_t allocations = Buffer::AllocationCount() - before;
    ASSERT_TRUE(out) << out.status().message();
    const float expected = c ? (kChain + 1) * x : (1 - kChain) * x;
    EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{expected, expected, expected})) << "run " << run;
    if (run >= 2) EXPECT_EQ(allocations, 1u) << "run " << run << " (only the output handed to the caller)";
  }
}

// A large branch output (shared with the node's output, not copied: SetOutputAlias) that a Run
// hands to the caller stays the caller's: later Runs on the same session, which reuse the kept
// branch frame, do not write into it.
TEST(If, LargeOutputsHandedToTheCallerStayUnchanged) {
  constexpr int64_t kLarge = 128 * 1024;  // floats: 512 KB, above SetOutputAlias's copy limit
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  else_g.set_name("else");
  AddNode(then_g, "Add", {"x", "x"}, {"t_out"});
  AddNode(else_g, "Neg", {"x"}, {"e_out"});
  then_g.add_output()->set_name("t_out");
  else_g.add_output()->set_name("e_out");
  auto session = IfSession(then_g, else_g, {{"x", kLarge}});
  ASSERT_TRUE(session);
  std::vector<std::vector<Tensor>> kept;
  for (int run = 0; run < 4; ++run) {
    const float x = static_cast<float>(run + 1);
    auto out = session->Run({{"c", Tensor::Scalar<bool>(run % 2 == 0)},
                             {"x", Tensor::FromVector<float>({kLarge}, std::vector<float>(kLarge, x))}});
    ASSERT_TRUE(out) << out.status().message();
    kept.push_back(std::move(*out));
  }
  for (int run = 0; run < 4; ++run) {
    const float x = static_cast<float>(run + 1), want = run % 2 == 0 ? 2 * x : -x;
    const std::vector<float> got = Floats(kept[static_cast<size_t>(run)][0]);
    EXPECT_EQ(std::count(got.begin(), got.end(), want), kLarge) << "run " << run;
  }
}

TEST(If, RefusesBranchWithWrongOutputCount) {
  onnx::GraphProto then_g, else_g;
  then_g.add_output()->set_name("x");
  AddNode(then_g, "Identity", {"x"}, {"unused"});
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("c", DType::kBool, {});
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {2});
  g.add_output()->set_name("out");
  auto& n = AddNode(g, "If", {"c"}, {"out"}, "bad_if");
  SetAttr(n, "then_branch", then_g);
  SetAttr(n, "else_branch", else_g);
  auto session = Session::CreateFromModel(MakeModel(g, 13));
  ASSERT_FALSE(session);
  EXPECT_NE(session.status().message().find("bad_if"), std::string::npos) << session.status().message();
}

}  // namespace
}  // namespace nuphar::testing
