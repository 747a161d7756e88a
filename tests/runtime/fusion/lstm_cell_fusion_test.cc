// The int8 LSTM cell fusion (runtime/fusion/lstm_cell_fusion.h): every cell of a to_scan +
// model_quantizer --only_for_scan LSTM is fused, and the fused kernel equals the unfused
// reference execution bit for bit on every ISA tier of this CPU: the fused step (one row, H a
// multiple of the tier's chunk) and the row-by-row path (other H, batches, portable). Then the
// pattern itself: operand orders that float arithmetic cannot tell apart are fused, other cells
// are refused with their reason.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <functional>
#include <unordered_map>

#include "graph/model_io.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/fusion/dynamic_quant_matmul_fusion.h"
#include "runtime/fusion/lstm_cell_fusion.h"
#include "runtime/platform/cpu_features.h"
#include "runtime/session.h"
#include "tests/modellib/random_tensor.h"
#include "tests/modellib/same_outputs.h"
#include "tests/modellib/scan_rnn_model.h"

namespace nuphar {
namespace {

struct CellCase {
  int64_t hidden;
  bool bidirectional;
  int64_t layers;
  std::string batch;  // "1" or a symbol
  int64_t run_batch;
};

std::string Name(const CellCase& c) {
  return "h" + std::to_string(c.hidden) + (c.bidirectional ? "_bi" : "_uni") + "_l" + std::to_string(c.layers) +
         "_batch" + std::to_string(c.run_batch);
}

constexpr int64_t kInputDim = 24;

onnx::ModelProto MakeInt8LstmModel(const CellCase& c) {
  bench::RnnModelSpec spec;
  spec.op = "lstm";
  spec.input_dim = kInputDim;
  spec.hidden_dim = c.hidden;
  spec.layers = c.layers;
  spec.bidirectional = c.bidirectional;
  spec.seq_len = "seq";
  spec.batch = c.batch;
  spec.seed = static_cast<uint32_t>(c.hidden);
  return testing::MakeScanRnnModel(spec, /*int8_only_for_scan=*/true);
}

// Uniform in [-2 * scale, 2 * scale).
Tensor RandomInput(int64_t seq, int64_t batch, float scale, uint32_t seed) {
  Tensor t = testing::RandomTensor({seq, batch, kInputDim}, seed);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] *= scale;
  return t;
}

class LstmCellFusionTest : public ::testing::TestWithParam<CellCase> {};

TEST_P(LstmCellFusionTest, EveryCellIsFusedAndEqualsReferenceOnEveryTier) {
  const CellCase& c = GetParam();
  const onnx::ModelProto model = MakeInt8LstmModel(c);
  SessionOptions ref_opts;
  ref_opts.settings = "nuphar_execution_mode:reference";
  auto ref = Session::CreateFromModel(model, ref_opts);
  ASSERT_TRUE(ref.ok()) << ref.message();
  const int64_t cells = c.layers * (c.bidirectional ? 2 : 1);
  for (int t = 0; t < kIsaTierCount; ++t) {
    const IsaTier tier = static_cast<IsaTier>(t);
    if (!HostCpu().Supports(tier)) {
      std::printf("[ INFO ] this CPU lacks the %s tier: not run\n", IsaTierName(tier));
      continue;
    }
    SCOPED_TRACE(IsaTierName(tier));
    SessionOptions opts;
    opts.settings = std::string("nuphar_codegen_target:") + IsaTierName(tier);
    auto fused = Session::CreateFromModel(model, opts);
    ASSERT_TRUE(fused.ok()) << fused.message();
    EXPECT_EQ((*fused)->counter("fused_lstm_cells"), cells);
    EXPECT_EQ((*fused)->counter("jit_scan_loops"), cells) << "the fused cell is a step of the generated loop";
    for (int64_t seq : {1, 5}) {
      // Scale 20 drives the gates into saturation (Exp's clamps, Tanh's large branch); 0.5
      // keeps many near zero (Tanh's small branch).
      for (float scale : {0.5f, 20.0f}) {
        SCOPED_TRACE("seq " + std::to_string(seq) + ", input scale " + std::to_string(scale));
        testing::ExpectSameOutputs(**ref, **fused,
                                   {{"input", RandomInput(seq, c.run_batch, scale, static_cast<uint32_t>(seq + t))}});
      }
    }
  }
}

// With one row, H 32, 96 and 128 take the fused step on every tier but portable (chunks of 32 units
// on avx512vnni, 16 on avxvnni, avx512 and avx2), H 48 on the 16-unit tiers only; H 40 and
// batches run row by row.
INSTANTIATE_TEST_SUITE_P(Int8Lstm, LstmCellFusionTest,
                         ::testing::Values(CellCase{32, false, 1, "1", 1}, CellCase{96, true, 2, "1", 1},
                                           CellCase{128, false, 1, "1", 1}, CellCase{48, false, 1, "1", 1},
                                           CellCase{40, false, 1, "1", 1}, CellCase{64, true, 1, "batch", 3}),
                         [](const ::testing::TestParamInfo<CellCase>& info) { return Name(info.param); });

// The first Scan body of `model` after FuseDynamicQuantMatMul, with the constants it reads.
struct FusedBody {
  onnx::GraphProto body;
  int opset = 0;  ///< the model's ONNX opset
  std::unordered_map<std::string, Tensor> constants;
  ConstantLookup Lookup() {
    return [this](const std::string& name) -> const Tensor* {
      auto it = constants.find(name);
      return it == constants.end() ? nullptr : &it->second;
    };
  }
};

FusedBody DqFusedBody(const onnx::ModelProto& model) {
  FusedBody f;
  for (const auto& o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") f.opset = static_cast<int>(o.version());
  for (const auto& n : model.graph().node())
    if (n.op_type() == "Scan")
      for (const auto& a : n.attribute())
        if (a.name() == "body" && f.body.node_size() == 0) f.body = a.g();
  for (const onnx::GraphProto* g : {&model.graph(), static_cast<const onnx::GraphProto*>(&f.body)})
    for (const auto& init : g->initializer())
      if (auto t = TensorFromProto(init)) f.constants.emplace(init.name(), std::move(*t));
  for (const auto& n : f.body.node())  // Constant nodes of the body (the quantizer's scalars)
    if (n.op_type() == "Constant")
      for (const auto& a : n.attribute())
        if (a.name() == "value")
          if (auto t = TensorFromProto(a.t())) f.constants.emplace(n.output(0), std::move(*t));
  EXPECT_EQ(FuseDynamicQuantMatMul(&f.body, f.Lookup()), 1);
  return f;
}

onnx::NodeProto* ProducerOf(onnx::GraphProto& g, const std::string& value) {
  for (auto& n : *g.mutable_node())
    for (const auto& o : n.output())
      if (o == value) return &n;
  return nullptr;
}

onnx::NodeProto* SplitNode(onnx::GraphProto& g) {
  for (auto& n : *g.mutable_node())
    if (n.op_type() == "Split") return &n;
  return nullptr;
}

// The Split part's activation node: part p of the body's only Split.
onnx::NodeProto* ActivationOfPart(onnx::GraphProto& g, int part) {
  std::string value;
  for (const auto& n : g.node())
    if (n.op_type() == "Split") value = n.output(part);
  for (auto& n : *g.mutable_node())
    if (n.input_size() == 1 && n.input(0) == value) return &n;
  return nullptr;
}

TEST(LstmCellFusionPattern, FusesEitherOperandOrderAndNamesTheGates) {
  const onnx::ModelProto model = MakeInt8LstmModel(CellCase{32, false, 1, "1", 1});
  for (bool swapped : {false, true}) {
    SCOPED_TRACE(swapped ? "Mul and Add operands swapped" : "as to_scan writes it");
    FusedBody f = DqFusedBody(model);
    if (swapped)
      for (auto& n : *f.body.mutable_node())
        if (n.op_type() == "Mul" || n.op_type() == "Add") n.mutable_input()->SwapElements(0, 1);
    // A stray `gates` on the product (a hand-written node) must not override the fusion's.
    for (auto& n : *f.body.mutable_node())
      if (n.op_type() == kDynQuantMatMulOp) {
        onnx::AttributeProto* stray = n.add_attribute();
        stray->set_name("gates");
        stray->set_type(onnx::AttributeProto::INTS);
        for (int p : {3, 2, 1, 0}) stray->add_ints(p);
      }
    std::vector<std::string> refusals;
    ASSERT_EQ(FuseDynQuantLstmCell(&f.body, f.Lookup(), f.opset, &refusals), 1);
    EXPECT_TRUE(refusals.empty()) << refusals.front();
    const onnx::NodeProto* cell = nullptr;
    for (const auto& n : f.body.node()) {
      EXPECT_NE(n.op_type(), "Sigmoid") << "a gate node was left behind";
      EXPECT_NE(n.op_type(), "Split");
      if (n.op_type() == kDynQuantLstmCellOp) cell = &n;
    }
    ASSERT_NE(cell, nullptr);
    ASSERT_EQ(cell->input_size(), 7);
    ASSERT_EQ(cell->output_size(), 2);
    // h and c keep the names the body's outputs read: h is state 0, c state 1 (to_scan's order).
    EXPECT_EQ(cell->output(0), f.body.output(0).name());
    EXPECT_EQ(cell->output(1), f.body.output(1).name());
    EXPECT_EQ(cell->input(6), f.body.input(1).name()) << "c_prev is the body's cell state input";
    std::vector<int64_t> gates;
    int gates_attributes = 0;
    for (const auto& a : cell->attribute())
      if (a.name() == "gates") gates.assign(a.ints().begin(), a.ints().end()), ++gates_attributes;
    EXPECT_EQ(gates_attributes, 1);
    EXPECT_EQ(gates, (std::vector<int64_t>{0, 1, 2, 3})) << "ONNX's gate order: i, o, f, c";
  }
}

TEST(LstmCellFusionPattern, OtherCellsAreRefusedWithTheirReason) {
  const onnx::ModelProto model = MakeInt8LstmModel(CellCase{32, false, 1, "1", 1});
  struct Mutation {
    const char* name;
    std::function<void(onnx::GraphProto&)> apply;
    const char* reason;
    std::vector<int64_t> split_input = {};  ///< a constant input 1 of the Split, when not empty
  };
  const std::vector<Mutation> mutations = {
      {"a Relu cell candidate",
       [](onnx::GraphProto& g) { ActivationOfPart(g, 3)->set_op_type("Relu"); }, "goes through Relu"},
      {"the input gate also a body output",
       [](onnx::GraphProto& g) {
         *g.add_output() = g.output(0);
         g.mutable_output(g.output_size() - 1)->set_name(ActivationOfPart(g, 0)->output(0));
       },
       "another consumer"},
      {"three Tanh gates",
       [](onnx::GraphProto& g) { ActivationOfPart(g, 1)->set_op_type("Tanh"); }, "both go through Tanh"},
      {"h not Mul(o, Tanh(c))",
       [](onnx::GraphProto& g) {
         for (auto& n : *g.mutable_node())
           if (n.op_type() == "Tanh" && ProducerOf(g, n.input(0)) && ProducerOf(g, n.input(0))->op_type() == "Add")
             n.set_op_type("Sigmoid");
       },
       "h is not Mul"},
      // Cases a review built from hostile models, each of which the unfused graph computes
      // differently or refuses:
      {"the Split's data input another value (the product as its third input)",
       [](onnx::GraphProto& g) {
         onnx::NodeProto* split = SplitNode(g);
         const std::string y = split->input(0);
         split->clear_input();
         split->add_input(g.input(1).name());
         split->add_input("");
         split->add_input(y);
       },
       "not the Split's data input"},
      {"opset-11 sizes in the attribute unequal, an equal input 1 ignored by Split",
       [](onnx::GraphProto& g) {
         onnx::NodeProto* split = SplitNode(g);
         for (auto& a : *split->mutable_attribute())
           if (a.name() == "split") a.set_ints(3, 2 * a.ints(3)), a.set_ints(2, 0);
       },
       "not four equal parts", {32, 32, 32, 32}},
      {"a gate value defined twice (the plan's error)",
       [](onnx::GraphProto& g) {
         onnx::NodeProto* copy = g.add_node();
         copy->set_op_type("Identity");
         copy->add_input(g.input(1).name());
         copy->add_output(ActivationOfPart(g, 0)->output(0));
       },
       "defined more than once"},
  };
  for (const Mutation& m : mutations) {
    SCOPED_TRACE(m.name);
    FusedBody f = DqFusedBody(model);
    m.apply(f.body);
    if (!m.split_input.empty()) {
      f.constants.emplace("equal_sizes", Tensor::FromVector<int64_t>({4}, m.split_input));
      SplitNode(f.body)->add_input("equal_sizes");
    }
    ASSERT_LT(f.opset, 13) << "the attribute form of Split's sizes needs an opset below 13";
    std::vector<std::string> refusals;
    EXPECT_EQ(FuseDynQuantLstmCell(&f.body, f.Lookup(), f.opset, &refusals), 0);
    ASSERT_EQ(refusals.size(), 1u);
    EXPECT_NE(refusals[0].find(m.reason), std::string::npos) << refusals[0];
  }
}

// The quantizer's symm16 scheme (MatMulInteger16) has no fused cell: its cells are listed, not fused.
TEST(LstmCellFusionPattern, Symm16CellsAreRefused) {
  onnx::ModelProto model;
  ASSERT_TRUE(LoadModel(std::string(NUPHAR_SHARED_DIR) + "/fixtures/quantizer/symm16_all.onnx", &model).ok());
  FusedBody f = DqFusedBody(model);
  std::vector<std::string> refusals;
  EXPECT_EQ(FuseDynQuantLstmCell(&f.body, f.Lookup(), f.opset, &refusals), 0);
  ASSERT_EQ(refusals.size(), 1u);
  EXPECT_NE(refusals[0].find("not the asymm8 scheme"), std::string::npos) << refusals[0];
}

}  // namespace
}  // namespace nuphar
