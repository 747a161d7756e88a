// Golden table (spec §4.5), second half: data-dependent ops, value tracking, control flow.
#include <gtest/gtest.h>

#include "tests/shape_infer/shape_check.h"

namespace nuphar::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;

std::string Infer(ModelBuilder& b, const std::string& out = "y", ShapeInferOptions opt = {}) {
  b.Output(out);
  auto r = MustInfer(b.model(), opt);
  if (r.outcome != InferOutcome::kComplete) return "<incomplete>";
  return ShapeStr(b.graph(), out);
}

std::string Range(std::vector<std::string> args) {
  ModelBuilder b;
  b.Input("x", kFloat, {"b", "s"});
  b.InitInt64("i1", {}, {1}).InitInt64("c0", {}, {0}).InitInt64("c1", {}, {1}).InitInt64("c2", {}, {2});
  b.InitInt64("c10", {}, {10}).InitInt64("c3", {}, {3}).InitInt64("cm1", {}, {-1});
  b.Node("Shape", {"x"}, {"shp"});
  b.Node("Gather", {"shp", "i1"}, {"s_"});
  b.Input("dyn", kInt64, {});
  b.Node("Range", args, {"y"});
  return Infer(b);
}

TEST(GoldenValues, Range) {
  EXPECT_EQ(Range({"c0", "s_", "c1"}), "s");
  EXPECT_EQ(Range({"c0", "s_", "c2"}), "ceiling(s/2)");
  EXPECT_EQ(Range({"c1", "s_", "c1"}), "s - 1");
  EXPECT_EQ(Range({"s_", "c0", "cm1"}), "s");
  EXPECT_EQ(Range({"c2", "c10", "c3"}), "3");
  EXPECT_EQ(Range({"c0", "dyn", "c1"}), "Range2_o0__d0");  // node 2 here (Shape, Gather precede it)
}

TEST(GoldenValues, ExpandAndTile) {
  ModelBuilder b;
  b.Input("x", kFloat, {"1", "s"}).Input("z", kFloat, {"b", "s"});
  b.Node("Shape", {"z"}, {"zs"});
  b.Node("Expand", {"x", "zs"}, {"y"});
  EXPECT_EQ(Infer(b), "b,s");
  ModelBuilder c;
  c.Input("x", kFloat, {"b", "1"}).InitInt64("t", {2}, {1, 5});
  c.Node("Expand", {"x", "t"}, {"y"});
  EXPECT_EQ(Infer(c), "b,5");
  ModelBuilder d;
  d.Input("x", kFloat, {"b", "1"}).InitInt64("t", {3}, {3, 1, 5});
  d.Node("Expand", {"x", "t"}, {"y"});
  EXPECT_EQ(Infer(d), "3,b,5");
  ModelBuilder e;
  e.Input("x", kFloat, {"b", "s"}).InitInt64("r", {2}, {2, 1});
  e.Node("Tile", {"x", "r"}, {"y"});
  EXPECT_EQ(Infer(e), "2*b,s");
  ModelBuilder f;
  f.Input("x", kFloat, {"1", "2"}).Input("z", kFloat, {"b", "s"});
  f.Node("Shape", {"z"}, {"zs"});
  f.Node("Tile", {"x", "zs"}, {"y"});
  EXPECT_EQ(Infer(f), "b,2*s");
}

TEST(GoldenValues, SplitResizeTopK) {
  ModelBuilder a(11);
  a.Input("x", kFloat, {"b", "s"});
  AttrInt(a.Node("Split", {"x"}, {"y", "y2"}), "axis", 1);
  EXPECT_EQ(Infer(a), "b,s/2");
  EXPECT_EQ(ShapeStr(a.graph(), "y2"), "b,s/2");
  ModelBuilder c(11);
  c.Input("x", kFloat, {"b", "9"});
  AttrInt(c.Node("Split", {"x"}, {"y", "y2", "y3"}), "axis", 1);
  EXPECT_EQ(Infer(c), "b,3");
  for (auto [scale, want] : std::vector<std::pair<float, std::string>>{
           {2.f, "N,3,2*H,2*W"}, {.5f, "N,3,floor(H/2),floor(W/2)"}, {1.5f, "N,3,floor(3*H/2),floor(3*W/2)"}}) {
    ModelBuilder r;
    r.Input("x", kFloat, {"N", "3", "H", "W"}).InitFloat("roi", {0}).InitFloat("scales", {4}, {1, 1, scale, scale});
    r.Node("Resize", {"x", "roi", "scales"}, {"y"});
    EXPECT_EQ(Infer(r), want);  // S3: exact rationals instead of floor(2.0*H)
  }
  ModelBuilder r2;
  r2.Input("x", kFloat, {"N", "3", "H", "W"}).InitInt64("sizes", {4}, {1, 3, 64, 64});
  r2.Node("Resize", {"x", "", "", "sizes"}, {"y"});
  EXPECT_EQ(Infer(r2), "1,3,64,64");
  ModelBuilder r3;
  r3.Input("x", kFloat, {"N", "3", "H", "W"}).Input("scales", kFloat, {"4"});
  r3.Node("Resize", {"x", "", "scales"}, {"y"});
  EXPECT_EQ(Infer(r3), "Resize0_o0__d0,Resize0_o0__d1,Resize0_o0__d2,Resize0_o0__d3");
  ModelBuilder t;
  t.Input("x", kFloat, {"b", "s"}).InitInt64("k", {1}, {5});
  t.Node("TopK", {"x", "k"}, {"y", "idx"});
  EXPECT_EQ(Infer(t), "b,5");
  ModelBuilder t2;
  t2.Input("x", kFloat, {"b", "s"}).Input("k", kInt64, {"1"});
  t2.Node("TopK", {"x", "k"}, {"y", "idx"});
  EXPECT_EQ(Infer(t2), "b,TopK0_o0__d1");
}

TEST(GoldenValues, DataDependentOps) {
  ModelBuilder a;
  a.Input("x", kFloat, {"b", "s"});
  a.Node("NonZero", {"x"}, {"y"});
  EXPECT_EQ(Infer(a), "2,NonZero0_o0__d1");
  ModelBuilder c;
  c.Input("x", kFloat, {"b", "s"}).Input("c", onnx::TensorProto::BOOL, {"s"});
  AttrInt(c.Node("Compress", {"x", "c"}, {"y"}), "axis", 1);
  EXPECT_EQ(Infer(c), "b,Compress0_o0__d1");
  ModelBuilder n;
  n.Input("boxes", kFloat, {"1", "b", "4"}).Input("scores", kFloat, {"1", "1", "b"});
  n.Node("NonMaxSuppression", {"boxes", "scores"}, {"y"});
  EXPECT_EQ(Infer(n), "NonMaxSuppression0_o0__d0,3");
  ModelBuilder o;
  o.Input("x", kInt64, {"b", "s"}).InitInt64("depth", {}, {10}).InitFloat("values", {2}, {0, 1});
  o.Node("OneHot", {"x", "depth", "values"}, {"y"});
  EXPECT_EQ(Infer(o), "b,s,10");  // S3 (original: OneHot0_o0__d0)
  ModelBuilder p;
  p.Input("x", kInt64, {"b", "s"}).Input("depth", kInt64, {}).InitFloat("values", {2}, {0, 1});
  AttrInt(p.Node("OneHot", {"x", "depth", "values"}, {"y"}), "axis", 1);
  EXPECT_EQ(Infer(p), "b,OneHot0_o0__d1,s");
}

TEST(GoldenValues, GatherFamilyAndSize) {
  ModelBuilder a;
  a.Input("ids", kInt64, {"b", "s"}).InitFloat("emb", {100, 32});
  a.Node("Gather", {"emb", "ids"}, {"y"});
  EXPECT_EQ(Infer(a), "b,s,32");
  ModelBuilder c;
  c.Input("x", kFloat, {"b", "s", "8"}).InitInt64("i", {}, {0});
  AttrInt(c.Node("Gather", {"x", "i"}, {"y"}), "axis", 1);
  EXPECT_EQ(Infer(c), "b,8");
  ModelBuilder d;
  d.Input("x", kFloat, {"b", "h"}).InitInt64("perm", {2}, {1, 0});
  d.Node("Shape", {"x"}, {"shp"});
  d.Node("Gather", {"shp", "perm"}, {"t"});
  d.Node("Reshape", {"x", "t"}, {"y"});
  EXPECT_EQ(Infer(d), "h,b");
  ModelBuilder e;
  e.Input("x", kFloat, {"b", "s", "8"}).Input("i", kInt64, {"n", "2"});
  e.Node("GatherND", {"x", "i"}, {"y"});
  EXPECT_EQ(Infer(e), "n,8");
  ModelBuilder f;
  f.Input("x", kFloat, {"b", "s"}).Input("i", kInt64, {"b", "k"});
  f.Node("GatherElements", {"x", "i"}, {"y"});
  EXPECT_EQ(Infer(f), "b,k");
  ModelBuilder g;
  g.Input("x", kFloat, {"b", "s", "3"}).InitInt64("ax", {1}, {0});
  g.Node("Size", {"x"}, {"n"});
  g.Node("Unsqueeze", {"n", "ax"}, {"n1"});
  g.Node("Reshape", {"x", "n1"}, {"y"});
  EXPECT_EQ(Infer(g), "3*b*s");
}

TEST(GoldenValues, SqueezeTransposeMatMul) {
  ModelBuilder a;
  a.Input("x", kFloat, {"b", "1", "s", "1"});
  a.Node("Squeeze", {"x"}, {"y"});
  EXPECT_EQ(Infer(a), "b,s");
  ModelBuilder c(11);
  c.Input("x", kFloat, {"b", "1", "s"});
  AttrInts(c.Node("Squeeze", {"x"}, {"y"}), "axes", {1});
  EXPECT_EQ(Infer(c), "b,s");
  ModelBuilder d;
  d.Input("x", kFloat, {"b", "s"}).InitInt64("ax", {1}, {1});
  d.Node("Squeeze", {"x", "ax"}, {"y"});
  EXPECT_EQ(Infer(d), "b");
  ModelBuilder t;
  t.Input("x", kFloat, {"a", "b", "c", "d"}).InitInt64("two", {2}, {2, 2}).InitInt64("flat", {1}, {4});
  t.Node("Shape", {"x"}, {"shp"});
  t.Node("Reshape", {"shp", "two"}, {"sq"});
  AttrInts(t.Node("Transpose", {"sq"}, {"tr"}), "perm", {1, 0});
  t.Node("Reshape", {"tr", "flat"}, {"target"});
  t.Node("Reshape", {"x", "target"}, {"y"});
  EXPECT_EQ(Infer(t), "a,c,b,d");
  auto matmul = [](const Dims& x, const Dims& w, ShapeInferOptions opt = {}) {
    ModelBuilder m;
    m.Input("x", kFloat, x).Input("w", kFloat, w);
    m.Node("MatMul", {"x", "w"}, {"y"});
    std::string r = Infer(m, "y", opt);
    return r + (opt.auto_merge ? "|" + ShapeStr(m.graph(), "w") : "");
  };
  EXPECT_EQ(matmul({"b", "s", "768"}, {"768", "64"}), "b,s,64");
  EXPECT_EQ(matmul({"b", "1", "s", "d"}, {"b", "h", "d", "t"}), "b,h,s,t");
  EXPECT_EQ(matmul({"k"}, {"k", "n"}), "n");
  EXPECT_EQ(matmul({"m", "k"}, {"k"}), "m");
  ShapeInferOptions am;
  am.auto_merge = true;
  EXPECT_EQ(matmul({"a", "m", "k"}, {"c", "k", "n"}, am), "a,m,n|a,k,n");  // S2
  EXPECT_EQ(matmul({"a", "m", "k"}, {"c", "k", "n"}), "<incomplete>");
  ModelBuilder add;
  add.Input("x", kFloat, {"a", "s"}).Input("z", kFloat, {"5", "s"});
  add.Node("Add", {"x", "z"}, {"y"});
  EXPECT_EQ(Infer(add, "y", am), "5,s");
  EXPECT_EQ(ShapeStr(add.graph(), "x"), "5,s");
}

// Tracked-value arithmetic on b = Shape(x)[0], s = Shape(x)[1], shown through ConstantOfShape.
class Tracked {
 public:
  Tracked() {
    b_.Input("x", kFloat, {"b", "s"});
    b_.InitInt64("i0", {}, {0}).InitInt64("i1", {}, {1}).InitInt64("ax", {1}, {0});
    b_.Node("Shape", {"x"}, {"shp"});
    b_.Node("Gather", {"shp", "i0"}, {"b"});
    b_.Node("Gather", {"shp", "i1"}, {"s"});
  }
  std::string Lit(int64_t v) {
    std::string n = "lit" + std::to_string(count_++);
    b_.InitInt64(n, {}, {v});
    return n;
  }
  std::string FloatLit(float v) {
    std::string n = "flit" + std::to_string(count_++);
    b_.InitFloat(n, {}, {v});
    b_.graph().mutable_initializer(b_.graph().initializer_size() - 1)->clear_dims();
    return n;
  }
  std::string Op(const std::string& op, std::vector<std::string> in, std::function<void(onnx::NodeProto&)> attrs = {}) {
    std::string n = "v" + std::to_string(count_++);
    auto& node = b_.Node(op, in, {n});
    if (attrs) attrs(node);
    return n;
  }
  std::string Result(const std::string& v, ShapeInferOptions opt = {}) {
    b_.Node("Unsqueeze", {v, "ax"}, {"target_shape"});
    b_.Node("ConstantOfShape", {"target_shape"}, {"y"});
    return Infer(b_, "y", opt);
  }

 private:
  ModelBuilder b_;
  int count_ = 0;
};

std::string Bin(const char* op, std::function<std::string(Tracked&)> lhs, std::function<std::string(Tracked&)> rhs) {
  Tracked t;
  std::string a = lhs(t), c = rhs(t);
  return t.Result(t.Op(op, {a, c}));
}
auto B = [](Tracked&) { return std::string("b"); };
auto S = [](Tracked&) { return std::string("s"); };
auto L = [](int64_t v) { return [v](Tracked& t) { return t.Lit(v); }; };

TEST(GoldenValues, TrackedArithmetic) {
  EXPECT_EQ(Bin("Div", S, L(2)), "floor(s/2)");
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Div", {t.Op("Sub", {"s", t.Lit(1)}), t.Lit(2)})), "floor(s/2 - 1/2)");
  }
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Div", {t.Op("Mul", {"b", "s"}), "s"})), "b");
  }
  EXPECT_EQ(Bin("Div", S, B), "floor(s/b)");
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Div", {t.Op("Add", {t.Op("Mul", {"b", "s"}), "s"}), "s"})), "b + 1");  // S1
  }
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Mul", {t.Op("Mul", {t.Lit(2), "b"}), "s"})), "2*b*s");
  }
  EXPECT_EQ(Bin("Sub", B, S), "b - s");
  EXPECT_EQ(Bin("Sub", L(5), S), "5 - s");
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Add", {t.Op("Sub", {t.Lit(1), "s"}), "b"})), "b - s + 1");
  }
  EXPECT_EQ(Bin("Add", S, S), "2*s");
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Add", {t.Op("Add", {"b", "s"}), t.Lit(1)})), "b + s + 1");
  }
  {
    Tracked t;
    std::string s1 = t.Op("Add", {"s", t.Lit(1)});
    EXPECT_EQ(t.Result(t.Op("Mul", {s1, s1})), "s**2 + 2*s + 1");  // S1
  }
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Mul", {t.Op("Add", {"s", t.Lit(1)}), "b"})), "b*s + b");  // S1
  }
  EXPECT_EQ(Bin("Max", S, L(1)), "s");
  EXPECT_EQ(Bin("Max", S, L(10)), "Max(10, s)");
  EXPECT_EQ(Bin("Min", S, L(10)), "Min(10, s)");
  EXPECT_EQ(Bin("Min", S, B), "Min(b, s)");
  EXPECT_EQ(Bin("Max", B, S), "Max(b, s)");
  EXPECT_EQ(Bin("Min", S, L(int64_t{1} << 31)), "s");
  EXPECT_EQ(Bin("Max", S, L(-(int64_t{1} << 31))), "s");
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Sub", {"s", t.Op("Mul", {t.Lit(3), t.Op("Div", {"s", t.Lit(3)})})})), "s - 3*floor(s/3)");
  }
  {
    Tracked t;
    std::string c = t.Op("Cast", {"s"}, [](auto& n) { AttrInt(n, "to", kFloat); });
    std::string half = t.Op("Mul", {c, t.FloatLit(0.5f)});
    EXPECT_EQ(t.Result(t.Op("Cast", {half}, [](auto& n) { AttrInt(n, "to", kInt64); })), "floor(s/2)");  // S3
  }
  {
    Tracked t;
    std::string c = t.Op("Cast", {"s"}, [](auto& n) { AttrInt(n, "to", kFloat); });
    std::string fl = t.Op("Floor", {t.Op("Div", {c, t.FloatLit(2.f)})});
    EXPECT_EQ(t.Result(t.Op("Cast", {fl}, [](auto& n) { AttrInt(n, "to", kInt64); })), "floor(s/2)");
  }
  {
    Tracked t;
    std::string eq = t.Op("Equal", {"s", "b"});
    EXPECT_EQ(t.Result(t.Op("Where", {eq, "s", "b"})), "b");
  }
  {
    Tracked t;
    std::string eq = t.Op("Equal", {"s", "s"});
    EXPECT_EQ(t.Result(t.Op("Where", {eq, "s", "b"})), "s");
  }
  EXPECT_EQ(Bin("Sub", L(2), [](Tracked& t) { return t.Op("Mul", {t.Lit(3), "s"}); }), "2 - 3*s");
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Neg", {t.Op("Add", {"s", "b"})})), "-b - s");
  }
  {
    Tracked t;
    EXPECT_EQ(t.Result(t.Op("Mul", {t.Op("Mul", {"s", "s"}), "b"})), "b*s**2");
  }
}

}  // namespace
}  // namespace nuphar::testing
