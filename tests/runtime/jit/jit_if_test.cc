// Whole-If kernels (jit_if_kernel.h) against the reference executor: the PyTorch squeeze-if on a
// symbolic batch, and an If nested in a branch of an If the JIT refuses, on both values of each
// condition, batch 1 and 3, on every tier; compare mode checks every run, and a call whose
// shapes do not fit a view falls back to the reference If, which reports the error.
#include <gtest/gtest.h>

#include <cstring>

#include "graph/diagnostics.h"
#include "runtime/core/tensor_proto.h"
#include "tests/modellib/model_builder.h"
#include "tests/runtime/jit/jit_test_util.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::SetAttr;

Tensor Ints(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v); }

Tensor Bool(bool v) {
  Tensor t(DType::kBool, std::vector<int64_t>{});
  static_cast<uint8_t*>(t.raw())[0] = v ? 1 : 0;
  return t;
}

onnx::ValueInfoProto Untyped(const std::string& name, DType dtype) {  // an output whose rank depends on the branch
  onnx::ValueInfoProto vi;
  vi.set_name(name);
  vi.mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int32_t>(dtype));
  return vi;
}

// A branch graph: `nodes` adds its nodes, `outputs` are its outputs.
template <class AddNodes>
onnx::GraphProto Branch(const std::string& name, const std::vector<std::string>& outputs, AddNodes nodes) {
  onnx::GraphProto g;
  g.set_name(name);
  nodes(g);
  for (const auto& o : outputs) *g.add_output() = Untyped(o, DType::kFloat);
  return g;
}

void AxesConstant(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& axes) {
  SetAttr(AddNode(g, "Constant", {}, {name}, name + "_node"), "value", TensorToProto(Ints(axes), name));
}

// x: float [batch, t, 3]; c1, c2: bool.
//   squeeze_if:  ya = If(Equal(Gather(Shape(x), 0), 1)) then Squeeze(x, [0]) else Identity(x)
//   outer_if:    yb, yc = If(c1) then inner_if else (Flatten(x, 2), Identity(x))
//   inner_if:    If(c2) then (Unsqueeze(Squeeze(x, [1]), [0]), Identity(x)) else (Reshape(x, [-1, 3]), Flatten(x))
// The outer If holds an If, which is not a view: it stays the reference If, and its branch's
// inner If is taken when the branch is compiled.
onnx::ModelProto NestedIfModel() {
  onnx::GraphProto g;
  g.set_name("nested_ifs");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("batch"), std::string("t"), int64_t{3}});
  *g.add_input() = MakeValueInfo("c1", DType::kBool, {});
  *g.add_input() = MakeValueInfo("c2", DType::kBool, {});
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {0}), "zero");
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {1}), "one");
  AddNode(g, "Shape", {"x"}, {"x_shape"}, "shape");
  AddNode(g, "Gather", {"x_shape", "zero"}, {"x_batch"}, "gather");
  AddNode(g, "Equal", {"x_batch", "one"}, {"batch_is_1"}, "equal");
  auto& squeeze_if = AddNode(g, "If", {"batch_is_1"}, {"ya"}, "squeeze_if");
  SetAttr(squeeze_if, "then_branch", Branch("squeeze_then", {"ya_then"}, [](onnx::GraphProto& b) {
            AxesConstant(b, "axes_0", {0});
            AddNode(b, "Squeeze", {"x", "axes_0"}, {"ya_then"}, "squeeze_batch");
          }));
  SetAttr(squeeze_if, "else_branch", Branch("squeeze_else", {"ya_else"}, [](onnx::GraphProto& b) {
            AddNode(b, "Identity", {"x"}, {"ya_else"}, "keep_batch");
          }));
  auto& outer = AddNode(g, "If", {"c1"}, {"yb", "yc"}, "outer_if");
  SetAttr(outer, "then_branch", Branch("outer_then", {"inner_b", "inner_c"}, [](onnx::GraphProto& b) {
            auto& inner = AddNode(b, "If", {"c2"}, {"inner_b", "inner_c"}, "inner_if");
            SetAttr(inner, "then_branch", Branch("inner_then", {"q", "x_same"}, [](onnx::GraphProto& ib) {
                      AxesConstant(ib, "axes_1", {1});
                      AddNode(ib, "Squeeze", {"x", "axes_1"}, {"p"}, "squeeze_t");
                      AxesConstant(ib, "axes_front", {0});
                      AddNode(ib, "Unsqueeze", {"p", "axes_front"}, {"q"}, "unsqueeze_front");
                      AddNode(ib, "Identity", {"x"}, {"x_same"}, "inner_identity");
                    }));
            SetAttr(inner, "else_branch", Branch("inner_else", {"r", "x_flat"}, [](onnx::GraphProto& ib) {
                      SetAttr(AddNode(ib, "Constant", {}, {"rows"}, "rows_node"), "value",
                              TensorToProto(Ints({-1, 3}), "rows"));
                      AddNode(ib, "Reshape", {"x", "rows"}, {"r"}, "reshape_rows");
                      AddNode(ib, "Flatten", {"x"}, {"x_flat"}, "flatten_1");
                    }));
          }));
  SetAttr(outer, "else_branch", Branch("outer_else", {"f", "x_again"}, [](onnx::GraphProto& b) {
            SetAttr(AddNode(b, "Flatten", {"x"}, {"f"}, "flatten_2"), "axis", int64_t{2});
            AddNode(b, "Identity", {"x"}, {"x_again"}, "outer_identity");
          }));
  *g.add_output() = Untyped("ya", DType::kFloat);
  *g.add_output() = Untyped("yb", DType::kFloat);
  *g.add_output() = Untyped("yc", DType::kFloat);
  return MakeModel(g, 13);
}

TEST(JitIf, NestedIfsOnBothConditionsEveryTierSymbolicBatch) {
  const onnx::ModelProto model = NestedIfModel();
  for (const char* tier : {"avx2", "avxvnni", "avx512", "avx512vnni"}) {
    SCOPED_TRACE(tier);
    DiagnosticCapture capture;
    {
      auto ref = testing::Open(model, "nuphar_execution_mode:reference");
      auto jit = testing::Open(model, std::string("nuphar_execution_mode:compare,nuphar_codegen_target:") + tier);
      ASSERT_TRUE(ref && jit);
      EXPECT_EQ(jit->counter("jit_whole_ifs"), 2);  // squeeze_if, inner_if
      EXPECT_EQ(ref->counter("jit_whole_ifs"), 0);
      for (int64_t batch : {1, 3})
        for (bool c1 : {false, true})
          for (bool c2 : {false, true}) {
            SCOPED_TRACE("batch " + std::to_string(batch) + " c1 " + std::to_string(c1) + " c2 " + std::to_string(c2));
            const NamedTensors feeds = {{"x", testing::Random({batch, 1, 3}, static_cast<uint32_t>(batch * 4 + c1 * 2 + c2))},
                                        {"c1", Bool(c1)},
                                        {"c2", Bool(c2)}};
            auto a = ref->Run(feeds);
            auto b = jit->Run(feeds);
            ASSERT_TRUE(a.ok()) << a.message();
            ASSERT_TRUE(b.ok()) << b.message();
            ASSERT_EQ(a->size(), 3u);
            ASSERT_EQ(b->size(), 3u);
            for (size_t o = 0; o < 3; ++o) {
              ASSERT_EQ((*a)[o].shape(), (*b)[o].shape()) << "output " << o;
              EXPECT_EQ(std::memcmp((*a)[o].raw(), (*b)[o].raw(), (*a)[o].bytes()), 0) << "output " << o;
            }
            // The branch each condition chose, by its shape.
            EXPECT_EQ((*b)[0].rank(), batch == 1 ? 2 : 3);
            if (c1) EXPECT_EQ((*b)[1].shape(), c2 ? std::vector<int64_t>({1, batch, 3}) : std::vector<int64_t>({batch, 3}));
            else EXPECT_EQ((*b)[1].shape(), std::vector<int64_t>({batch, 3}));
          }
    }
    std::string notes;
    for (const auto& line : capture.Texts(Severity::kNote)) notes += line + "\n";
    EXPECT_NE(notes.find("whole If 'squeeze_if': 8 run(s), identical"), std::string::npos) << notes;
    EXPECT_NE(notes.find("whole If 'inner_if': 4 run(s), identical"), std::string::npos) << notes;
  }
}

// t = 2: inner_if's Squeeze of axis 1 does not fit; the whole If runs the reference If, which
// reports the reference's error; the other branch still runs as views.
TEST(JitIf, ShapesThatDoNotFitAViewFallBackToTheReference) {
  const onnx::ModelProto model = NestedIfModel();
  auto ref = testing::Open(model, "nuphar_execution_mode:reference");
  auto jit = testing::Open(model, "");
  ASSERT_TRUE(ref && jit);
  const NamedTensors squeeze = {{"x", testing::Random({2, 2, 3}, 7)}, {"c1", Bool(true)}, {"c2", Bool(true)}};
  auto a = ref->Run(squeeze);
  auto b = jit->Run(squeeze);
  ASSERT_FALSE(a.ok());
  ASSERT_FALSE(b.ok());
  const std::string error = "node 'squeeze_t' (Squeeze): cannot squeeze axis 1 of shape [2,2,3]";
  EXPECT_NE(a.message().find(error), std::string::npos) << a.message();
  EXPECT_NE(b.message().find(error), std::string::npos) << b.message();
  const NamedTensors reshape = {{"x", testing::Random({2, 2, 3}, 8)}, {"c1", Bool(true)}, {"c2", Bool(false)}};
  a = ref->Run(reshape);
  b = jit->Run(reshape);
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  EXPECT_EQ((*b)[1].shape(), std::vector<int64_t>({4, 3}));
  EXPECT_EQ(std::memcmp((*a)[1].raw(), (*b)[1].raw(), (*a)[1].bytes()), 0);
}

// A whole If on a condition the input shapes decide keeps its outputs' shapes decided (core/
// shape_values.h walks a JitIf as the If it was): the shape arithmetic after it is skipped on a
// Run whose input shapes repeat, as on the reference executor.
//   y = If(Equal(Gather(Shape(x), 0), 1)) then Squeeze(x, [0]) else Identity(x)
//   w = Add(Mul(Shape(y), 2), 0)
TEST(JitIf, ItsOutputsShapesStayDecidedByTheInputShapes) {
  onnx::GraphProto g;
  g.set_name("shape_after_if");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("batch"), int64_t{4}});
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {0}), "zero");
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {1}), "one");
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {2}), "two");
  AddNode(g, "Shape", {"x"}, {"x_shape"}, "shape");
  AddNode(g, "Gather", {"x_shape", "zero"}, {"x_batch"}, "gather");
  AddNode(g, "Equal", {"x_batch", "one"}, {"batch_is_1"}, "equal");
  auto& squeeze_if = AddNode(g, "If", {"batch_is_1"}, {"y"}, "squeeze_if");
  SetAttr(squeeze_if, "then_branch", Branch("then", {"y_then"}, [](onnx::GraphProto& b) {
            AxesConstant(b, "axes_0", {0});
            AddNode(b, "Squeeze", {"x", "axes_0"}, {"y_then"}, "squeeze_batch");
          }));
  SetAttr(squeeze_if, "else_branch", Branch("else", {"y_else"}, [](onnx::GraphProto& b) {
            AddNode(b, "Identity", {"x"}, {"y_else"}, "keep_batch");
          }));
  AddNode(g, "Shape", {"y"}, {"y_shape"}, "shape_y");
  AddNode(g, "Mul", {"y_shape", "two"}, {"doubled"}, "mul");
  AddNode(g, "Add", {"doubled", "zero"}, {"w"}, "add");
  *g.add_output() = Untyped("y", DType::kFloat);
  *g.add_output() = Untyped("w", DType::kInt64);
  const onnx::ModelProto model = MakeModel(g, 13);
  auto ref = testing::Open(model, "nuphar_execution_mode:reference");
  auto jit = testing::Open(model, "");
  ASSERT_TRUE(ref && jit);
  EXPECT_EQ(jit->counter("jit_whole_ifs"), 1);
  // Shape, Gather, Equal, Shape(y), Mul (the If reads x from the graph; the Add writes an output).
  // On the JIT the int64 Mul and Add are one generated partition, which writes the output.
  EXPECT_EQ(ref->counter("plan_nodes_shape_decided"), 5);
  EXPECT_EQ(jit->counter("plan_nodes_shape_decided"), 4);
  for (int64_t batch : {1, 1, 3, 3, 1}) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    const NamedTensors feeds = {{"x", testing::Random({batch, 4}, static_cast<uint32_t>(batch))}};
    auto a = ref->Run(feeds);
    auto b = jit->Run(feeds);
    ASSERT_TRUE(a.ok()) << a.message();
    ASSERT_TRUE(b.ok()) << b.message();
    for (size_t o = 0; o < 2; ++o) {
      ASSERT_EQ((*a)[o].shape(), (*b)[o].shape()) << "output " << o;
      EXPECT_EQ(std::memcmp((*a)[o].raw(), (*b)[o].raw(), (*a)[o].bytes()), 0) << "output " << o;
    }
  }
}

TEST(JitIf, DumpNamesTheWholeIfsAndTheFirstBranchNodeThatIsNotAView) {
  DiagnosticCapture capture;
  auto jit = testing::Open(NestedIfModel(), "nuphar_dump_partition:on");
  ASSERT_TRUE(jit);
  std::string notes;
  for (const auto& line : capture.Texts(Severity::kNote)) notes += line + "\n";
  EXPECT_NE(notes.find("whole If 'squeeze_if' (If): views of 1 value(s)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("whole If 'inner_if' (If): views of 1 value(s)"), std::string::npos) << notes;
  EXPECT_NE(notes.find("reference: 'outer_if' (If): branch 'outer_then' node 'inner_if' (If) is not a view"),
            std::string::npos)
      << notes;
}

}  // namespace
}  // namespace nuphar
