// The shape arithmetic a Run skips when its input shapes repeat (runtime/core/shape_values.h):
// which nodes are marked, and that outputs stay those of a session that runs every node while
// the input shapes change, repeat and change back, on the JIT and on the reference executor.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "graph/tensor_data.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"
#include "tests/runtime/jit/jit_test_util.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::Open;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::SetAttr;

Tensor Ints(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v); }

// Adds x's batch test of PyTorch exports: s = Shape(x), n = Gather(s, 0), cond = Equal(n, 1)
// (initializers idx0 and one).
void AddBatchIsOne(onnx::GraphProto& g) {
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {0}), "idx0");
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {1}), "one");
  AddNode(g, "Shape", {"x"}, {"s"});
  AddNode(g, "Gather", {"s", "idx0"}, {"n"});
  AddNode(g, "Equal", {"n", "one"}, {"cond"});
}

// y = If(cond) then then_g else else_g.
void AddIf(onnx::GraphProto& g, const onnx::GraphProto& then_g, const onnx::GraphProto& else_g) {
  auto& if_node = AddNode(g, "If", {"cond"}, {"y"});
  SetAttr(if_node, "then_branch", then_g);
  SetAttr(if_node, "else_branch", else_g);
}

// x [n, t] float. The PyTorch-export pattern:
//   t = Gather(Shape(x), 1); target = Concat([-1], Unsqueeze(t)); r = Reshape(x, target)
//   cond = Equal(Gather(Shape(x), 0), 1); y = If(cond) then r * 2 else r * 3 (branches read r)
//   z = Add(r, Cast<float>(t))                 (a shape value feeding data arithmetic)
//   w = Shape(NonZero(x)) + 0                  (a data-dependent shape: never skipped)
// Outputs y, z, w.
onnx::ModelProto ShapeArithmeticModel() {
  onnx::GraphProto g;
  g.set_name("shape_arithmetic");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("n"), std::string("t")});
  AddBatchIsOne(g);
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {1}), "idx1");
  *g.add_initializer() = TensorToProto(Ints({-1}), "minus_one");
  *g.add_initializer() = TensorToProto(Ints({0}), "axes0");
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {0}), "zero");
  *g.add_initializer() = TensorToProto(Tensor::FromVector<float>({}, {2.f}), "two_f");
  *g.add_initializer() = TensorToProto(Tensor::FromVector<float>({}, {3.f}), "three_f");
  AddNode(g, "Gather", {"s", "idx1"}, {"t"});
  AddNode(g, "Unsqueeze", {"t", "axes0"}, {"t1"});
  SetAttr(AddNode(g, "Concat", {"minus_one", "t1"}, {"target"}), "axis", int64_t{0});
  AddNode(g, "Reshape", {"x", "target"}, {"r"});
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  AddNode(then_g, "Mul", {"r", "two_f"}, {"y_then"});
  *then_g.add_output() = MakeValueInfo("y_then", DType::kFloat, {});
  else_g.set_name("else");
  AddNode(else_g, "Mul", {"r", "three_f"}, {"y_else"});
  *else_g.add_output() = MakeValueInfo("y_else", DType::kFloat, {});
  AddIf(g, then_g, else_g);
  SetAttr(AddNode(g, "Cast", {"t"}, {"t_f"}), "to", int64_t{1});
  AddNode(g, "Add", {"r", "t_f"}, {"z"});
  AddNode(g, "NonZero", {"x"}, {"nz"});
  AddNode(g, "Shape", {"nz"}, {"nz_shape"});
  AddNode(g, "Add", {"nz_shape", "zero"}, {"w"});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {});
  *g.add_output() = MakeValueInfo("z", DType::kFloat, {});
  *g.add_output() = MakeValueInfo("w", DType::kInt64, {});
  return MakeModel(g, 13);
}

void ExpectSame(const std::vector<Tensor>& a, const std::vector<Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t o = 0; o < a.size(); ++o) {
    ASSERT_EQ(a[o].shape(), b[o].shape()) << what << " output " << o;
    ASSERT_EQ(a[o].bytes(), b[o].bytes()) << what << " output " << o;
    EXPECT_EQ(std::memcmp(a[o].raw(), b[o].raw(), a[o].bytes()), 0) << what << " output " << o << " differs";
  }
}

TEST(ShapeValues, MarksTheShapeArithmeticOnly) {
  // Shape, Gather(t), Unsqueeze, Concat, Gather(n), Equal, Cast: 7 nodes. Not the Reshape and
  // the Add (data), the If (a subgraph), NonZero and what its shape feeds.
  for (const char* mode : {"reference", "jit"}) {
    auto s = Open(ShapeArithmeticModel(), std::string("nuphar_execution_mode:") + mode);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->counter("plan_nodes_shape_decided"), 7) << mode;
  }
  auto off = Open(ShapeArithmeticModel(), "nuphar_reuse_shape_values:off");
  ASSERT_TRUE(off);
  EXPECT_EQ(off->counter("plan_nodes_shape_decided"), 0);
}

TEST(ShapeValues, OutputsFollowEveryShapeChange) {
  const std::vector<std::vector<int64_t>> shapes = {{1, 4}, {1, 4}, {2, 4}, {2, 4}, {1, 6}, {1, 4}, {1, 4}, {3, 2}};
  for (const char* mode : {"reference", "jit"}) {
    auto reuse = Open(ShapeArithmeticModel(), std::string("nuphar_execution_mode:") + mode);
    auto every = Open(ShapeArithmeticModel(), std::string("nuphar_execution_mode:") + mode + ",nuphar_reuse_shape_values:off");
    ASSERT_TRUE(reuse && every);
    uint32_t seed = 1;
    for (const auto& shape : shapes) {
      const Tensor x = testing::Random(shape, seed++, -2.f, 2.f);
      auto a = reuse->Run({{"x", x}});
      auto b = every->Run({{"x", x}});
      ASSERT_TRUE(a.ok()) << a.message();
      ASSERT_TRUE(b.ok()) << b.message();
      ExpectSame(*a, *b, std::string(mode) + " x" + ShapeToString(shape));
      // y: [n, t] * 2 when n == 1, else * 3 (the If's branch follows the shape).
      const float factor = shape[0] == 1 ? 2.f : 3.f;
      EXPECT_FLOAT_EQ((*a)[0].data<float>()[0], x.data<float>()[0] * factor);
      // z = r + t
      EXPECT_FLOAT_EQ((*a)[1].data<float>()[0], x.data<float>()[0] + static_cast<float>(shape[1]));
    }
  }
}

// Bodies key on their inputs' and outer values' shapes: an If branch that scales x by its own
// width (Shape of an outer value), and a Scan whose body adds row * len(row) to its state.
//   cond = Equal(Gather(Shape(x), 0), 1)
//   y = If(cond) then x * float(Gather(Shape(x), 1)) else x
//   h, rows = Scan(h0, x) body: h' = h + row * float(Gather(Shape(row), 0)), rows = h'
onnx::ModelProto BodyShapeArithmeticModel() {
  onnx::GraphProto g;
  g.set_name("body_shape_arithmetic");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("n"), std::string("t")});
  *g.add_input() = MakeValueInfo("h0", DType::kFloat, {std::string("t")});
  AddBatchIsOne(g);
  *g.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {1}), "idx1");
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  AddNode(then_g, "Shape", {"x"}, {"ts"});
  AddNode(then_g, "Gather", {"ts", "idx1"}, {"tw"});
  SetAttr(AddNode(then_g, "Cast", {"tw"}, {"twf"}), "to", int64_t{1});
  AddNode(then_g, "Mul", {"x", "twf"}, {"y_then"});
  *then_g.add_output() = MakeValueInfo("y_then", DType::kFloat, {});
  else_g.set_name("else");
  AddNode(else_g, "Identity", {"x"}, {"y_else"});
  *else_g.add_output() = MakeValueInfo("y_else", DType::kFloat, {});
  AddIf(g, then_g, else_g);
  onnx::GraphProto body;
  body.set_name("body");
  *body.add_input() = MakeValueInfo("h", DType::kFloat, {std::string("t")});
  *body.add_input() = MakeValueInfo("row", DType::kFloat, {std::string("t")});
  AddNode(body, "Shape", {"row"}, {"rs"});
  AddNode(body, "Gather", {"rs", "idx0"}, {"rw"});
  SetAttr(AddNode(body, "Cast", {"rw"}, {"rwf"}), "to", int64_t{1});
  AddNode(body, "Mul", {"row", "rwf"}, {"scaled"});
  AddNode(body, "Add", {"h", "scaled"}, {"h_next"});
  AddNode(body, "Identity", {"h_next"}, {"row_out"});
  *body.add_output() = MakeValueInfo("h_next", DType::kFloat, {std::string("t")});
  *body.add_output() = MakeValueInfo("row_out", DType::kFloat, {std::string("t")});
  auto& scan = AddNode(g, "Scan", {"h0", "x"}, {"h", "rows"});
  SetAttr(scan, "body", body);
  SetAttr(scan, "num_scan_inputs", int64_t{1});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {});
  *g.add_output() = MakeValueInfo("h", DType::kFloat, {});
  *g.add_output() = MakeValueInfo("rows", DType::kFloat, {});
  return MakeModel(g, 13);
}

TEST(ShapeValues, IfBranchesAndScanBodiesFollowEveryShapeChange) {
  const std::vector<std::vector<int64_t>> shapes = {{1, 4}, {1, 4}, {3, 4}, {3, 4}, {1, 6}, {3, 6}, {1, 4}};
  for (const char* mode : {"reference", "jit"}) {
    auto reuse = Open(BodyShapeArithmeticModel(), std::string("nuphar_execution_mode:") + mode);
    auto every =
        Open(BodyShapeArithmeticModel(), std::string("nuphar_execution_mode:") + mode + ",nuphar_reuse_shape_values:off");
    ASSERT_TRUE(reuse && every);
    // then branch: Shape, Gather, Cast; the body: Shape, Gather, Cast; the main graph: Shape,
    // Gather, Equal.
    EXPECT_GE(reuse->counter("plan_nodes_shape_decided"), 6) << mode;
    uint32_t seed = 1;
    for (const auto& shape : shapes) {
      const Tensor x = testing::Random(shape, seed++, -2.f, 2.f), h0 = testing::Random({shape[1]}, seed++, -2.f, 2.f);
      auto a = reuse->Run({{"x", x}, {"h0", h0}});
      auto b = every->Run({{"x", x}, {"h0", h0}});
      ASSERT_TRUE(a.ok()) << a.message();
      ASSERT_TRUE(b.ok()) << b.message();
      ExpectSame(*a, *b, std::string(mode) + " x" + ShapeToString(shape));
      const float factor = shape[0] == 1 ? static_cast<float>(shape[1]) : 1.f;
      EXPECT_FLOAT_EQ((*a)[0].data<float>()[0], x.data<float>()[0] * factor);
      float h = h0.data<float>()[0];
      for (int64_t r = 0; r < shape[0]; ++r) h += x.data<float>()[r * shape[1]] * static_cast<float>(shape[1]);
      EXPECT_NEAR((*a)[1].data<float>()[0], h, 1e-4f * (1 + std::fabs(h)));
    }
  }
}

// y = If(batch is one) then Reshape(ConstantOfShape(Shape(x)) of ones, Shape(x)) else x: the
// then branch keeps its ones between Runs and its output is a view of them.
onnx::ModelProto KeptViewModel() {
  onnx::GraphProto g;
  g.set_name("kept_view");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("n"), std::string("t")});
  AddBatchIsOne(g);
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  AddNode(then_g, "Shape", {"x"}, {"ts"});
  auto& fill = AddNode(then_g, "ConstantOfShape", {"ts"}, {"ones"});
  SetAttr(fill, "value", TensorToProto(Tensor::FromVector<float>({1}, {1.f}), "v"));
  AddNode(then_g, "Reshape", {"ones", "ts"}, {"y_then"});
  *then_g.add_output() = MakeValueInfo("y_then", DType::kFloat, {});
  else_g.set_name("else");
  AddNode(else_g, "Identity", {"x"}, {"y_else"});
  *else_g.add_output() = MakeValueInfo("y_else", DType::kFloat, {});
  AddIf(g, then_g, else_g);
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {});
  return MakeModel(g, 13);
}

// A Run output that is a view of a kept value (here a 280 KB ConstantOfShape in an If branch,
// reshaped by the branch and shared out by the If) leaves as a copy: the caller may write into
// it, and the next Run still reads ones.
TEST(ShapeValues, OutputsNeverShareAKeptBuffer) {
  for (const char* mode : {"reference", "jit"}) {
    auto s = Open(KeptViewModel(), std::string("nuphar_execution_mode:") + mode);
    ASSERT_TRUE(s);
    const Tensor x = testing::Random({1, 70000}, 3, -2.f, 2.f);
    for (int run = 0; run < 3; ++run) {
      auto out = s->Run({{"x", x}});
      ASSERT_TRUE(out.ok()) << out.message();
      Tensor& y = (*out)[0];
      ASSERT_EQ(y.size(), 70000);
      for (int64_t i = 0; i < y.size(); ++i) ASSERT_EQ(y.data<float>()[i], 1.f) << mode << " run " << run << " at " << i;
      std::fill(y.data<float>(), y.data<float>() + y.size(), -5.f);  // the caller writes into its output
    }
  }
}

// Session::Run asks whether an output shares a kept buffer only for a graph whose outputs may be
// views of kept values (GraphPlan::outputs_may_view_kept_values, counted per graph at load).
TEST(ShapeValues, OnlyGraphsWhoseOutputsMayViewAKeptValueAreChecked) {
  // The then branch and the main graph (through the If); not the else branch.
  auto kept = Open(KeptViewModel(), "nuphar_execution_mode:reference");
  ASSERT_TRUE(kept);
  EXPECT_EQ(kept->counter("plan_graphs_outputs_may_view_kept"), 2);
  auto kept_jit = Open(KeptViewModel(), "nuphar_execution_mode:jit");
  ASSERT_TRUE(kept_jit);
  EXPECT_GE(kept_jit->counter("plan_graphs_outputs_may_view_kept"), 1);
  // No kept values: nothing to check.
  onnx::GraphProto plain;
  plain.set_name("plain");
  *plain.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("n"), std::string("t")});
  AddNode(plain, "Add", {"x", "x"}, {"y"});
  *plain.add_output() = MakeValueInfo("y", DType::kFloat, {});
  auto p = Open(MakeModel(plain, 13), "nuphar_execution_mode:reference");
  ASSERT_TRUE(p);
  EXPECT_EQ(p->counter("plan_nodes_shape_decided"), 0);
  EXPECT_EQ(p->counter("plan_graphs_outputs_may_view_kept"), 0);
  // Kept shape values that feed only Reshape's shape input: the output views x, not them.
  onnx::GraphProto reshape;
  reshape.set_name("reshape_by_shape");
  *reshape.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("n"), std::string("t")});
  *reshape.add_initializer() = TensorToProto(Tensor::FromVector<int64_t>({}, {1}), "idx1");
  *reshape.add_initializer() = TensorToProto(Ints({-1}), "minus_one");
  *reshape.add_initializer() = TensorToProto(Ints({0}), "axes0");
  AddNode(reshape, "Shape", {"x"}, {"s"});
  AddNode(reshape, "Gather", {"s", "idx1"}, {"t"});
  AddNode(reshape, "Unsqueeze", {"t", "axes0"}, {"t1"});
  SetAttr(AddNode(reshape, "Concat", {"minus_one", "t1"}, {"target"}), "axis", int64_t{0});
  AddNode(reshape, "Reshape", {"x", "target"}, {"y"});
  *reshape.add_output() = MakeValueInfo("y", DType::kFloat, {});
  auto r = Open(MakeModel(reshape, 13), "nuphar_execution_mode:reference");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->counter("plan_nodes_shape_decided"), 4);
  EXPECT_EQ(r->counter("plan_graphs_outputs_may_view_kept"), 0);
  const Tensor x = testing::Random({2, 3}, 5, -2.f, 2.f);
  auto out = r->Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.message();
  EXPECT_EQ((*out)[0].shape(), std::vector<int64_t>({2, 3}));
}

// A failed Run keeps nothing: the next Run with the same shapes recomputes the shape values.
TEST(ShapeValues, AFailedRunForgetsTheShapes) {
  auto s = Open(ShapeArithmeticModel(), "");
  ASSERT_TRUE(s);
  const Tensor good = testing::Random({1, 4}, 1, -2.f, 2.f);
  ASSERT_TRUE(s->Run({{"x", good}}).ok());
  // Wrong element type: the Run fails at a kernel.
  const Tensor bad = Tensor::FromVector<int64_t>({1, 4}, {1, 2, 3, 4});
  EXPECT_FALSE(s->Run({{"x", bad}}).ok());
  auto again = s->Run({{"x", good}});
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_FLOAT_EQ((*again)[1].data<float>()[0], good.data<float>()[0] + 4.f);
}

}  // namespace
}  // namespace nuphar
