// Quantizer behaviour beyond the fixtures (spec Q2, E2, E5): scope (If branches, nested
// Scan/Loop bodies, --only_for_scan), weights shared across graphs, Gemm, opset-dependent node
// forms, opset raise checks, name collisions, config errors. Models are built in code.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <random>

#include "graph/tensor_data.h"
#include "quantizer/quantizer.h"
#include "quantizer/weight_quant.h"

namespace nuphar::quant {
namespace {

onnx::TensorProto RandomWeight(const std::string& name, int64_t k, int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(k * n);
  for (auto& x : v) x = dist(rng);
  return MakeTensor<float>(name, {k, n}, v);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::string& name,
                         std::vector<std::string> inputs, std::vector<std::string> outputs) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : inputs) n->add_input(i);
  for (auto& o : outputs) n->add_output(o);
  return n;
}

void AddFloatValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name) {
  auto* v = list->Add();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

onnx::ModelProto NewModel(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  AddFloatValue(m.mutable_graph()->mutable_input(), "x");
  return m;
}

onnx::GraphProto* AddGraphAttr(onnx::NodeProto* node, const std::string& name) {
  auto* a = node->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::GRAPH);
  return a->mutable_g();
}

void AddIntsAttr(onnx::NodeProto* node, const std::string& name, std::vector<int64_t> v, bool single = false) {
  auto* a = node->add_attribute();
  a->set_name(name);
  if (single) {
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v[0]);
  } else {
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
}

/// A Scan whose body holds `body_matmuls` MatMuls of the state h with body-or-main weights.
onnx::GraphProto* AddScan(onnx::GraphProto* g, const std::string& name, const std::string& state,
                          const std::string& scan_in, const std::string& out) {
  auto* scan = AddNode(g, "Scan", name, {state, scan_in}, {out + "_state", out});
  AddIntsAttr(scan, "num_scan_inputs", {1}, true);
  onnx::GraphProto* body = AddGraphAttr(scan, "body");
  AddFloatValue(body->mutable_input(), name + "_h");
  AddFloatValue(body->mutable_input(), name + "_x");
  AddFloatValue(body->mutable_output(), name + "_h_next");
  AddFloatValue(body->mutable_output(), name + "_y");
  return body;
}

int CountOps(const onnx::GraphProto& g, const std::string& op) {
  return static_cast<int>(std::count_if(g.node().begin(), g.node().end(), [&](const auto& n) { return n.op_type() == op; }));
}

const onnx::TensorProto* FindInit(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& t : g.initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

QuantizeOptions Defaults() {
  QuantizeOptions o;
  o.default_config = *PresetConfig(kDefaultPreset);
  return o;
}

/// main: y0 = MatMul(x, W); Scan body: h_next = MatMul(h, W) (W from main), y = Identity.
onnx::ModelProto SharedAcrossGraphs() {
  onnx::ModelProto m = NewModel(11);
  auto* g = m.mutable_graph();
  *g->add_initializer() = RandomWeight("W", 4, 4, 1);
  AddNode(g, "MatMul", "top", {"x", "W"}, {"y0"});
  onnx::GraphProto* body = AddScan(g, "scan", "h0", "y0", "ys");
  AddNode(body, "MatMul", "inner", {"scan_h", "W"}, {"scan_h_next"});
  AddNode(body, "Identity", "id", {"scan_x"}, {"scan_y"});
  AddFloatValue(g->mutable_output(), "ys");
  return m;
}

TEST(QuantizerScope, WeightSharedAcrossGraphsWithOnlyForScan) {
  onnx::ModelProto m = SharedAcrossGraphs();
  QuantizeOptions o = Defaults();
  o.only_for_scan = true;
  auto r = Quantize(&m, o);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->quantized.size(), 1u);
  EXPECT_EQ(r->quantized[0].node, "inner");
  // The top-level MatMul stays float and still finds W (B21); the body uses main-graph W_qparam.
  EXPECT_EQ(CountOps(m.graph(), "MatMul"), 1);
  EXPECT_NE(FindInit(m.graph(), "W"), nullptr);
  EXPECT_NE(FindInit(m.graph(), "W_qparam"), nullptr);
  const auto& body = m.graph().node(1).attribute(1).g();
  EXPECT_EQ(CountOps(body, "MatMulInteger"), 1);
  EXPECT_EQ(body.node_size(), 27);  // 26 quantization nodes + Identity
}

TEST(QuantizerScope, WeightSharedAcrossGraphsQuantizedOnce) {
  onnx::ModelProto m = SharedAcrossGraphs();
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->quantized.size(), 2u);
  EXPECT_TRUE(r->quantized[1].weight_reused);
  EXPECT_EQ(FindInit(m.graph(), "W"), nullptr);  // no float reader left
  int qparams = 0;
  for (const auto& t : m.graph().initializer()) qparams += t.name().rfind("W_qparam", 0) == 0 && t.name() != "W_qparam_rowsum";
  EXPECT_EQ(qparams, 1);
}

TEST(QuantizerScope, NonMatMulConsumerInAnotherGraphBlocksQuantization) {
  onnx::ModelProto m = SharedAcrossGraphs();
  auto* body = m.mutable_graph()->mutable_node(1)->mutable_attribute(1)->mutable_g();
  AddNode(body, "Add", "uses_w", {"scan_x", "W"}, {"sum"});
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r->quantized.empty());
  ASSERT_EQ(r->skipped.size(), 2u);
  EXPECT_NE(r->skipped[0].find("also read by a Add"), std::string::npos) << r->skipped[0];
  EXPECT_NE(FindInit(m.graph(), "W"), nullptr);
}

/// main: If(cond) then: MatMul(x, Wt); else: Scan whose body has Loop whose body has MatMul(h, Wd).
onnx::ModelProto NestedModel() {
  onnx::ModelProto m = NewModel(11);
  auto* g = m.mutable_graph();
  *g->add_initializer() = RandomWeight("Wt", 4, 3, 2);
  *g->add_initializer() = RandomWeight("Wd", 4, 4, 3);
  auto* iff = AddNode(g, "If", "if", {"cond"}, {"r"});
  onnx::GraphProto* then_g = AddGraphAttr(iff, "then_branch");
  AddNode(then_g, "MatMul", "then_mm", {"x", "Wt"}, {"then_out"});
  AddFloatValue(then_g->mutable_output(), "then_out");
  onnx::GraphProto* else_g = AddGraphAttr(iff, "else_branch");
  onnx::GraphProto* scan_body = AddScan(else_g, "scan", "h0", "x", "else_out");
  auto* loop = AddNode(scan_body, "Loop", "loop", {"", "", "scan_h"}, {"scan_h_next"});
  onnx::GraphProto* loop_body = AddGraphAttr(loop, "body");
  AddFloatValue(loop_body->mutable_input(), "it");
  AddFloatValue(loop_body->mutable_input(), "c");
  AddFloatValue(loop_body->mutable_input(), "lh");
  AddNode(loop_body, "MatMul", "deep_mm", {"lh", "Wd"}, {"lh_next"});
  AddNode(loop_body, "Identity", "c_id", {"c"}, {"c_next"});
  AddNode(scan_body, "Identity", "id", {"scan_x"}, {"scan_y"});
  AddFloatValue(else_g->mutable_output(), "else_out");
  AddFloatValue(g->mutable_output(), "r");
  return m;
}

TEST(QuantizerScope, OnlyForScanReachesAnyDepthButSkipsIfBranches) {
  onnx::ModelProto m = NestedModel();
  QuantizeOptions o = Defaults();
  o.only_for_scan = true;
  auto r = Quantize(&m, o);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->quantized.size(), 1u);
  EXPECT_EQ(r->quantized[0].node, "deep_mm");
  EXPECT_EQ(r->quantized[0].graph, "main/if.else_branch/scan.body/loop.body");
  EXPECT_NE(FindInit(m.graph(), "Wd_qparam"), nullptr);
  EXPECT_EQ(FindInit(m.graph(), "Wd"), nullptr);
  EXPECT_NE(FindInit(m.graph(), "Wt"), nullptr);
  // Scalar constants live in the graph that holds the MatMul.
  const auto& loop_body = m.graph().node(0).attribute(1).g().node(0).attribute(1).g().node(0).attribute(0).g();
  EXPECT_EQ(CountOps(loop_body, "MatMulInteger"), 1);
  EXPECT_EQ(loop_body.initializer_size(), 6);
}

TEST(QuantizerScope, WithoutOnlyForScanIfBranchesAreQuantized) {
  onnx::ModelProto m = NestedModel();
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->quantized.size(), 2u);
  EXPECT_EQ(r->quantized[0].node, "then_mm");
  const auto& then_g = m.graph().node(0).attribute(0).g();
  EXPECT_EQ(CountOps(then_g, "MatMulInteger"), 1);
  EXPECT_EQ(then_g.node(then_g.node_size() - 1).output(0), "then_out");
}

TEST(QuantizerScope, ShadowedBodyWeightsAreQuantizedSeparately) {
  onnx::ModelProto m = NewModel(11);
  auto* g = m.mutable_graph();
  for (int i = 0; i < 2; ++i) {
    onnx::GraphProto* body = AddScan(g, "scan" + std::to_string(i), "h0", "x", "ys" + std::to_string(i));
    *body->add_initializer() = RandomWeight("W", 4, 4, 10 + i);
    AddNode(body, "MatMul", "mm" + std::to_string(i), {"scan" + std::to_string(i) + "_h", "W"}, {"hn" + std::to_string(i)});
  }
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->quantized.size(), 2u);
  EXPECT_FALSE(r->quantized[1].weight_reused);
  const auto* q0 = FindInit(m.graph(), "W_qparam");
  const auto* q1 = FindInit(m.graph(), "W_qparam_1");  // E5: fixed name taken -> _1
  ASSERT_TRUE(q0 && q1);
  EXPECT_NE(q0->raw_data(), q1->raw_data());
}

TEST(QuantizerScope, GemmWithTransBAlphaBeta) {
  onnx::ModelProto m = NewModel(11);
  auto* g = m.mutable_graph();
  *g->add_initializer() = RandomWeight("B", 3, 4, 5);  // transB: B is [N=3, K=4]
  auto* gemm = AddNode(g, "Gemm", "gemm", {"x", "B", "c"}, {"y"});
  auto* a = gemm->add_attribute();
  a->set_name("alpha"), a->set_type(onnx::AttributeProto::FLOAT), a->set_f(2.0f);
  a = gemm->add_attribute();
  a->set_name("beta"), a->set_type(onnx::AttributeProto::FLOAT), a->set_f(0.5f);
  AddIntsAttr(gemm, "transB", {1}, true);
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->quantized.size(), 1u);
  EXPECT_EQ(r->used_configs[0].first, "y");  // keyed by the Gemm's output
  EXPECT_EQ(FindInit(m.graph(), "B"), nullptr);
  const auto* qparam = FindInit(m.graph(), "B_trans_qparam");
  ASSERT_NE(qparam, nullptr);
  ASSERT_EQ(qparam->dims(0), 4);
  ASSERT_EQ(qparam->dims(1), 3);
  // Same bytes as quantizing B^T directly.
  auto b = ReadTensor<float>(RandomWeight("B", 3, 4, 5));
  std::vector<float> bt(12);
  for (int r2 = 0; r2 < 3; ++r2)
    for (int c = 0; c < 4; ++c) bt[c * 3 + r2] = (*b)[r2 * 4 + c];
  auto q = QuantizeWeightPerColumn(bt.data(), 4, 3, PresetConfig(kDefaultPreset)->w, false);
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(qparam->raw_data(), q->q_bytes);
  // Mul(alpha, A) first, the quantized MatMul, Mul(beta, C), Add -> y last.
  EXPECT_EQ(g->node(0).op_type(), "Mul");
  EXPECT_EQ(g->node(0).input(0), "gemm_Const_alpha");
  EXPECT_EQ(g->node(1).name(), "gemmMatMul_1ReduceMax_2");
  const auto& last = g->node(g->node_size() - 1);
  EXPECT_EQ(last.op_type(), "Add");
  EXPECT_EQ(last.output(0), "y");
  EXPECT_EQ(g->node(g->node_size() - 2).input(0), "gemm_Const_beta");
  EXPECT_EQ(CountOps(*g, "Gemm"), 0);
}

TEST(QuantizerScope, GemmWithNonConstantBIsLeftAlone) {
  onnx::ModelProto m = NewModel(11);
  AddNode(m.mutable_graph(), "Gemm", "gemm", {"x", "x2"}, {"y"});
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(r->quantized.empty());
  EXPECT_EQ(CountOps(m.graph(), "Gemm"), 1);
  ASSERT_EQ(r->skipped.size(), 1u);
}

onnx::ModelProto SingleMatMul(int64_t opset) {
  onnx::ModelProto m = NewModel(opset);
  *m.mutable_graph()->add_initializer() = RandomWeight("W", 4, 4, 9);
  AddNode(m.mutable_graph(), "MatMul", "mm", {"x", "W"}, {"y"});
  return m;
}

const onnx::NodeProto* FindOp(const onnx::GraphProto& g, const std::string& op) {
  for (const auto& n : g.node()) {
    if (n.op_type() == op) return &n;
  }
  return nullptr;
}

TEST(QuantizerForms, Opset9RaisesTo10WithAttributeFormsAndUpgrades) {
  onnx::ModelProto m = SingleMatMul(9);
  m.set_ir_version(4);
  auto* slice = AddNode(m.mutable_graph(), "Slice", "sl", {"y"}, {"ys"});
  AddIntsAttr(slice, "starts", {0});
  AddIntsAttr(slice, "ends", {2});  // no axes: defaults to 0..len-1 (B24)
  auto* topk = AddNode(m.mutable_graph(), "TopK", "tk", {"y"}, {"v", "i"});
  AddIntsAttr(topk, "k", {2}, true);
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r->opset, 10);
  EXPECT_EQ(m.opset_import(0).version(), 10);
  EXPECT_EQ(m.ir_version(), 5);
  const auto* clip = FindOp(m.graph(), "Clip");
  ASSERT_NE(clip, nullptr);
  EXPECT_EQ(clip->input_size(), 1);
  ASSERT_EQ(clip->attribute_size(), 2);
  EXPECT_EQ(clip->attribute(0).name(), "max");
  EXPECT_EQ(clip->attribute(0).f(), 127.0f);
  EXPECT_EQ(clip->attribute(1).f(), 0.0f);
  const auto* s = FindOp(m.graph(), "Slice");
  ASSERT_NE(s, nullptr);
  ASSERT_EQ(s->input_size(), 4);
  EXPECT_EQ(s->name(), "slSlice_26");
  const auto* axes = FindInit(m.graph(), s->input(3));
  ASSERT_NE(axes, nullptr);
  EXPECT_EQ(*ReadTensor<int64_t>(*axes), std::vector<int64_t>{0});
  const auto* t = FindOp(m.graph(), "TopK");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->input_size(), 2);
  EXPECT_EQ(t->output_size(), 2);
  EXPECT_EQ(r->messages.size(), 2u);
  EXPECT_EQ(m.opset_import(1).domain(), "com.microsoft");
}

TEST(QuantizerForms, Opset13ReduceSumAxesInput) {
  onnx::ModelProto m = SingleMatMul(13);
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(m.ir_version(), 7);
  EXPECT_EQ(FindOp(m.graph(), "ReduceSum")->input_size(), 2);
  EXPECT_EQ(FindOp(m.graph(), "ReduceSum")->attribute_size(), 0);
  EXPECT_EQ(FindOp(m.graph(), "ReduceMax")->input_size(), 1);
  EXPECT_EQ(FindOp(m.graph(), "Clip")->input_size(), 3);
}

TEST(QuantizerForms, Opset18ReduceMinMaxAxesInput) {
  onnx::ModelProto m = SingleMatMul(18);
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(m.ir_version(), 8);
  for (const char* op : {"ReduceMax", "ReduceMin", "ReduceSum"}) {
    const auto* n = FindOp(m.graph(), op);
    ASSERT_EQ(n->input_size(), 2) << op;
    EXPECT_EQ(*ReadTensor<int64_t>(*FindInit(m.graph(), n->input(1))), std::vector<int64_t>{-1});
  }
}

TEST(QuantizerForms, MissingDefaultOpsetIsAddedWithEmptyDomain) {
  onnx::ModelProto m = SingleMatMul(11);
  m.clear_opset_import();
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(m.opset_import(0).domain(), "");
  EXPECT_EQ(m.opset_import(0).version(), 10);
}

TEST(QuantizerForms, RaiseBlockedByChangedSchemaIsAnError) {
  onnx::ModelProto m = SingleMatMul(8);
  AddNode(m.mutable_graph(), "Upsample", "up", {"y"}, {"u"});  // Upsample changed at opset 9
  auto r = Quantize(&m, Defaults());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("'up' (Upsample)"), std::string::npos) << r.message();
}

TEST(QuantizerForms, GuardZeroDeltaAddsMaxBeforeReciprocal) {
  onnx::ModelProto m = SingleMatMul(11);
  QuantizeOptions o = Defaults();
  o.guard_zero_delta = true;
  auto r = Quantize(&m, o);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(m.graph().node_size(), 27);
  const auto& max = m.graph().node(3);
  EXPECT_EQ(max.op_type(), "Max");
  EXPECT_EQ(m.graph().node(4).op_type(), "Reciprocal");
  EXPECT_EQ(m.graph().node(4).input(0), max.output(0));
  EXPECT_EQ(m.graph().node(7).input(0), "mmSub_2");  // scale_X = Mul(delta, 1/R) keeps the raw delta
}

TEST(QuantizerNames, CollisionsAdvanceCountersAndSuffixFixedNames) {
  onnx::ModelProto m = SingleMatMul(11);
  AddFloatValue(m.mutable_graph()->mutable_value_info(), "mmReduceMax_0");
  AddFloatValue(m.mutable_graph()->mutable_value_info(), "W_step");
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(m.graph().node(0).name(), "mmReduceMax_1");
  EXPECT_EQ(m.graph().node(1).name(), "mmReduceMin_2");
  EXPECT_NE(FindInit(m.graph(), "W_step_1"), nullptr);
}

TEST(QuantizerNames, WeightAlsoListedAsGraphInputLosesTheInput) {
  onnx::ModelProto m = SingleMatMul(11);
  AddFloatValue(m.mutable_graph()->mutable_input(), "W");  // IR < 4 style overridable initializer
  auto r = Quantize(&m, Defaults());
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->quantized.size(), 1u);
  ASSERT_EQ(m.graph().input_size(), 1);  // as the original's remove_initializer
  EXPECT_EQ(m.graph().input(0).name(), "x");
  EXPECT_EQ(FindInit(m.graph(), "W"), nullptr);
}

TEST(QuantizerErrors, SharedWeightWithDifferentConfigs) {
  onnx::ModelProto m = SingleMatMul(11);
  AddNode(m.mutable_graph(), "MatMul", "mm2", {"x", "W"}, {"y2"});
  QuantizeOptions o = Defaults();
  o.node_configs = {{"y", *PresetConfig(kDefaultPreset)}, {"y2", *PresetConfig("symm16_param3_input3")}};
  auto r = Quantize(&m, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("different quantization configs"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("mm2"), std::string::npos) << r.message();
}

TEST(QuantizerErrors, MissingEntryFallsBackWithTheOriginalsWarning) {
  onnx::ModelProto m = SingleMatMul(11);
  QuantizeOptions o = Defaults();
  o.node_configs = {{"other", *PresetConfig(kDefaultPreset)}};
  auto r = Quantize(&m, o);
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r->messages.size(), 1u);
  EXPECT_EQ(r->messages[0], "Warning: qcfg is not found for node with output: y, fall back to default qcfg.");
}

TEST(QuantizerErrors, InvalidDefaultConfig) {
  onnx::ModelProto m = SingleMatMul(11);
  QuantizeOptions o = Defaults();
  o.default_config.x.type_bits = 16;
  EXPECT_FALSE(Quantize(&m, o).ok());
}

}  // namespace
}  // namespace nuphar::quant
