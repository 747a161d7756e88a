// Patterns PyTorch's exporter emits that used to stop inference on real models (issue 4):
//  - F.pad's pads: Reshape([-1, 2]) -> Slice(step -1) -> Transpose -> Reshape([-1]) (silero v3.1);
//  - `x.squeeze(-1) if x.shape[-1] == 1 else x` on a computed dim: the condition is undecidable,
//    the branches differ in rank, and upstream fuses to the then branch (silero 16k_op15);
//  - nn.LSTM's unbatched check If(Cast(Not(Equal(Size(Shape(x)), 2)))) (silero 16k_op15).
#include <gtest/gtest.h>

#include "tests/shape_infer/shape_check.h"

namespace nuphar::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kBool = onnx::TensorProto::BOOL;
constexpr int64_t kInt64Max = 9223372036854775807;

onnx::GraphProto OneNodeBranch(const std::string& name, const std::string& op, const std::vector<std::string>& in) {
  onnx::GraphProto g;
  g.set_name(name);
  auto* n = g.add_node();
  n->set_op_type(op);
  for (const auto& i : in) n->add_input(i);
  n->add_output(name + "_out");
  g.add_output()->set_name(name + "_out");
  return g;
}

void AddIf(ModelBuilder& b, const std::string& cond, const onnx::GraphProto& then_g, const onnx::GraphProto& else_g,
           const std::string& out) {
  auto& n = b.Node("If", {cond}, {out});
  AttrGraph(n, "then_branch", then_g);
  AttrGraph(n, "else_branch", else_g);
}

TEST(PyTorchPatterns, PadWithPadsThroughReshapeSliceTranspose) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"1", "1", "s"});
  b.InitInt64("torch_pads", {2}, {2, 3}).InitInt64("zeros", {4}, {0, 0, 0, 0});
  b.InitInt64("pairs", {2}, {-1, 2}).InitInt64("flat", {1}, {-1});
  b.InitInt64("start", {1}, {-1}).InitInt64("end", {1}, {-kInt64Max}).InitInt64("axis0", {1}, {0});
  b.InitInt64("step", {1}, {-1});
  AttrInt(b.Node("Concat", {"torch_pads", "zeros"}, {"p6"}), "axis", 0);  // [2,3,0,0,0,0]
  b.Node("Reshape", {"p6", "pairs"}, {"p32"});                              // [[2,3],[0,0],[0,0]]
  b.Node("Slice", {"p32", "start", "end", "axis0", "step"}, {"rev"});        // rows reversed
  AttrInts(b.Node("Transpose", {"rev"}, {"t"}), "perm", {1, 0});            // [[0,0,2],[0,0,3]]
  b.Node("Reshape", {"t", "flat"}, {"onnx_pads"});                          // [0,0,2,0,0,3]
  AttrString(b.Node("Pad", {"x", "onnx_pads"}, {"y"}), "mode", "reflect");
  b.Output("y");
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ShapeStr(b.graph(), "rev"), "3,2");
  EXPECT_EQ(ShapeStr(b.graph(), "y"), "1,1,s + 5");
}

// Paddle's CRNN neck (issue 11): a [D0, 96, 1, W'] feature map, W' = X + 1 after two stride-2
// windows (here X = floor(floor(W/2 - 3/2)/2)), is reshaped to [d0, w, -1] with d0 and w read
// from its Shape. The -1 is 96*D0*(X + 1) / (D0*(X + 1)): the sum factor must cancel to 96
// (the model printed floor(96*D0*X/(D0*X + D0) + 96*D0/(D0*X + D0))).
TEST(PyTorchPatterns, ReshapeMinusOneCancelsCommonPolynomialFactors) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"D0", "96", "1", "W"});
  b.InitInt64("i0", {}, {0}).InitInt64("i3", {}, {3}).InitInt64("minus1", {1}, {-1}).InitInt64("ax0", {1}, {0});
  for (const char* pool : {"p1", "p2"}) {
    auto& n = b.Node("MaxPool", {std::string(pool) == "p1" ? "x" : "p1"}, {pool});
    AttrInts(n, "kernel_shape", {1, 3});
    AttrInts(n, "strides", {1, 2});
    if (std::string(pool) == "p2") AttrInts(n, "pads", {0, 1, 0, 1});  // keeps W' a sum: X + 1
  }
  b.Node("Shape", {"p2"}, {"shape"});
  b.Node("Gather", {"shape", "i0"}, {"d0"});
  b.Node("Gather", {"shape", "i3"}, {"w"});
  b.Node("Unsqueeze", {"d0", "ax0"}, {"d0v"});
  b.Node("Unsqueeze", {"w", "ax0"}, {"wv"});
  AttrInt(b.Node("Concat", {"d0v", "wv", "minus1"}, {"target"}), "axis", 0);
  b.Node("Reshape", {"p2", "target"}, {"y"});
  b.Output("y");
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ShapeStr(b.graph(), "p2"), "D0,96,1,floor(floor(W/2 - 3/2)/2) + 1");
  EXPECT_EQ(ShapeStr(b.graph(), "y"), "D0,floor(floor(W/2 - 3/2)/2) + 1,96");
}

// cond = Equal(dim, 1) on x3 = [b, s, 1]; then: Squeeze(x3, -1) = [b, s]; else: Identity(x3).
ModelBuilder SqueezeIfLastDimIsOne(bool computed_dim) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"b", "s"});
  b.InitInt64("axis2", {1}, {2}).InitInt64("last", {1}, {-1}).InitInt64("four", {}, {4});
  b.InitInt64("one", {}, {1}).InitInt64("which", {}, {computed_dim ? 1 : 0});
  b.Node("Unsqueeze", {"x", "axis2"}, {"x3"});
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("Gather", {"shape", "which"}, {"dim"});
  b.Node("Div", {"dim", "four"}, {"quarter"});  // floor(s/4): may well be 1
  b.Node("Equal", {computed_dim ? "quarter" : "dim", "one"}, {"cond"});
  AddIf(b, "cond", OneNodeBranch("squeezed", "Squeeze", {"x3", "last"}), OneNodeBranch("kept", "Identity", {"x3"}), "y");
  b.Output("y");
  return b;
}

TEST(PyTorchPatterns, UndecidableConditionFusesBranchesOfDifferentRank) {
  auto b = SqueezeIfLastDimIsOne(/*computed_dim=*/true);
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ShapeStr(b.graph(), "y"), "b,s");  // upstream's fusion: the then branch's rank
}

TEST(PyTorchPatterns, PlainSymbolIsNotAssumedToEqualALiteral) {
  auto b = SqueezeIfLastDimIsOne(/*computed_dim=*/false);  // Equal(b, 1): the original's "different"
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ShapeStr(b.graph(), "y"), "b,s,1");
}

TEST(PyTorchPatterns, LstmUnbatchedCheckIsAConstantCondition) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"b", "s"});
  b.InitInt64("two", {}, {2}).InitInt64("axis0", {1}, {0});
  b.Node("Shape", {"x"}, {"shape"});
  b.Node("Size", {"shape"}, {"rank"});
  b.Node("Equal", {"rank", "two"}, {"is_2d"});
  b.Node("Not", {"is_2d"}, {"not_2d"});
  AttrInt(b.Node("Cast", {"not_2d"}, {"cond"}), "to", kBool);
  AddIf(b, "cond", OneNodeBranch("batched", "Unsqueeze", {"x", "axis0"}), OneNodeBranch("as_is", "Identity", {"x"}),
        "y");
  b.Output("y");
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ShapeStr(b.graph(), "y"), "b,s");  // rank 2 -> Not(true) -> the else branch
}

}  // namespace
}  // namespace nuphar::testing
