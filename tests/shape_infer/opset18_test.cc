// Ops whose signature changed after opset 17, on symbolic dims (issue 11): libonnx 1.12 has no
// schema for them, so these shapes come from the handlers alone.
#include <gtest/gtest.h>

#include "tests/shape_infer/shape_check.h"

namespace nuphar::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

TEST(Opset18, SplitNumOutputsReduceAxesInputPadAxes) {
  ModelBuilder b(18);
  b.Input("x", kFloat, {"b", "s", "8"});
  b.InitInt64("axes", {1}, {-1}).InitInt64("pads", {2}, {1, 2}).InitInt64("pad_axes", {1}, {1});
  auto& split = b.Node("Split", {"x"}, {"p0", "p1", "p2"});
  AttrInt(split, "axis", 2);
  AttrInt(split, "num_outputs", 3);
  auto& split_s = b.Node("Split", {"x"}, {"q0", "q1"});  // a symbolic dim: ceil(s/2) and the rest
  AttrInt(split_s, "axis", 1);
  AttrInt(split_s, "num_outputs", 2);
  AttrInt(b.Node("ReduceMax", {"x", "axes"}, {"rmax"}), "keepdims", 0);
  b.Node("ReduceL2", {"x", "axes"}, {"rl2"});
  b.Node("Pad", {"x", "pads", "", "pad_axes"}, {"padded"});
  b.Node("Mish", {"padded"}, {"mish"});
  b.Output("p2").Output("q1").Output("rmax").Output("rl2").Output("mish");
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ShapeStr(b.graph(), "p0"), "b,s,3");
  EXPECT_EQ(ShapeStr(b.graph(), "p2"), "b,s,2");
  EXPECT_EQ(ShapeStr(b.graph(), "q0"), "b,ceiling(s/2),8");
  EXPECT_EQ(ShapeStr(b.graph(), "q1"), "b,s - ceiling(s/2),8");
  EXPECT_EQ(ShapeStr(b.graph(), "rmax"), "b,s");
  EXPECT_EQ(ShapeStr(b.graph(), "rl2"), "b,s,1");
  EXPECT_EQ(ShapeStr(b.graph(), "mish"), "b,s + 3,8");
}

}  // namespace
}  // namespace nuphar::testing
