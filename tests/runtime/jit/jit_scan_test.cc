// Whole-Scan compilation: to_scan LSTM/GRU/RNN models (float and --only_for_scan int8,
// unidirectional and bidirectional = reverse scan directions, batch 1 and a symbolic batch) run
// as generated loops, bit-identical to the reference executor; a body the loop cannot take runs
// the reference Scan.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <cstring>
#include <random>

#include "graph/diagnostics.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"
#include "tests/modellib/same_outputs.h"
#include "tests/modellib/scan_rnn_model.h"

namespace nuphar {
namespace {

struct Case {
  std::string op;
  bool bidirectional;
  bool int8;
  std::string batch;  // "1" or a symbol
  int64_t run_batch;
};

std::string Name(const Case& c) {
  return c.op + (c.bidirectional ? "_bi" : "_uni") + (c.int8 ? "_int8" : "_float") + "_batch" + c.batch;
}

onnx::ModelProto MakeScanModel(const Case& c) {
  bench::RnnModelSpec spec;
  spec.op = c.op;
  spec.input_dim = 24;
  spec.hidden_dim = 40;  // not a multiple of the vector width: loop tails run
  spec.layers = 2;
  spec.bidirectional = c.bidirectional;
  spec.seq_len = "seq";
  spec.batch = c.batch;
  return testing::MakeScanRnnModel(spec, c.int8);
}

Tensor RandomInput(int64_t seq, int64_t batch, int64_t dim, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(static_cast<size_t>(seq * batch * dim));
  for (auto& x : v) x = dist(rng);
  return Tensor::FromVector<float>({seq, batch, dim}, v);
}

class JitScanTest : public ::testing::TestWithParam<Case> {};

TEST_P(JitScanTest, WholeLoopIsGeneratedAndBitIdentical) {
  const Case& c = GetParam();
  const onnx::ModelProto model = MakeScanModel(c);
  SessionOptions ref_opts, jit_opts;
  ref_opts.settings = "nuphar_execution_mode:reference";
  auto ref = Session::CreateFromModel(model, ref_opts);
  auto jit = Session::CreateFromModel(model, jit_opts);
  ASSERT_TRUE(ref.ok()) << ref.message();
  ASSERT_TRUE(jit.ok()) << jit.message();
  const int64_t scans = (c.bidirectional ? 2 : 1) * 2;  // per direction, per layer
  EXPECT_EQ((*jit)->counter("jit_scan_loops"), scans) << "every Scan is one generated loop";
  for (int64_t seq : {1, 2, 7}) {
    SCOPED_TRACE("seq " + std::to_string(seq));
    testing::ExpectSameOutputs(**ref, **jit, {{"input", RandomInput(seq, c.run_batch, 24, static_cast<uint32_t>(seq))}});
  }
}

INSTANTIATE_TEST_SUITE_P(
    RnnModels, JitScanTest,
    ::testing::Values(Case{"lstm", false, true, "1", 1}, Case{"lstm", true, true, "1", 1},
                      Case{"lstm", false, false, "1", 1}, Case{"lstm", true, true, "batch", 3},
                      Case{"gru", false, true, "1", 1}, Case{"gru", true, false, "batch", 2},
                      Case{"rnn", true, true, "1", 1}, Case{"rnn", false, false, "batch", 2}),
    [](const ::testing::TestParamInfo<Case>& info) { return Name(info.param); });

// A body with a node the loop cannot run (Transpose has no generator): the reference Scan runs it.
TEST(JitScan, BodyWithAReferenceNodeRunsStepByStep) {
  using testing::AddNode;
  using testing::MakeValueInfo;
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_input() = MakeValueInfo("s", DType::kFloat, {int64_t{3}, int64_t{3}});
  *body.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{3}, int64_t{3}});
  *body.add_output() = MakeValueInfo("s2", DType::kFloat, {int64_t{3}, int64_t{3}});
  *body.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{3}, int64_t{3}});
  *body.add_value_info() = MakeValueInfo("t", DType::kFloat, {int64_t{3}, int64_t{3}});
  AddNode(body, "Transpose", {"s"}, {"t"});
  AddNode(body, "Add", {"t", "x"}, {"s2"});
  AddNode(body, "Relu", {"s2"}, {"y"});
  onnx::GraphProto g;
  g.set_name("main");
  *g.add_input() = MakeValueInfo("s0", DType::kFloat, {int64_t{3}, int64_t{3}});
  *g.add_input() = MakeValueInfo("xs", DType::kFloat, {int64_t{4}, int64_t{3}, int64_t{3}});
  *g.add_output() = MakeValueInfo("sN", DType::kFloat, {int64_t{3}, int64_t{3}});
  *g.add_output() = MakeValueInfo("ys", DType::kFloat, {int64_t{4}, int64_t{3}, int64_t{3}});
  auto& scan = AddNode(g, "Scan", {"s0", "xs"}, {"sN", "ys"});
  testing::SetAttr(scan, "num_scan_inputs", int64_t{1});
  testing::SetAttr(scan, "body", body);
  const auto model = testing::MakeModel(g, 13);
  SessionOptions opts;
  auto jit = Session::CreateFromModel(model, opts);
  ASSERT_TRUE(jit.ok()) << jit.message();
  EXPECT_EQ((*jit)->counter("jit_scan_loops"), 0);
  opts.settings = "nuphar_execution_mode:reference";
  auto ref = Session::CreateFromModel(model, opts);
  ASSERT_TRUE(ref.ok());
  std::vector<float> s0(9), xs(36);
  for (size_t i = 0; i < s0.size(); ++i) s0[i] = static_cast<float>(i) - 4.f;
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 7) - 3.f;
  NamedTensors feeds = {{"s0", Tensor::FromVector<float>({3, 3}, s0)}, {"xs", Tensor::FromVector<float>({4, 3, 3}, xs)}};
  auto a = (*ref)->Run(feeds);
  auto b = (*jit)->Run(feeds);
  ASSERT_TRUE(a.ok() && b.ok());
  for (size_t o = 0; o < a->size(); ++o)
    EXPECT_EQ(std::memcmp((*a)[o].raw(), (*b)[o].raw(), (*a)[o].bytes()), 0) << "output " << o;
}

}  // namespace
}  // namespace nuphar
