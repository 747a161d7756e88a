// The golden-string table of spec §4.5. Rows changed by a decision assert nuphar-cpp's value
// and name the tag (S1 expanded form, S2 deterministic merges, S3 fixed weakness).
#include <gtest/gtest.h>

#include "tests/shape_infer/shape_check.h"

namespace nuphar::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

ShapeInferOptions AutoMerge() {
  ShapeInferOptions o;
  o.auto_merge = true;
  return o;
}

// One node `op` on input x, extra int64 initializers, result "y".
struct OneOp {
  ModelBuilder b;
  explicit OneOp(int opset = 13) : b(opset) {}
  std::string Run(ShapeInferOptions opt = {}) {
    b.Output("y");
    auto r = MustInfer(b.model(), opt);
    if (r.outcome != InferOutcome::kComplete) return "<incomplete>";
    return ShapeStr(b.graph(), "y");
  }
};

std::string Reshape(const Dims& in, const std::vector<int64_t>& shape) {
  OneOp t;
  t.b.Input("x", kFloat, in).InitInt64("shape", {static_cast<int64_t>(shape.size())}, shape);
  t.b.Node("Reshape", {"x", "shape"}, {"y"});
  return t.Run();
}

TEST(Golden, Reshape) {
  EXPECT_EQ(Reshape({"b", "s", "768"}, {0, 0, 12, 64}), "b,s,12,64");
  EXPECT_EQ(Reshape({"b", "s", "768"}, {-1, 768}), "b*s,768");
  EXPECT_EQ(Reshape({"b", "s", "12", "64"}, {0, -1}), "b,768*s");
  EXPECT_EQ(Reshape({"b", "s", "3"}, {-1}), "3*b*s");
  EXPECT_EQ(Reshape({"b", "s"}, {2, -1}), "2,floor(b*s/2)");
  EXPECT_EQ(Reshape({"b", "s"}, {-1, 3}), "floor(b*s/3),3");
  OneOp dyn;
  dyn.b.Input("x", kFloat, {"b", "s"}).Input("shape", kInt64, {"3"});
  dyn.b.Node("Reshape", {"x", "shape"}, {"y"});
  EXPECT_EQ(dyn.Run(), "Reshape0_o0__d0,Reshape0_o0__d1,Reshape0_o0__d2");
}

TEST(Golden, ShapeGatherConcatReshape) {
  OneOp t;
  t.b.Input("x", kFloat, {"b", "s", "768"});
  t.b.InitInt64("i0", {}, {0}).InitInt64("i1", {}, {1}).InitInt64("ax0", {1}, {0}).InitInt64("m1", {1}, {-1});
  t.b.Node("Shape", {"x"}, {"shp"});
  t.b.Node("Gather", {"shp", "i0"}, {"d0"});
  t.b.Node("Gather", {"shp", "i1"}, {"d1"});
  t.b.Node("Mul", {"d0", "d1"}, {"bs"});
  t.b.Node("Unsqueeze", {"bs", "ax0"}, {"bs1"});
  AttrInt(t.b.Node("Concat", {"bs1", "m1"}, {"target"}), "axis", 0);
  t.b.Node("Reshape", {"x", "target"}, {"y"});
  EXPECT_EQ(t.Run(), "b*s,768");

  OneOp u;
  u.b.Input("x", kFloat, {"b", "s", "768"});
  u.b.InitInt64("st", {1}, {0}).InitInt64("en", {1}, {2}).InitInt64("tail", {2}, {12, 64});
  u.b.Node("Shape", {"x"}, {"shp"});
  u.b.Node("Slice", {"shp", "st", "en"}, {"head"});
  AttrInt(u.b.Node("Concat", {"head", "tail"}, {"target"}), "axis", 0);
  u.b.Node("Reshape", {"x", "target"}, {"y"});
  EXPECT_EQ(u.Run(), "b,s,12,64");
}

std::string Concat(const std::vector<Dims>& ins, ShapeInferOptions opt = {}, onnx::ModelProto* out = nullptr) {
  OneOp t;
  std::vector<std::string> names;
  for (size_t i = 0; i < ins.size(); ++i) {
    names.push_back(std::vector<std::string>{"x", "z", "w"}[i]);
    t.b.Input(names.back(), kFloat, ins[i]);
  }
  AttrInt(t.b.Node("Concat", names, {"y"}), "axis", 1);
  std::string r = t.Run(opt);
  if (out) *out = t.b.model();
  return r;
}

TEST(Golden, Concat) {
  EXPECT_EQ(Concat({{"b", "s"}, {"b", "t"}}), "b,s + t");
  EXPECT_EQ(Concat({{"b", "s"}, {"b", "s"}}), "b,2*s");
  EXPECT_EQ(Concat({{"b", "s"}, {"b", "3"}}), "b,s + 3");
  EXPECT_EQ(Concat({{"b", "s"}, {"b", "3"}, {"b", "t"}}), "b,s + t + 3");
  EXPECT_EQ(Concat({{"a", "s"}, {"b", "t"}}), "<incomplete>");
  onnx::ModelProto m;
  EXPECT_EQ(Concat({{"a", "s"}, {"b", "t"}}, AutoMerge(), &m), "a,s + t");  // S2: a is the earlier input
  EXPECT_EQ(ShapeStr(m.graph(), "x"), "a,s");
  EXPECT_EQ(ShapeStr(m.graph(), "z"), "a,t");
  EXPECT_EQ(Concat({{"a", "s"}, {"4", "t"}}, AutoMerge(), &m), "4,s + t");
  EXPECT_EQ(ShapeStr(m.graph(), "x"), "4,s");
}

std::string Conv(const Dims& x, std::function<void(onnx::NodeProto&)> attrs, const char* op = "Conv") {
  OneOp t;
  t.b.Input("x", kFloat, x);
  std::vector<std::string> in{"x"};
  if (std::string(op) == "Conv") {
    t.b.InitFloat("w", {16, 3, 3, 3});
    in.push_back("w");
  }
  attrs(t.b.Node(op, in, {"y"}));
  return t.Run();
}

TEST(Golden, ConvAndPool) {
  Dims x{"N", "3", "H", "W"};
  EXPECT_EQ(Conv(x, [](auto&) {}), "N,16,H - 2,W - 2");
  EXPECT_EQ(Conv(x, [](auto& n) { AttrInts(n, "pads", {1, 1, 1, 1}); }), "N,16,H,W");
  EXPECT_EQ(Conv(x, [](auto& n) { AttrInts(n, "pads", {1, 1, 1, 1}), AttrInts(n, "strides", {2, 2}); }),
            "N,16,floor(H/2 - 1/2) + 1,floor(W/2 - 1/2) + 1");
  EXPECT_EQ(Conv(x, [](auto& n) { AttrInts(n, "strides", {2, 2}); }), "N,16,floor(H/2 - 3/2) + 1,floor(W/2 - 3/2) + 1");
  EXPECT_EQ(Conv(x, [](auto& n) { AttrInts(n, "dilations", {2, 2}); }), "N,16,H - 4,W - 4");
  EXPECT_EQ(Conv(x, [](auto& n) { AttrString(n, "auto_pad", "SAME_UPPER"); }), "N,16,H,W");
  // S3: SAME with stride 2 is ceiling(H/2) (the original printed floor(H/2)).
  EXPECT_EQ(Conv(x, [](auto& n) { AttrString(n, "auto_pad", "SAME_UPPER"), AttrInts(n, "strides", {2, 2}); }),
            "N,16,ceiling(H/2),ceiling(W/2)");
  EXPECT_EQ(Conv(x, [](auto& n) { AttrString(n, "auto_pad", "VALID"), AttrInts(n, "strides", {2, 2}); }),
            "N,16,floor(H/2 - 3/2) + 1,floor(W/2 - 3/2) + 1");
  EXPECT_EQ(Conv({"1", "3", "224", "224"}, [](auto& n) { AttrInts(n, "pads", {1, 1, 1, 1}), AttrInts(n, "strides", {2, 2}); }),
            "1,16,112,112");
  auto pool = [&](std::vector<int64_t> k, int64_t s, int64_t p, int64_t ceil) {
    return Conv(x, [&](auto& n) {
      AttrInts(n, "kernel_shape", k);
      AttrInts(n, "strides", {s, s});
      if (p) AttrInts(n, "pads", {p, p, p, p});
      if (ceil) AttrInt(n, "ceil_mode", 1);
    }, "MaxPool");
  };
  EXPECT_EQ(pool({2, 2}, 2, 0, 0), "N,3,floor(H/2),floor(W/2)");
  EXPECT_EQ(pool({3, 3}, 2, 1, 0), "N,3,floor(H/2 - 1/2) + 1,floor(W/2 - 1/2) + 1");
  EXPECT_EQ(pool({2, 2}, 2, 0, 1), "N,3,ceiling(H/2),ceiling(W/2)");
  EXPECT_EQ(pool({3, 3}, 2, 0, 1), "N,3,ceiling(H/2 - 3/2) + 1,ceiling(W/2 - 3/2) + 1");
}

std::string Slice(const Dims& x, std::vector<int64_t> st, std::vector<int64_t> en, std::vector<int64_t> step = {1}) {
  OneOp t;
  t.b.Input("x", kFloat, x);
  t.b.InitInt64("st", {1}, st).InitInt64("en", {1}, en).InitInt64("ax", {1}, {0}).InitInt64("sp", {1}, step);
  t.b.Node("Slice", {"x", "st", "en", "ax", "sp"}, {"y"});
  return t.Run();
}

TEST(Golden, Slice) {
  const int64_t kEnd = INT64_MAX, kBegin = INT64_MIN;
  EXPECT_EQ(Slice({"s"}, {1}, {kEnd}), "s - 1");
  EXPECT_EQ(Slice({"s"}, {0}, {-1}), "s - 1");
  EXPECT_EQ(Slice({"s"}, {0}, {10}), "Min(10, s)");
  EXPECT_EQ(Slice({"s"}, {0}, {1}), "1");
  EXPECT_EQ(Slice({"s"}, {-3}, {kEnd}), "3");
  EXPECT_EQ(Slice({"s"}, {2}, {5}), "Max(0, Min(5, s) - 2)");  // S3: >= 0 clamp
  EXPECT_EQ(Slice({"s"}, {0}, {kEnd}, {2}), "floor(s/2 + 1/2)");
  EXPECT_EQ(Slice({"s"}, {1}, {kEnd}, {2}), "floor(s/2)");
  EXPECT_EQ(Slice({"s"}, {-1}, {kBegin}, {-1}), "s");
  EXPECT_EQ(Slice({"s"}, {5}, {2}, {-1}), "Max(0, -Min(2, s) + Min(5, s - 1))");  // S3
  EXPECT_EQ(Slice({"10"}, {0}, {kEnd}, {3}), "4");
  EXPECT_EQ(Slice({"10"}, {3}, {-2}), "5");
  EXPECT_EQ(Slice({"3"}, {-5}, {kEnd}), "3");
  EXPECT_EQ(Slice({"10"}, {5}, {kBegin}, {-1}), "6");  // S3 (original: 5)
  EXPECT_EQ(Slice({"10"}, {5}, {100}, {-1}), "0");     // S3 (original: -5)
  EXPECT_EQ(Slice({"s"}, {3}, {1}), "0");              // S3 (original: -2)
}

TEST(Golden, SliceEndFromAnotherShape) {
  for (auto [dim, want] : std::vector<std::pair<std::string, std::string>>{{"t", "Min(s, t)"}, {"512", "Min(512, s)"}}) {
    OneOp t;
    t.b.Input("x", kFloat, {dim}).Input("z", kFloat, {"b", "s"});
    t.b.InitInt64("i1", {1}, {1}).InitInt64("i2", {1}, {2}).InitInt64("zero", {1}, {0});
    t.b.Node("Shape", {"z"}, {"zs"});
    t.b.Node("Slice", {"zs", "i1", "i2"}, {"end"});
    t.b.Node("Slice", {"x", "zero", "end"}, {"y"});
    EXPECT_EQ(t.Run(), want);  // S3 for t (original: t)
  }
}

TEST(Golden, SliceWithUnknownStarts) {
  OneOp t;
  t.b.Input("x", kFloat, {"b", "s"}).Input("st", kInt64, {"1"});
  t.b.InitInt64("en", {1}, {5}).InitInt64("ax", {1}, {1});
  t.b.Node("Slice", {"x", "st", "en", "ax"}, {"y"});
  EXPECT_EQ(t.Run(), "b,Slice0_o0__d1");
  OneOp u;
  u.b.Input("x", kFloat, {"b", "s"}).Input("st", kInt64, {"1"});
  u.b.InitInt64("en", {1}, {5});
  u.b.Node("Slice", {"x", "st", "en"}, {"y"});
  EXPECT_EQ(u.Run(), "Slice0_o0__d0,s");
}

}  // namespace
}  // namespace nuphar::testing
