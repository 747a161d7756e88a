// Generated reduction kernels against the reference executor: every Reduce op over every kind of
// contiguous axes run (leading, trailing, middle, all), keepdims, axes as attribute and as
// constant input, Softmax/LogSoftmax under both axis semantics, global pooling, MaxPool and
// AveragePool windows, symbolic dims
// resolved per call, NaN inputs, the layer-norm chain as one kernel, and the partition dump's
// refusals. Outputs are bit-identical:
// the generated folds add in the reference's order (reduce_ir.h, "Numerics").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "graph/diagnostics.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"
#include "tests/runtime/jit/jit_test_util.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::Dim;
using testing::ExpectBitIdentical;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::Open;
using testing::Random;

// x [batch, 6, 37] with a symbolic batch; the output's dims are left symbolic (their values are
// the kernel's business).
onnx::GraphProto OneNodeGraph(const std::string& op, int64_t out_rank, const std::vector<std::string>& extra_inputs = {}) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("batch"), int64_t{6}, int64_t{37}});
  std::vector<Dim> out;
  for (int64_t d = 0; d < out_rank; ++d) out.push_back("y" + std::to_string(d));
  *g.add_output() = MakeValueInfo("y", DType::kFloat, out);
  std::vector<std::string> inputs = {"x"};
  inputs.insert(inputs.end(), extra_inputs.begin(), extra_inputs.end());
  AddNode(g, op, inputs, {"y"}, "reduce");
  return g;
}

NamedTensors Feeds(int64_t batch, uint32_t seed, int64_t rows = 6, int64_t cols = 37) {
  return {{"x", Random({batch, rows, cols}, seed)}};
}

const std::vector<std::string> kReduceOps = {"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceL2", "ReduceSumSquare"};
// Last axis, leading, trailing pair, leading pair, middle, all (empty list).
const std::vector<std::vector<int64_t>> kAxesSets = {{-1}, {0}, {1, 2}, {0, 1}, {1}, {}};

TEST(JitReduce, AxesAsAttributeEveryOpAndAxesRunIsBitIdentical) {
  for (const auto& op : kReduceOps)
    for (const auto& axes : kAxesSets)
      for (int64_t keepdims : {0, 1}) {
        SCOPED_TRACE(op + " axes " + std::to_string(axes.size() ? axes[0] : 99) + "x" + std::to_string(axes.size()) +
                     " keepdims " + std::to_string(keepdims));
        const int64_t out_rank = keepdims ? 3 : 3 - static_cast<int64_t>(axes.empty() ? 3 : axes.size());
        // ReduceSum takes its axes as an input from opset 13: opset 11 keeps the attribute for all.
        onnx::GraphProto g = OneNodeGraph(op, out_rank);
        if (!axes.empty()) testing::AttrInts(*g.mutable_node(0), "axes", axes);
        testing::AttrInt(*g.mutable_node(0), "keepdims", keepdims);
        for (int64_t batch : {1, 3}) ExpectBitIdentical(MakeModel(g, 11), Feeds(batch, 7 + batch), 1);
      }
}

TEST(JitReduce, AxesAsConstantInputAtOpset18IsBitIdentical) {
  for (const auto& op : kReduceOps)
    for (const auto& axes : kAxesSets) {
      SCOPED_TRACE(op + " with " + std::to_string(axes.size()) + " axes");
      onnx::GraphProto g = OneNodeGraph(op, 3, {"axes"});
      auto* t = g.add_initializer();
      t->set_name("axes");
      t->set_data_type(onnx::TensorProto::INT64);
      t->add_dims(static_cast<int64_t>(axes.size()));
      for (int64_t a : axes) t->add_int64_data(a);
      ExpectBitIdentical(MakeModel(g, 18), Feeds(2, 3), 1);
    }
}

TEST(JitReduce, MaxAndMinSkipNanAsTheReferenceDoes) {
  for (const char* op : {"ReduceMax", "ReduceMin"})
    for (int64_t axis : {0, 2}) {
      SCOPED_TRACE(std::string(op) + " axis " + std::to_string(axis));
      onnx::GraphProto g = OneNodeGraph(op, 3);
      testing::AttrInts(*g.mutable_node(0), "axes", {axis});
      Tensor x = Random({2, 6, 37}, 5);
      for (int64_t i = 0; i < x.size(); i += 7) x.data<float>()[i] = std::nanf("");
      ExpectBitIdentical(MakeModel(g, 13), {{"x", x}}, 1);
    }
}

// Opset 11 coerces to 2-D at the axis (rows of everything after it: the vector softmax); opset 13
// normalizes along one axis (strided slices unless it is the last).
TEST(JitReduce, SoftmaxAndLogSoftmaxBothAxisSemanticsAreBitIdentical) {
  for (const char* op : {"Softmax", "LogSoftmax"})
    for (int opset : {11, 13})
      for (int64_t axis : {-1, 0, 1}) {
        SCOPED_TRACE(std::string(op) + " opset " + std::to_string(opset) + " axis " + std::to_string(axis));
        onnx::GraphProto g = OneNodeGraph(op, 3);
        testing::AttrInt(*g.mutable_node(0), "axis", axis);
        for (int64_t batch : {1, 4}) ExpectBitIdentical(MakeModel(g, opset), Feeds(batch, 11), 1);
      }
}

TEST(JitReduce, GlobalPoolingIsBitIdentical) {
  for (const char* op : {"GlobalAveragePool", "GlobalMaxPool"}) {
    SCOPED_TRACE(op);
    onnx::GraphProto g;
    g.set_name("g");
    *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{2}, int64_t{5}, std::string("h"), int64_t{9}});
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{2}, int64_t{5}, int64_t{1}, int64_t{1}});
    AddNode(g, op, {"x"}, {"y"});
    for (int64_t h : {1, 7}) ExpectBitIdentical(MakeModel(g, 13), {{"x", Random({2, 5, h, 9}, 13)}}, 1);
  }
}

// 2-D windows without padding: openWakeWord's 2x2 and 1x2 MaxPools, PaddleOCR's 3x2 AveragePool,
// an overlapping 3x3 stride-1 window; widths that leave a remainder; NaN inputs for MaxPool.
TEST(JitReduce, MaxPoolAndAveragePoolAreBitIdentical) {
  struct Window { int64_t kh, kw, sh, sw; };
  for (const char* op : {"MaxPool", "AveragePool"})
    for (const Window& w : {Window{2, 2, 2, 2}, Window{1, 2, 1, 2}, Window{3, 2, 3, 2}, Window{3, 3, 1, 1}}) {
      SCOPED_TRACE(std::string(op) + " " + std::to_string(w.kh) + "x" + std::to_string(w.kw) + " stride " +
                   std::to_string(w.sh) + "x" + std::to_string(w.sw));
      onnx::GraphProto g;
      g.set_name("g");
      *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{2}, int64_t{3}, int64_t{7}, std::string("width")});
      *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{2}, int64_t{3}, std::string("oh"), std::string("ow")});
      auto& node = AddNode(g, op, {"x"}, {"y"});
      testing::AttrInts(node, "kernel_shape", {w.kh, w.kw});
      testing::AttrInts(node, "strides", {w.sh, w.sw});
      testing::AttrInts(node, "pads", {0, 0, 0, 0});
      for (int64_t width : {8, 11}) {
        Tensor x = Random({2, 3, 7, width}, 29);
        if (std::string(op) == "MaxPool")
          for (int64_t i = 0; i < x.size(); i += 13) x.data<float>()[i] = std::nanf("");
        ExpectBitIdentical(MakeModel(g, 13), {{"x", x}}, 1);
      }
    }
}

// A declared shape the actual one contradicts (the static 37 baked into the kernel, 40 at run
// time): the call runs the reference instead, so the result stays right.
TEST(JitReduce, WrongDeclaredShapesFallBackToTheReference) {
  for (const char* op : {"ReduceSum", "Softmax", "MaxPool"}) {
    SCOPED_TRACE(op);
    const bool pool = std::string(op) == "MaxPool";
    onnx::GraphProto g;
    g.set_name("g");
    const std::vector<Dim> declared = pool ? std::vector<Dim>{int64_t{2}, int64_t{3}, int64_t{6}, int64_t{37}}
                                           : std::vector<Dim>{std::string("batch"), int64_t{6}, int64_t{37}};
    const std::vector<Dim> real = pool ? std::vector<Dim>{int64_t{2}, int64_t{3}, int64_t{6}, std::string("w")}
                                       : std::vector<Dim>{std::string("batch"), int64_t{6}, std::string("w")};
    *g.add_input() = MakeValueInfo("x", DType::kFloat, real);
    *g.add_value_info() = MakeValueInfo("a", DType::kFloat, declared);  // wrong: 37, not w
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {std::string("y0"), std::string("y1"), std::string("y2")});
    AddNode(g, "Relu", {"x"}, {"a"});
    auto& node = AddNode(g, op, {"a"}, {"y"});
    if (pool) {
      testing::AttrInts(node, "kernel_shape", {2, 2});
      testing::AttrInts(node, "strides", {2, 2});
      g.mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_param("y3");
    } else if (std::string(op) == "ReduceSum") {
      testing::AttrInts(node, "axes", {-1});  // n = 37 baked in
    }
    const std::vector<int64_t> shape = pool ? std::vector<int64_t>{2, 3, 6, 40} : std::vector<int64_t>{2, 6, 40};
    {  // the reduction is a partition of its own (the Relu, its x [.., w] taken as the declared
       // [.., 37], is generated too and runs: its shape check reads the actual 40)
      DiagnosticCapture capture;
      auto s = Open(MakeModel(g, 11), "nuphar_dump_partition:on");
      std::string err;
      for (const auto& line : capture.Texts(Severity::kNote)) err += line + "\n";
      EXPECT_NE(err.find(std::string("1 output(s): ") + op), std::string::npos) << err;
    }
    ExpectBitIdentical(MakeModel(g, 11), {{"x", Random(shape, 31)}}, 2);
  }
}

// Compare mode runs the reference after every generated run and accepts identical bits.
TEST(JitReduce, CompareModeAcceptsTheGeneratedKernel) {
  onnx::GraphProto g = OneNodeGraph("ReduceMean", 3);
  testing::AttrInts(*g.mutable_node(0), "axes", {-1});
  auto s = Open(MakeModel(g, 13), "nuphar_execution_mode:compare");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->counter("jit_nodes"), 1);
  auto out = s->Run(Feeds(2, 1));
  EXPECT_TRUE(out.ok()) << out.message();
}

// x [batch, 5, 33] -> the layer-norm chain over `axes` -> Mul by a row gamma. `exponent` is Pow's
// constant (float, or int64 when integral), `eps_first` puts epsilon first in the Add, and
// `deviation_out` also makes the Sub's output a graph output (then the chain cannot be one kernel).
onnx::ModelProto LayerNormModel(const std::vector<int64_t>& axes, float exponent, bool int_exponent, bool eps_first,
                                bool deviation_out) {
  onnx::GraphProto g;
  g.set_name("g");
  const std::vector<Dim> shape = {std::string("batch"), int64_t{5}, int64_t{33}};
  *g.add_input() = MakeValueInfo("x", DType::kFloat, shape);
  *g.add_output() = MakeValueInfo("y", DType::kFloat, shape);
  if (deviation_out) *g.add_output() = MakeValueInfo("d", DType::kFloat, shape);
  const std::vector<Dim> reduced = {std::string("batch"), int64_t{axes.size() == 2 ? 1 : 5}, int64_t{1}};
  for (const char* v : {"m", "v", "e", "s"}) *g.add_value_info() = MakeValueInfo(v, DType::kFloat, reduced);
  for (const char* v : {"d", "p", "n"})
    if (!(deviation_out && std::string(v) == "d")) *g.add_value_info() = MakeValueInfo(v, DType::kFloat, shape);
  auto* two = g.add_initializer();
  two->set_name("two");
  two->set_data_type(int_exponent ? onnx::TensorProto::INT64 : onnx::TensorProto::FLOAT);
  if (int_exponent) two->add_int64_data(static_cast<int64_t>(exponent));
  else two->add_float_data(exponent);
  auto* eps = g.add_initializer();
  eps->set_name("eps");
  eps->set_data_type(onnx::TensorProto::FLOAT);
  eps->add_float_data(1e-5f);
  auto* gamma = g.add_initializer();
  gamma->set_name("gamma");
  gamma->set_data_type(onnx::TensorProto::FLOAT);
  gamma->add_dims(33);
  for (int k = 0; k < 33; ++k) gamma->add_float_data(0.5f + 0.03f * static_cast<float>(k));
  testing::AttrInts(AddNode(g, "ReduceMean", {"x"}, {"m"}, "mean"), "axes", axes);
  AddNode(g, "Sub", {"x", "m"}, {"d"}, "sub");
  AddNode(g, "Pow", {"d", "two"}, {"p"}, "pow");
  testing::AttrInts(AddNode(g, "ReduceMean", {"p"}, {"v"}, "variance"), "axes", axes);
  AddNode(g, "Add", eps_first ? std::vector<std::string>{"eps", "v"} : std::vector<std::string>{"v", "eps"}, {"e"}, "add");
  AddNode(g, "Sqrt", {"e"}, {"s"}, "sqrt");
  AddNode(g, "Div", {"d", "s"}, {"n"}, "div");
  AddNode(g, "Mul", {"n", "gamma"}, {"y"}, "gamma");
  return MakeModel(g, 13);
}

// The chain is one kernel (the Mul after it another), bit-identical to the seven nodes.
TEST(JitReduce, LayerNormChainIsOneBitIdenticalKernel) {
  for (const auto& axes : std::vector<std::vector<int64_t>>{{-1}, {1, 2}})
    for (bool int_exponent : {false, true})
      for (bool eps_first : {false, true}) {
        SCOPED_TRACE(std::to_string(axes.size()) + " axes, int exponent " + std::to_string(int_exponent) +
                     ", eps first " + std::to_string(eps_first));
        const onnx::ModelProto model = LayerNormModel(axes, 2.0f, int_exponent, eps_first, false);
        auto s = Open(model, "");
        ASSERT_TRUE(s);
        EXPECT_EQ(s->counter("jit_partitions"), 2);
        for (int64_t batch : {1, 3}) ExpectBitIdentical(model, Feeds(batch, 17 + batch, 5, 33), 8);
      }
}

// An exponent other than 2 or a deviation read outside the chain: the nodes stay separate kernels.
TEST(JitReduce, LayerNormVariantsOutsideThePatternStaySeparateKernels) {
  for (bool deviation_out : {false, true}) {
    SCOPED_TRACE(deviation_out);
    const onnx::ModelProto model = LayerNormModel({-1}, deviation_out ? 2.0f : 3.0f, false, false, deviation_out);
    auto s = Open(model, "");
    ASSERT_TRUE(s);
    EXPECT_GT(s->counter("jit_partitions"), 2);
    ExpectBitIdentical(model, Feeds(2, 23, 5, 33), 8);
  }
}

// Axes that are not one contiguous run, and axes that are no constant, stay with the reference
// with their reason in the dump; the reduction never merges into an elementwise group.
TEST(JitReduce, RefusalsAreListedWithTheirReason) {
  onnx::GraphProto g;
  g.set_name("main");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{2}, int64_t{6}, int64_t{37}});
  *g.add_input() = MakeValueInfo("axes", DType::kInt64, {int64_t{1}});
  *g.add_output() = MakeValueInfo("a", DType::kFloat, {int64_t{1}, int64_t{6}, int64_t{1}});
  *g.add_output() = MakeValueInfo("b", DType::kFloat, {std::string("b0"), std::string("b1"), std::string("b2")});
  *g.add_output() = MakeValueInfo("c", DType::kFloat, {int64_t{2}, int64_t{6}, int64_t{37}});
  *g.add_value_info() = MakeValueInfo("s", DType::kFloat, {int64_t{2}, int64_t{6}, int64_t{37}});
  *g.add_input() = MakeValueInfo("image", DType::kFloat, {int64_t{1}, int64_t{2}, int64_t{8}, int64_t{8}});
  *g.add_output() = MakeValueInfo("pooled", DType::kFloat, {int64_t{1}, int64_t{2}, int64_t{4}, int64_t{4}});
  auto& padded = AddNode(g, "MaxPool", {"image"}, {"pooled"}, "padded");
  testing::AttrInts(padded, "kernel_shape", {2, 2});
  testing::AttrInts(padded, "strides", {2, 2});
  testing::AttrInts(padded, "pads", {1, 1, 0, 0});
  *g.add_output() = MakeValueInfo("wide", DType::kFloat, {std::string("w0"), std::string("w1"), std::string("w2"), std::string("w3")});
  testing::AttrInts(AddNode(g, "AveragePool", {"image"}, {"wide"}, "huge_window"), "kernel_shape",
                    {std::numeric_limits<int64_t>::max(), 2});  // the cell count overflowed in codegen (fuzz)
  auto& gapped = AddNode(g, "ReduceMean", {"x"}, {"a"}, "gapped");
  testing::AttrInts(gapped, "axes", {0, 2});
  AddNode(g, "ReduceSum", {"x", "axes"}, {"b"}, "input_axes");
  AddNode(g, "Softmax", {"x"}, {"s"}, "softmax");
  AddNode(g, "Relu", {"s"}, {"c"}, "relu");
  DiagnosticCapture capture;
  auto s = Open(MakeModel(g, 13), "nuphar_dump_partition:on");
  std::string err;
  for (const auto& line : capture.Texts(Severity::kNote)) err += line + "\n";
  ASSERT_TRUE(s);
  EXPECT_EQ(s->counter("jit_nodes"), 2);
  EXPECT_EQ(s->counter("jit_partitions"), 2);  // the Softmax and the Relu apart
  EXPECT_NE(err.find("reference: 'gapped' (ReduceMean): jit: the reduced axes are not one contiguous run"), std::string::npos) << err;
  EXPECT_NE(err.find("reference: 'input_axes' (ReduceSum): jit: the axes input is not a constant"), std::string::npos) << err;
  EXPECT_NE(err.find("reference: 'padded' (MaxPool): jit: a padded pool"), std::string::npos) << err;
  EXPECT_NE(err.find("reference: 'huge_window' (AveragePool): jit: a pool window or stride past 2^31"), std::string::npos)
      << err;
}

}  // namespace
}  // namespace nuphar
