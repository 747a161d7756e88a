// The fused dynamic-quantized MatMul kernel equals the unfused reference execution bit for bit
// (issue 6 acceptance 2; spec runtime.md R3), on the original quantizer's own output, with and
// without the following bias Add absorbed into it.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <random>
#include <unordered_map>

#include "graph/model_io.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/fusion/conv_activation_fusion.h"
#include "runtime/fusion/dynamic_quant_matmul_fusion.h"
#include "runtime/fusion/matmul_bias_fusion.h"
#include "runtime/jit/jit.h"
#include "runtime/platform/cpu_features.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"
#include "tests/modellib/random_tensor.h"

namespace nuphar {
namespace {

struct Fixture {
  const char* file;
  int expected_patterns;  // MatMulIntegers the quantizer emitted (per Scan body, both directions)
  int expected_adds;      // of them followed by an absorbable Add (bias, or the step's input projection)
  int expected_cells;     // of them fused further with their LSTM gates (runtime/fusion/lstm_cell_fusion.h)
};

// Runs the fusion pass on `g` and on every subgraph below it, as GraphPlan::Compile does, with
// the initializers of `g` and of its enclosing graphs as constants.
void FuseEverywhere(onnx::GraphProto* g, std::vector<const onnx::GraphProto*>* scopes, DynQuantFusionReport* report) {
  scopes->push_back(g);
  std::unordered_map<std::string, Tensor> cache;
  ConstantLookup lookup = [&](const std::string& name) -> const Tensor* {
    if (auto it = cache.find(name); it != cache.end()) return &it->second;
    for (auto s = scopes->rbegin(); s != scopes->rend(); ++s)
      for (const auto& init : (*s)->initializer())
        if (init.name() == name) {
          auto t = TensorFromProto(init);
          return t ? &cache.emplace(name, std::move(*t)).first->second : nullptr;
        }
    return nullptr;
  };
  FuseDynamicQuantMatMul(g, lookup, report);
  for (auto& node : *g->mutable_node())
    for (auto& a : *node.mutable_attribute()) {
      if (a.has_g()) FuseEverywhere(a.mutable_g(), scopes, report);
      for (auto& sg : *a.mutable_graphs()) FuseEverywhere(&sg, scopes, report);
    }
  scopes->pop_back();
}

DynQuantFusionReport FuseModel(onnx::ModelProto model) {
  DynQuantFusionReport report;
  std::vector<const onnx::GraphProto*> scopes;
  FuseEverywhere(model.mutable_graph(), &scopes, &report);
  return report;
}

class FusionTest : public ::testing::TestWithParam<Fixture> {};

using testing::RandomTensor;

Tensor RandomInput(int64_t seq, int64_t batch, int64_t dim, uint32_t seed, bool constant_rows) {
  Tensor t = RandomTensor({seq, batch, dim}, seed);
  // All-zero and constant rows take the delta == 0 path.
  for (int64_t row = 0; constant_rows && row < std::min<int64_t>(2, seq * batch); ++row)
    for (int64_t d = 0; d < dim; ++d) t.data<float>()[row * dim + d] = row == 0 ? 0.0f : 0.75f;
  return t;
}

// The fused kernel on every ISA tier this CPU has (nuphar_codegen_target) equals the reference.
TEST_P(FusionTest, FusedOnEveryTierEqualsReferenceBitForBit) {
  const std::string path = std::string(NUPHAR_SHARED_DIR) + "/fixtures/quantizer/" + GetParam().file;
  SessionOptions ref_opts;
  ref_opts.settings = "nuphar_execution_mode:reference";
  auto reference = Session::Create(path, ref_opts);
  ASSERT_TRUE(reference.ok()) << reference.message();
  const std::string input_name = (*reference)->inputs()[0].name;
  const Tensor x = RandomInput(9, 1, 32, 5, true);
  auto want = (*reference)->Run({{input_name, x}});
  ASSERT_TRUE(want.ok()) << want.message();
  for (int t = 0; t < kIsaTierCount; ++t) {
    const IsaTier tier = static_cast<IsaTier>(t);
    if (!HostCpu().Supports(tier)) {
      std::printf("[ INFO ] this CPU lacks the %s tier: not run\n", IsaTierName(tier));
      continue;
    }
    SessionOptions opts;
    opts.settings = std::string("nuphar_codegen_target:") + IsaTierName(tier);
    auto fused = Session::Create(path, opts);
    ASSERT_TRUE(fused.ok()) << fused.message();
    EXPECT_EQ((*fused)->fused_pattern_count(), GetParam().expected_patterns + GetParam().expected_cells);
    EXPECT_EQ((*fused)->counter("fused_lstm_cells"), GetParam().expected_cells);
    auto got = (*fused)->Run({{input_name, x}});
    ASSERT_TRUE(got.ok()) << got.message();
    ASSERT_EQ(got->size(), want->size());
    for (size_t k = 0; k < got->size(); ++k)
      EXPECT_EQ(std::memcmp((*got)[k].raw(), (*want)[k].raw(), (*got)[k].bytes()), 0)
          << "output " << k << " differs on " << IsaTierName(tier);
  }
}

TEST_P(FusionTest, FusedEqualsUnfusedBitForBit) {
  const std::string path = std::string(NUPHAR_SHARED_DIR) + "/fixtures/quantizer/" + GetParam().file;
  SessionOptions fused_opts, ref_opts;
  ref_opts.settings = "nuphar_execution_mode:reference";
  auto fused = Session::Create(path, fused_opts);
  ASSERT_TRUE(fused.ok()) << fused.message();
  auto reference = Session::Create(path, ref_opts);
  ASSERT_TRUE(reference.ok()) << reference.message();
  EXPECT_EQ((*fused)->fused_pattern_count(), GetParam().expected_patterns + GetParam().expected_cells);
  EXPECT_EQ((*reference)->fused_pattern_count(), 0);
  onnx::ModelProto model;
  ASSERT_TRUE(LoadModel(path, &model).ok());
  const DynQuantFusionReport report = FuseModel(model);
  EXPECT_EQ(report.patterns, GetParam().expected_patterns);
  EXPECT_EQ(report.absorbed_adds, GetParam().expected_adds);
  EXPECT_TRUE(report.refused_adds.empty()) << report.refused_adds.front();

  const std::string input_name = (*fused)->inputs()[0].name;
  for (int64_t seq : {1, 7}) {
    for (bool constant_rows : {false, true}) {
      Tensor x = RandomInput(seq, 1, 32, static_cast<uint32_t>(seq), constant_rows);
      auto a = (*fused)->Run({{input_name, x}});
      auto b = (*reference)->Run({{input_name, x}});
      ASSERT_TRUE(a.ok()) << a.message();
      ASSERT_TRUE(b.ok()) << b.message();
      ASSERT_EQ(a->size(), b->size());
      for (size_t k = 0; k < a->size(); ++k) {
        ASSERT_EQ((*a)[k].shape(), (*b)[k].shape());
        EXPECT_EQ(std::memcmp((*a)[k].raw(), (*b)[k].raw(), (*a)[k].bytes()), 0)
            << "output " << k << " differs, seq " << seq << (constant_rows ? " with constant rows" : "");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(QuantizerFixtures, FusionTest,
                         ::testing::Values(Fixture{"only_for_scan.onnx", 4, 4, 4}, Fixture{"all.onnx", 8, 8, 4},
                                           Fixture{"symm16_all.onnx", 8, 8, 0}),
                         [](const auto& info) {
                           std::string n = info.param.file;
                           return n.substr(0, n.find('.'));
                         });

// matmul_edges_q.onnx has three patterns on x [batch, seq, 24] with N = 6; y3 is a graph output.
// The cases reroute y3 through Add(y3_mm, add_b) or Add(add_b, y3_mm). The Add(y1, y2) of the
// fixture stays refused in every case: neither operand has a declared shape. y3's pattern reads
// s (undeclared), so the proof for a [batch, seq, 6] operand goes through Y's declared shape.
enum class AddOperand { kBiasN, kBias1xN, kTensorLikeY, kTensorColumn, kConst1x1 };

struct AddCase {
  const char* name;
  AddOperand operand;
  bool y_first;   // Add(Y, B) rather than Add(B, Y)
  bool absorbed;  // the fusion takes the Add into the fused node
};

class FusionAddTest : public ::testing::TestWithParam<AddCase> {};

onnx::ModelProto EdgesModelWithAdd(const AddCase& c) {
  onnx::ModelProto model;
  const Status loaded = LoadModel(std::string(NUPHAR_SHARED_DIR) + "/fixtures/quantizer/matmul_edges_q.onnx", &model);
  EXPECT_TRUE(loaded.ok()) << loaded.message();
  onnx::GraphProto* g = model.mutable_graph();
  for (auto& n : *g->mutable_node())
    for (auto& o : *n.mutable_output())
      if (o == "y3") o = "y3_mm";
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  auto constant = [&](std::vector<int64_t> shape) {
    Tensor t(DType::kFloat, shape);
    for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = dist(gen);
    *g->add_initializer() = TensorToProto(t, "add_b");
  };
  using testing::Dim;
  // As symbolic shape inference would declare it (the fixture declares only the graph output y3).
  *g->add_value_info() = testing::MakeValueInfo("y3_mm", DType::kFloat, {Dim{"batch"}, Dim{"seq"}, Dim{int64_t{6}}});
  switch (c.operand) {
    case AddOperand::kBiasN: constant({6}); break;
    case AddOperand::kBias1xN: constant({1, 6}); break;
    case AddOperand::kConst1x1: constant({1, 1}); break;
    case AddOperand::kTensorLikeY:
      *g->add_input() = testing::MakeValueInfo("add_b", DType::kFloat, {Dim{"batch"}, Dim{"seq"}, Dim{int64_t{6}}});
      break;
    case AddOperand::kTensorColumn:
      *g->add_input() = testing::MakeValueInfo("add_b", DType::kFloat, {Dim{"batch"}, Dim{"seq"}, Dim{int64_t{1}}});
      break;
  }
  if (c.y_first) testing::AddNode(*g, "Add", {"y3_mm", "add_b"}, {"y3"}, "bias_add");
  else testing::AddNode(*g, "Add", {"add_b", "y3_mm"}, {"y3"}, "bias_add");
  return model;
}

TEST_P(FusionAddTest, AbsorbedOrRefusedAddEqualsUnfusedBitForBit) {
  const AddCase& c = GetParam();
  const onnx::ModelProto model = EdgesModelWithAdd(c);
  const DynQuantFusionReport report = FuseModel(model);
  EXPECT_EQ(report.patterns, 3);
  EXPECT_EQ(report.absorbed_adds, c.absorbed ? 1 : 0);
  // Add(y1, y2) is refused once per operand pattern; a refused bias_add adds one line naming add_b.
  ASSERT_EQ(report.refused_adds.size(), c.absorbed ? 2u : 3u) << report.refused_adds.back();
  if (!c.absorbed)
    EXPECT_TRUE(std::any_of(report.refused_adds.begin(), report.refused_adds.end(),
                            [](const std::string& r) { return r.find("'add_b'") != std::string::npos; }))
        << report.refused_adds.back();

  SessionOptions ref_opts;
  ref_opts.settings = "nuphar_execution_mode:reference";
  auto fused = Session::CreateFromModel(model);
  ASSERT_TRUE(fused.ok()) << fused.message();
  auto reference = Session::CreateFromModel(model, ref_opts);
  ASSERT_TRUE(reference.ok()) << reference.message();
  EXPECT_EQ((*fused)->fused_pattern_count(), 3);
  EXPECT_EQ((*reference)->fused_pattern_count(), 0);

  for (bool constant_rows : {false, true}) {
    const int64_t batch = 2, seq = 3;
    NamedTensors feeds = {{"x", RandomInput(batch, seq, 24, 11, constant_rows)}, {"Wi", RandomTensor({10, 6}, 14)}};
    if (c.operand == AddOperand::kTensorLikeY) feeds.emplace_back("add_b", RandomTensor({batch, seq, 6}, 12));
    if (c.operand == AddOperand::kTensorColumn) feeds.emplace_back("add_b", RandomTensor({batch, seq, 1}, 13));
    auto a = (*fused)->Run(feeds);
    auto b = (*reference)->Run(feeds);
    ASSERT_TRUE(a.ok()) << a.message();
    ASSERT_TRUE(b.ok()) << b.message();
    ASSERT_EQ(a->size(), b->size());
    for (size_t k = 0; k < a->size(); ++k) {
      ASSERT_EQ((*a)[k].shape(), (*b)[k].shape()) << "output " << k;
      EXPECT_EQ(std::memcmp((*a)[k].raw(), (*b)[k].raw(), (*a)[k].bytes()), 0)
          << "output " << k << " differs" << (constant_rows ? " with constant rows" : "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    EdgesWithAdd, FusionAddTest,
    ::testing::Values(AddCase{"BiasN_YFirst", AddOperand::kBiasN, true, true},
                      AddCase{"BiasN_BiasFirst", AddOperand::kBiasN, false, true},
                      AddCase{"Bias1xN_YFirst", AddOperand::kBias1xN, true, true},
                      AddCase{"TensorLikeY_YFirst", AddOperand::kTensorLikeY, true, true},
                      AddCase{"TensorLikeY_TensorFirst", AddOperand::kTensorLikeY, false, true},
                      AddCase{"RefusedColumnM1", AddOperand::kTensorColumn, true, false},
                      AddCase{"RefusedColumnM1_TensorFirst", AddOperand::kTensorColumn, false, false},
                      AddCase{"RefusedConst1x1", AddOperand::kConst1x1, false, false}),
    [](const auto& info) { return std::string(info.param.name); });

// The proof trusts declared shapes; when a model declares a wrong one the fused kernel reports it
// at run time instead of adding the wrong elements.
TEST(FusionAddRuntimeCheckTest, WrongDeclaredShapeIsAnErrorNotAWrongResult) {
  onnx::ModelProto model = EdgesModelWithAdd({"lie", AddOperand::kTensorColumn, true, false});
  onnx::GraphProto* g = model.mutable_graph();
  for (auto& in : *g->mutable_input())
    if (in.name() == "add_b") in.set_name("add_in");
  testing::AddNode(*g, "Identity", {"add_in"}, {"add_b"}, "identity");
  using testing::Dim;
  *g->add_value_info() = testing::MakeValueInfo("add_b", DType::kFloat, {Dim{"batch"}, Dim{"seq"}, Dim{int64_t{6}}});
  EXPECT_EQ(FuseModel(model).absorbed_adds, 1);
  auto fused = Session::CreateFromModel(model);
  ASSERT_TRUE(fused.ok()) << fused.message();
  auto out = (*fused)->Run({{"x", RandomInput(2, 3, 24, 11, false)},
                            {"Wi", RandomTensor({10, 6}, 14)},
                            {"add_in", RandomTensor({2, 3, 1}, 13)}});
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.message().find("declared shapes are wrong"), std::string::npos) << out.message();
}

// The runtime's rewrites are graph/pass.h GraphPasses that GraphPlan hands one graph at a time.
TEST(RuntimePassesTest, AreGraphLevelGraphPasses) {
  std::vector<std::unique_ptr<GraphPass>> passes;
  passes.push_back(CreateDynQuantMatMulFusion());
  passes.push_back(CreateConvActivationFusion());
  passes.push_back(jit::CreateJitPartitionPass());
  passes.push_back(CreateMatMulAddBiasFusion());
  onnx::GraphProto graph;
  auto* conv = graph.add_node();
  conv->set_op_type("Conv");
  struct ForeignContext final : PassContext {};
  for (auto& pass : passes) {
    EXPECT_EQ(pass->Order(), SubgraphOrder::kEachGraphByDriver) << pass->Name();
    ForeignContext foreign;
    auto refused = pass->ApplyToGraph(&graph, foreign);
    ASSERT_FALSE(refused.ok()) << pass->Name();
    EXPECT_NE(refused.message().find(pass->Name()), std::string::npos) << refused.message();
    onnx::ModelProto model;
    EXPECT_FALSE(RunPass(model, *pass).ok()) << pass->Name();
  }
  EXPECT_FALSE(passes[0]->MayApply(graph));  // no MatMulInteger
  EXPECT_TRUE(passes[1]->MayApply(graph));   // a Conv
  EXPECT_FALSE(passes[3]->MayApply(graph));  // no MatMul
}

}  // namespace
}  // namespace nuphar
