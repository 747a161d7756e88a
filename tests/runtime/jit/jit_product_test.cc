// Product partitions (runtime/jit/product_ir.h) against the reference executor: FusedConv (1-D,
// 2-D, depthwise, strided, with a Relu epilogue step), ConvTranspose (strided, 1x1, grouped), MatMul by a constant matrix
// (one row: the packed GEMV; several: the GEMM) and MatMulAddBias, with symbolic dims resolved
// per call, on every codegen tier and on two threads; the reference fallback when a call's shape
// does not fit; compare mode; the refusal of a MatMul whose B is not a constant; and a whole-Scan
// loop that still calls a product partition's MatMul directly (jit_scan_test.cc). Outputs are
// bit-identical: the generated code calls the reference kernel's own core with its packed state.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "graph/diagnostics.h"
#include "runtime/core/graph_rewrite.h"
#include "runtime/kernels/conv/conv.h"
#include "runtime/platform/cpu_features.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"
#include "tests/runtime/jit/jit_test_util.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::Open;
using testing::Random;

// The codegen tiers this CPU has (the others are refused at load, quant_test.cc checks that).
std::vector<std::string> HostTiers() {
  std::vector<std::string> tiers;
  for (const char* tier : {"avx2", "avxvnni", "avx512", "avx512vnni"})
    if (HostCpu().Supports(*ParseIsaTier(tier))) tiers.push_back(tier);
  return tiers;
}

void AddRandomInitializer(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& dims, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= d;
  for (int64_t i = 0; i < n; ++i) t->add_float_data(dist(rng));
}

// The model on the reference executor and on the JIT with `settings`: the JIT takes
// `expect_jit_nodes` nodes, and every feed gives the same bits (or the same error) on both.
void ExpectSameOnJit(const onnx::ModelProto& model, const std::string& settings, const std::vector<NamedTensors>& feeds,
                     int64_t expect_jit_nodes) {
  auto ref = Open(model, "nuphar_execution_mode:reference");
  auto jit = Open(model, settings);
  ASSERT_TRUE(ref && jit);
  EXPECT_EQ(jit->counter("jit_nodes"), expect_jit_nodes);
  EXPECT_EQ(jit->counter("jit_refused_partitions"), 0);
  for (size_t f = 0; f < feeds.size(); ++f) {
    SCOPED_TRACE("feed " + std::to_string(f));
    auto a = ref->Run(feeds[f]);
    auto b = jit->Run(feeds[f]);
    ASSERT_EQ(a.ok(), b.ok()) << (a.ok() ? b.message() : a.message());
    if (!a.ok()) {  // the same node and reason (the JIT's names the partition's graph)
      const std::string& ra = a.message();
      const std::string& rb = b.message();
      EXPECT_EQ(ra.substr(ra.find("node '")), rb.substr(rb.find("node '")));
      continue;
    }
    ASSERT_EQ(a->size(), b->size());
    for (size_t o = 0; o < a->size(); ++o) {
      ASSERT_EQ((*a)[o].shape(), (*b)[o].shape()) << "output " << o;
      EXPECT_EQ(std::memcmp((*a)[o].raw(), (*b)[o].raw(), (*a)[o].bytes()), 0) << "output " << o << " differs";
    }
  }
}

struct ConvCase {
  const char* name;
  std::vector<int64_t> w;        // [M, C/group, k...]
  int64_t group, stride, pad;
  std::vector<int64_t> spatial;  // the static spatial dims before the symbolic last one
};

// FusedConv(x, W, B) with a Relu epilogue step (runtime/kernels/conv/conv.h), written as the
// conv fusion writes it: the reference executor runs that node as written, so the reference side
// is the very kernel whose packed state the product partition calls. The last spatial dim is
// symbolic ("width").
onnx::ModelProto ConvModel(const ConvCase& c) {
  onnx::GraphProto g;
  g.set_name("conv");
  const int64_t C = c.w[1] * c.group, M = c.w[0];
  std::vector<testing::Dim> x = {int64_t{1}, C};
  for (int64_t d : c.spatial) x.push_back(d);
  x.push_back(std::string("width"));
  *g.add_input() = MakeValueInfo("x", DType::kFloat, x);
  std::vector<testing::Dim> y = {int64_t{1}, M};
  for (size_t i = 0; i <= c.spatial.size(); ++i) y.push_back("y" + std::to_string(i));
  *g.add_output() = MakeValueInfo("y", DType::kFloat, y);
  AddRandomInitializer(g, "W", c.w, 3);
  AddRandomInitializer(g, "B", {M}, 4);
  auto& conv = AddNode(g, "FusedConv", {"x", "W", "B"}, {"y"}, "conv");
  conv.set_domain(kFusedDomain);
  testing::AttrInt(conv, "group", c.group);
  const size_t spatial = c.w.size() - 2;
  testing::AttrInts(conv, "strides", std::vector<int64_t>(spatial, c.stride));
  testing::AttrInts(conv, "pads", std::vector<int64_t>(2 * spatial, c.pad));
  testing::AttrInts(conv, "steps", {static_cast<int64_t>(ConvStep::kRelu)});
  testing::AttrInts(conv, "step_inputs", {-1});
  auto* params = conv.add_attribute();
  params->set_name("step_params");
  params->set_type(onnx::AttributeProto::FLOATS);
  for (int i = 0; i < 4; ++i) params->add_floats(0.f);
  onnx::ModelProto m = MakeModel(g, 13);
  auto* fused = m.add_opset_import();
  fused->set_domain(kFusedDomain);
  fused->set_version(1);
  return m;
}

const std::vector<ConvCase> kConvs = {
    {"1d_k3_pad1", {8, 3, 3}, 1, 1, 1, {}},
    {"1d_strided", {6, 4, 5}, 1, 2, 0, {}},
    {"2d_k3", {5, 3, 3, 3}, 1, 1, 1, {4}},
    {"2d_1x1", {7, 6, 1, 1}, 1, 1, 0, {3}},
    {"2d_depthwise", {6, 1, 3, 3}, 6, 1, 1, {5}},
    {"2d_grouped_strided", {4, 2, 3, 3}, 2, 2, 1, {6}},
};

NamedTensors ConvFeed(const ConvCase& c, int64_t width, uint32_t seed) {
  std::vector<int64_t> shape = {1, c.w[1] * c.group};
  for (int64_t d : c.spatial) shape.push_back(d);
  shape.push_back(width);
  return {{"x", Random(shape, seed)}};
}

TEST(JitProduct, FusedConvOnEveryTierIsBitIdentical) {
  for (const ConvCase& c : kConvs)
    for (const std::string& tier : HostTiers()) {
      SCOPED_TRACE(std::string(c.name) + " on " + tier);
      ExpectSameOnJit(ConvModel(c), "nuphar_codegen_target:" + tier,
                      {ConvFeed(c, 9, 1), ConvFeed(c, 33, 2), ConvFeed(c, 9, 3)}, 1);
    }
}

// Width 1 with a 3-wide kernel and no padding has no output: the product refuses the shape, the
// kernel runs the reference, which reports the error the reference session reports.
TEST(JitProduct, FusedConvShapeItCannotTakeRunsTheReference) {
  const ConvCase c = {"1d_k3", {4, 2, 3}, 1, 1, 0, {}};
  ExpectSameOnJit(ConvModel(c), "", {ConvFeed(c, 1, 5), ConvFeed(c, 8, 6)}, 1);
}

TEST(JitProduct, FusedConvOnTwoThreadsWithSplitProductsIsBitIdentical) {
  ExpectSameOnJit(ConvModel(kConvs[2]), "nuphar_num_threads:2, nuphar_parallel_min_workloads:1",
                  {ConvFeed(kConvs[2], 40, 7)}, 1);
}

// ConvTranspose(x, W[, B]) over [1, 6, h, width] with a symbolic width: gtcrn's decoder
// upsampling (stride 2 along the width), a 1x1 unit-stride one (the GEMM writes Y) and a
// grouped one without bias.
onnx::ModelProto ConvTransposeModel(const std::vector<int64_t>& w, int64_t group, int64_t stride, bool bias) {
  onnx::GraphProto g;
  g.set_name("deconv");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{1}, int64_t{6}, int64_t{3}, std::string("width")});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{1}, w[1] * group, std::string("oh"), std::string("ow")});
  AddRandomInitializer(g, "W", w, 5);
  std::vector<std::string> inputs = {"x", "W"};
  if (bias) {
    AddRandomInitializer(g, "B", {w[1] * group}, 6);
    inputs.push_back("B");
  }
  auto& deconv = AddNode(g, "ConvTranspose", inputs, {"y"}, "deconv");
  testing::AttrInt(deconv, "group", group);
  testing::AttrInts(deconv, "strides", {1, stride});
  return MakeModel(g, 13);
}

TEST(JitProduct, ConvTransposeOnEveryTierIsBitIdentical) {
  struct Case {
    const char* name;
    std::vector<int64_t> w;
    int64_t group, stride;
    bool bias;
  };
  for (const Case& c : {Case{"k2x3_stride2", {6, 4, 2, 3}, 1, 2, true}, Case{"1x1", {6, 5, 1, 1}, 1, 1, true},
                        Case{"grouped_no_bias", {6, 2, 1, 3}, 2, 2, false}})
    for (const std::string& tier : HostTiers()) {
      SCOPED_TRACE(std::string(c.name) + " on " + tier);
      const auto feed = [](int64_t width, uint32_t seed) { return NamedTensors{{"x", Random({1, 6, 3, width}, seed)}}; };
      ExpectSameOnJit(ConvTransposeModel(c.w, c.group, c.stride, c.bias), "nuphar_codegen_target:" + tier,
                      {feed(4, 1), feed(17, 2), feed(1, 3)}, 1);
    }
}

// A [batch, seq, 16] x the constant [16, 12] matrix (+ a bias row: MatMulAddBias), then Tanh.
onnx::ModelProto MatMulModel(bool bias) {
  onnx::GraphProto g;
  g.set_name("mm");
  *g.add_input() = MakeValueInfo("a", DType::kFloat, {std::string("batch"), std::string("seq"), int64_t{16}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {std::string("batch"), std::string("seq"), int64_t{12}});
  AddRandomInitializer(g, "B", {16, 12}, 8);
  AddNode(g, "MatMul", {"a", "B"}, {bias ? "p" : "t"}, "matmul");
  if (bias) {
    AddRandomInitializer(g, "bias", {12}, 9);
    AddNode(g, "Add", {"p", "bias"}, {"t"}, "add_bias");
  }
  AddNode(g, "Tanh", {"t"}, {"y"}, "tanh");
  return MakeModel(g, 13);
}

TEST(JitProduct, MatMulAndMatMulAddBiasOnEveryTierAreBitIdentical) {
  for (bool bias : {false, true})
    for (const std::string& tier : HostTiers()) {
      SCOPED_TRACE(std::string(bias ? "MatMulAddBias" : "MatMul") + " on " + tier);
      // One row (the packed GEMV), several rows (the GEMM), and back: symbolic dims per call.
      const auto feed = [](int64_t batch, int64_t seq, uint32_t seed) { return NamedTensors{{"a", Random({batch, seq, 16}, seed)}}; };
      ExpectSameOnJit(MatMulModel(bias), "nuphar_codegen_target:" + tier,
                      {feed(1, 1, 1), feed(2, 7, 2), feed(1, 40, 3), feed(1, 1, 4)}, 2);  // the product and the Tanh
    }
}

TEST(JitProduct, CompareModeChecksTheProductCalls) {
  auto s = Open(MatMulModel(true), "nuphar_execution_mode:compare");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->counter("jit_nodes"), 2);
  auto y = s->Run({{"a", Random({1, 5, 16}, 11)}});
  EXPECT_TRUE(y.ok()) << y.message();
}

// A MatMul of a [3, 4] input "a" and `b` (a second graph input "b", or the empty name) opened with
// the partition dump: the JIT takes no node, and the dump lists `refusal`.
void ExpectMatMulRefused(const std::string& b, const std::string& refusal) {
  onnx::GraphProto g;
  g.set_name("mm");
  *g.add_input() = MakeValueInfo("a", DType::kFloat, {int64_t{3}, int64_t{4}});
  if (!b.empty()) *g.add_input() = MakeValueInfo(b, DType::kFloat, {int64_t{4}, int64_t{5}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{3}, int64_t{5}});
  AddNode(g, "MatMul", {"a", b}, {"y"}, "mm");
  DiagnosticCapture capture;
  auto s = Open(MakeModel(g, 13), "nuphar_dump_partition:on");
  ASSERT_TRUE(s);
  std::string notes;
  for (const auto& line : capture.Texts(Severity::kNote)) notes += line + "\n";
  EXPECT_EQ(s->counter("jit_nodes"), 0);
  EXPECT_NE(notes.find("reference: 'mm' (MatMul): " + refusal), std::string::npos) << notes;
}

TEST(JitProduct, MatMulOfTwoVariablesIsRefusedWithItsReason) { ExpectMatMulRefused("b", "input 'b' is not a constant"); }

// B named "" (an absent input): the partitioner looked up the constant "" and dereferenced null
// (fuzz_session_create, UBSan). Now the node is refused like any MatMul without a constant B.
TEST(JitProduct, MatMulWithAnEmptyBNameIsRefused) { ExpectMatMulRefused("", "B is not a constant float matrix"); }

}  // namespace
}  // namespace nuphar
