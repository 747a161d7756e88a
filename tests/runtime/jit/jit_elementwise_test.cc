// Generated elementwise kernels against the reference executor: every op of the generator
// (Pow by each kind of constant exponent, PRelu by each slope broadcast),
// each broadcast class, symbolic dims, the fallback when actual shapes do not fit, the
// partitioner's cycle rule, compare mode and the partition dump (through graph/diagnostics.h).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "graph/diagnostics.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"
#include "tests/runtime/jit/jit_test_util.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::Dim;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::ExpectBitIdentical;
using testing::Open;
using testing::Random;
using testing::kCodegenTiers;
using testing::TierSettings;

// y = op(x) or op(x, w) for every generated op; x [R, C], w of the given shape.
TEST(JitElementwise, EveryOpIsBitIdentical) {
  const std::vector<std::string> unary = {"Neg", "Abs", "Relu", "Sqrt", "Reciprocal", "Floor", "Ceil", "Exp",
                                          "Log", "LeakyRelu", "HardSigmoid", "Identity", "Sigmoid", "Tanh"};
  const std::vector<std::string> binary = {"Add", "Sub", "Mul", "Div", "Max", "Min", "Sum"};
  for (const auto& op : unary) {
    SCOPED_TRACE(op);
    onnx::GraphProto g;
    g.set_name("g");
    *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{5}, int64_t{37}});
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{5}, int64_t{37}});
    AddNode(g, op, {"x"}, {"y"});
    Tensor x = Random({5, 37}, 1, (op == "Sqrt" || op == "Log") ? 0.01f : -4.f, 4.f);
    ExpectBitIdentical(MakeModel(g, 13), {{"x", x}}, 1);
  }
  for (const auto& op : binary) {
    SCOPED_TRACE(op);
    onnx::GraphProto g;
    g.set_name("g");
    *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{4}, int64_t{1500}});
    *g.add_input() = MakeValueInfo("w", DType::kFloat, {int64_t{4}, int64_t{1500}});
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{4}, int64_t{1500}});
    AddNode(g, op, {"x", "w"}, {"y"});
    ExpectBitIdentical(MakeModel(g, 13), {{"x", Random({4, 1500}, 2)}, {"w", Random({4, 1500}, 3)}}, 1);
  }
}

TEST(JitElementwise, NanFollowsTheReference) {
  onnx::GraphProto g;
  g.set_name("g");
  for (const char* n : {"x", "w"}) *g.add_input() = MakeValueInfo(n, DType::kFloat, {int64_t{8}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{8}});
  AddNode(g, "Max", {"x", "w"}, {"a"});
  AddNode(g, "Min", {"a", "w"}, {"b"});
  AddNode(g, "Relu", {"b"}, {"c"});
  AddNode(g, "Clip", {"c"}, {"y"});  // no bounds
  const float nan = std::nanf("");
  Tensor x = Tensor::FromVector<float>({8}, {nan, 1.f, nan, -2.f, 0.f, -0.f, 3.f, nan});
  Tensor w = Tensor::FromVector<float>({8}, {1.f, nan, nan, -3.f, -0.f, 0.f, 2.f, -1.f});
  ExpectBitIdentical(MakeModel(g, 13), {{"x", x}, {"w", w}}, 4);
}

// Pow by a scalar constant exponent (float or integer: the reference computes with its float
// value): 2 is x * x, anything else libm's powf, as the reference does; fused with a Mul after it.
TEST(JitElementwise, PowByConstantExponentIsBitIdentical) {
  struct Exponent { onnx::TensorProto::DataType type; double value; };
  for (const Exponent& e : {Exponent{onnx::TensorProto::FLOAT, 2.0}, Exponent{onnx::TensorProto::FLOAT, 0.5},
                            Exponent{onnx::TensorProto::FLOAT, -1.5}, Exponent{onnx::TensorProto::INT64, 2},
                            Exponent{onnx::TensorProto::INT64, 3}, Exponent{onnx::TensorProto::INT32, -2}}) {
    SCOPED_TRACE(std::to_string(e.type) + " " + std::to_string(e.value));
    onnx::GraphProto g;
    g.set_name("g");
    const std::vector<Dim> shape = {std::string("batch"), int64_t{37}};
    *g.add_input() = MakeValueInfo("x", DType::kFloat, shape);
    *g.add_output() = MakeValueInfo("y", DType::kFloat, shape);
    *g.add_value_info() = MakeValueInfo("p", DType::kFloat, shape);
    auto* t = g.add_initializer();
    t->set_name("e");
    t->set_data_type(e.type);
    if (e.type == onnx::TensorProto::FLOAT) t->add_float_data(static_cast<float>(e.value));
    else if (e.type == onnx::TensorProto::INT64) t->add_int64_data(static_cast<int64_t>(e.value));
    else t->add_int32_data(static_cast<int32_t>(e.value));
    AddNode(g, "Pow", {"x", "e"}, {"p"});
    AddNode(g, "Mul", {"p", "x"}, {"y"});
    for (int64_t batch : {1, 4}) {
      Tensor x = Random({batch, 37}, 21);
      x.data<float>()[0] = 0.f;
      x.data<float>()[1] = -0.f;
      x.data<float>()[2] = std::nanf("");
      ExpectBitIdentical(MakeModel(g, 13), {{"x", x}}, 2);
    }
  }
}

// PRelu's slope broadcast as the reference does: a scalar, a row, a column or the full shape.
TEST(JitElementwise, PReluEverySlopeBroadcastIsBitIdentical) {
  // x [1, 3, 37]: gtcrn's slopes are [1, 1, 1] on [1, 16, 1, 33].
  for (const std::vector<int64_t>& slope : std::vector<std::vector<int64_t>>{{1}, {1, 1, 1}, {37}, {1, 3, 1}, {1, 3, 37}}) {
    SCOPED_TRACE(slope.size());
    onnx::GraphProto g;
    g.set_name("g");
    *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{1}, int64_t{3}, int64_t{37}});
    std::vector<Dim> slope_dims(slope.begin(), slope.end());
    *g.add_input() = MakeValueInfo("slope", DType::kFloat, slope_dims);
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{1}, int64_t{3}, int64_t{37}});
    AddNode(g, "PRelu", {"x", "slope"}, {"y"});
    ExpectBitIdentical(MakeModel(g, 13), {{"x", Random({1, 3, 37}, 4)}, {"slope", Random(slope, 5)}}, 1);
  }
}

// A chain with every broadcast class and two activation rounds: the LSTM cell's shape.
TEST(JitElementwise, LstmCellChainWithBroadcasts) {
  onnx::GraphProto g;
  g.set_name("g");
  const std::vector<Dim> full = {std::string("batch"), int64_t{300}};
  for (const char* n : {"gi", "gf", "gc", "go", "c"}) *g.add_input() = MakeValueInfo(n, DType::kFloat, full);
  *g.add_input() = MakeValueInfo("bias", DType::kFloat, {int64_t{300}});
  *g.add_input() = MakeValueInfo("scale", DType::kFloat, {std::string("batch"), int64_t{1}});
  *g.add_input() = MakeValueInfo("half", DType::kFloat, {});
  *g.add_output() = MakeValueInfo("h", DType::kFloat, full);
  *g.add_output() = MakeValueInfo("c2", DType::kFloat, full);
  for (const char* n : {"i0", "i", "f", "g0", "gg", "o", "fc", "ig", "c2", "tc", "h0", "h"})
    *g.add_value_info() = MakeValueInfo(n, DType::kFloat, full);
  AddNode(g, "Add", {"gi", "bias"}, {"i0"});
  AddNode(g, "Sigmoid", {"i0"}, {"i"});
  AddNode(g, "Sigmoid", {"gf"}, {"f"});
  AddNode(g, "Mul", {"gc", "scale"}, {"g0"});
  AddNode(g, "Tanh", {"g0"}, {"gg"});
  AddNode(g, "Sigmoid", {"go"}, {"o"});
  AddNode(g, "Mul", {"f", "c"}, {"fc"});
  AddNode(g, "Mul", {"i", "gg"}, {"ig"});
  AddNode(g, "Add", {"fc", "ig"}, {"c2"});
  AddNode(g, "Tanh", {"c2"}, {"tc"});
  AddNode(g, "Mul", {"o", "tc"}, {"h0"});
  AddNode(g, "Mul", {"h0", "half"}, {"h"});
  const onnx::ModelProto model = MakeModel(g, 13);
  for (int64_t batch : {1, 3}) {
    SCOPED_TRACE(batch);
    NamedTensors feeds;
    uint32_t seed = 10;
    for (const char* n : {"gi", "gf", "gc", "go", "c"}) feeds.emplace_back(n, Random({batch, 300}, seed++));
    feeds.emplace_back("bias", Random({300}, seed++));
    feeds.emplace_back("scale", Random({batch, 1}, seed++));
    feeds.emplace_back("half", Tensor::Scalar<float>(0.5f));
    ExpectBitIdentical(model, feeds, 12);
  }
}

// A Clip bound that is also another op's operand (ONNX's DynamicQuantizeLinear expansion):
// the bound is a constant of the body and an input of the kernel at once.
TEST(JitElementwise, ClipBoundThatIsAlsoAnOperand) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{2}, int64_t{9}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{2}, int64_t{9}});
  *g.add_value_info() = MakeValueInfo("m", DType::kFloat, {int64_t{2}, int64_t{9}});
  for (const auto& [name, v] : std::vector<std::pair<std::string, float>>{{"lo", -1.5f}, {"hi", 2.f}}) {
    auto* t = g.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(v);
  }
  AddNode(g, "Max", {"x", "lo"}, {"m"});
  AddNode(g, "Clip", {"m", "lo", "hi"}, {"y"});
  ExpectBitIdentical(MakeModel(g, 13), {{"x", Random({2, 9}, 9)}}, 2);
}

// Clip bounds computed at run time (openWakeWord's melspectrogram clamps at ReduceMax - 80): a
// scalar value of the kernel read per call (ClipBelow / ClipAbove), alone, with a constant other
// bound, and with the other bound absent (the reference's lowest / max, which still moves -inf and
// +inf); NaN and infinities in x. Every Clip is generated (3 JIT nodes; before, none was).
TEST(JitElementwise, ClipBoundsComputedAtRunTime) {
  onnx::GraphProto g;
  g.set_name("g");
  const std::vector<Dim> dims = {int64_t{2}, std::string("T"), int64_t{5}};
  *g.add_input() = MakeValueInfo("x", DType::kFloat, dims);
  *g.add_input() = MakeValueInfo("lo", DType::kFloat, {});
  *g.add_input() = MakeValueInfo("hi", DType::kFloat, {int64_t{1}});
  for (const char* y : {"y1", "y2", "y3"}) *g.add_output() = MakeValueInfo(y, DType::kFloat, dims);
  auto* c = g.add_initializer();
  c->set_name("c_hi");
  c->set_data_type(onnx::TensorProto::FLOAT);
  c->add_float_data(1.25f);
  AddNode(g, "Clip", {"x", "lo"}, {"y1"});             // max absent
  AddNode(g, "Clip", {"x", "", "hi"}, {"y2"});         // min absent
  AddNode(g, "Clip", {"x", "lo", "c_hi"}, {"y3"});     // a constant max
  const auto model = MakeModel(g, 13);
  for (const char* tier : kCodegenTiers)
    for (int64_t t : {1, 4}) {
      SCOPED_TRACE(std::string(tier) + " T=" + std::to_string(t));
      Tensor x = Random({2, t, 5}, 11);
      float* px = x.data<float>();
      px[0] = std::numeric_limits<float>::quiet_NaN();
      px[1] = std::numeric_limits<float>::infinity();
      px[2] = -std::numeric_limits<float>::infinity();
      ExpectBitIdentical(model, {{"x", x}, {"lo", Tensor::Scalar<float>(-0.75f)}, {"hi", Tensor::FromVector<float>({1}, {0.5f})}},
                         3, TierSettings(tier));
    }
}

// Declared shapes that the actual ones contradict: the kernel runs the reference instead.
TEST(JitElementwise, WrongDeclaredShapesFallBackToTheReference) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("n"), int64_t{4}});
  *g.add_input() = MakeValueInfo("w", DType::kFloat, {std::string("m"), int64_t{4}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {std::string("n"), int64_t{4}});
  *g.add_value_info() = MakeValueInfo("a", DType::kFloat, {std::string("n"), int64_t{4}});
  AddNode(g, "Mul", {"x", "w"}, {"a"});  // declared as if n == m: both generated, w read in full
  AddNode(g, "Relu", {"a"}, {"y"});
  // w is [1, 4] at run time: a row broadcast, not the full access the declared shape implied, so
  // the call's shape check runs the reference.
  ExpectBitIdentical(MakeModel(g, 13), {{"x", Random({3, 4}, 5)}, {"w", Random({1, 4}, 6)}}, 2);
}

// a = Add(x, x); t = Sin(a) (not generated); y = Mul(a, t): Add and Mul in one partition
// would need the Sin inside it, so they must become two partitions.
TEST(JitPartitioner, RefusesAMergeThatWouldMakeACycle) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{6}, int64_t{6}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{6}, int64_t{6}});
  for (const char* n : {"a", "t"}) *g.add_value_info() = MakeValueInfo(n, DType::kFloat, {int64_t{6}, int64_t{6}});
  AddNode(g, "Add", {"x", "x"}, {"a"});
  AddNode(g, "Sin", {"a"}, {"t"});
  AddNode(g, "Mul", {"a", "t"}, {"y"});
  const auto model = MakeModel(g, 13);
  auto jit = Open(model, "");
  ASSERT_TRUE(jit);
  EXPECT_EQ(jit->counter("jit_partitions"), 2);
  EXPECT_EQ(jit->counter("plan_nodes_reference"), 1);  // the Sin
  ExpectBitIdentical(model, {{"x", Random({6, 6}, 7)}}, 2);
}

TEST(JitPartitioner, DumpListsPartitionsAndRefusals) {
  onnx::GraphProto g;
  g.set_name("main");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{2}, int64_t{3}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{2}, int64_t{3}});
  *g.add_value_info() = MakeValueInfo("a", DType::kFloat, {int64_t{2}, int64_t{3}});
  AddNode(g, "Relu", {"x"}, {"a"}, "relu");
  AddNode(g, "Sin", {"a"}, {"y"}, "sin");
  DiagnosticCapture capture;
  auto s = Open(MakeModel(g, 13), "nuphar_dump_partition:on");
  std::string err;
  for (const auto& line : capture.Texts(Severity::kNote)) err += line + "\n";
  ASSERT_TRUE(s);
  EXPECT_NE(err.find("graph 'main': 1 partition(s) of 1 node(s)"), std::string::npos) << err;
  EXPECT_NE(err.find("nuphar_jit_partition_0 ['relu']: 1 input(s), 1 output(s): Relu"), std::string::npos) << err;
  EXPECT_NE(err.find("reference: 'sin' (Sin): no code generator for Sin"), std::string::npos) << err;
}

// ONNX's inference gives a Reshape to a computed shape no output shape; the session's symbolic
// inference (shape_infer/) names it [seq, 8], so the Relu and Add after it are JIT-compiled.
// A model that declares nothing beyond its inputs and outputs, as exported models often do.
TEST(JitPartitioner, ShapesComputedAtRunTimeComeFromSymbolicInference) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("seq"), int64_t{8}});
  *g.add_output() = MakeValueInfo("z", DType::kFloat, {});
  g.mutable_output(0)->mutable_type()->mutable_tensor_type()->clear_shape();
  AddNode(g, "Shape", {"x"}, {"s"});
  AddNode(g, "Reshape", {"x", "s"}, {"y"});
  AddNode(g, "Relu", {"y"}, {"r"});
  AddNode(g, "Add", {"r", "x"}, {"z"});
  const onnx::ModelProto model = MakeModel(g, 13);
  // Relu + Add (one partition), and the data-movement Shape and Reshape (a view).
  for (int64_t seq : {3, 11}) ExpectBitIdentical(model, {{"x", Random({seq, 8}, 7)}}, 4);
}

// Two partitions with the same kernel IR (same ops, shapes and access pattern) are one code: the
// session compiles it once and both kernels call it.
TEST(JitPartitioner, IdenticalPartitionsCompileOnce) {
  onnx::GraphProto g;
  g.set_name("g");
  for (const char* n : {"x1", "x2"}) *g.add_input() = MakeValueInfo(n, DType::kFloat, {std::string("n"), int64_t{40}});
  for (const char* n : {"y1", "y2"}) *g.add_output() = MakeValueInfo(n, DType::kFloat, {std::string("n"), int64_t{40}});
  AddNode(g, "Relu", {"x1"}, {"y1"});
  AddNode(g, "Relu", {"x2"}, {"y2"});
  const onnx::ModelProto model = MakeModel(g, 13);
  ExpectBitIdentical(model, {{"x1", Random({3, 40}, 8)}, {"x2", Random({3, 40}, 9)}}, 2);
  auto jit = Open(model, "");
  ASSERT_TRUE(jit);
  EXPECT_EQ(jit->counter("jit_kernels"), 2);
  EXPECT_EQ(jit->counter("jit_compiled"), 1);
  EXPECT_EQ(jit->counter("jit_shared_kernels"), 1);
  auto out = jit->Run({{"x1", Random({3, 40}, 8)}, {"x2", Random({3, 40}, 8)}});  // same input: same output
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ(std::memcmp((*out)[0].raw(), (*out)[1].raw(), (*out)[0].bytes()), 0);
}

TEST(JitCompareMode, RunsBothAndReportsTheDifference) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{16}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{16}});
  *g.add_value_info() = MakeValueInfo("a", DType::kFloat, {int64_t{16}});
  AddNode(g, "Exp", {"x"}, {"a"});
  AddNode(g, "Tanh", {"a"}, {"y"});
  DiagnosticCapture capture;
  {
    auto s = Open(MakeModel(g, 13), "nuphar_execution_mode:compare");
    ASSERT_TRUE(s);
    auto out = s->Run({{"x", Random({16}, 8)}});
    ASSERT_TRUE(out.ok()) << out.message();
  }
  std::string err;
  for (const auto& line : capture.Texts(Severity::kNote)) err += line + "\n";
  EXPECT_NE(err.find("nuphar compare: k_"), std::string::npos) << err;
  EXPECT_NE(err.find("1 run(s), max abs diff 0, max rel diff 0"), std::string::npos) << err;
}

}  // namespace
}  // namespace nuphar
