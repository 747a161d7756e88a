// The original tool's unit tests (spec §5, cases 2-13) and upstream's newer tests, ported with
// their expected value_info. Case 1 (the corpus) is corpus_check.py.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "graph/diagnostics.h"
#include "tests/shape_infer/shape_check.h"

namespace nuphar::testing {
namespace {

constexpr int32_t kFloat = onnx::TensorProto::FLOAT;
constexpr int32_t kInt64 = onnx::TensorProto::INT64;
constexpr int32_t kInt32 = onnx::TensorProto::INT32;

// The set of value_info names must be exactly the node outputs, each with the given type+shape.
void ExpectValueInfo(const onnx::GraphProto& g, const std::map<std::string, std::pair<int32_t, std::string>>& want) {
  std::vector<std::string> names;
  for (const auto& vi : g.value_info()) names.push_back(vi.name());
  std::sort(names.begin(), names.end());
  std::vector<std::string> want_names;
  for (const auto& [n, v] : want) want_names.push_back(n);
  EXPECT_EQ(names, want_names);
  for (const auto& [name, v] : want) {
    EXPECT_EQ(ElemType(g, name), v.first) << name;
    EXPECT_EQ(ShapeStr(g, name), v.second) << name;
  }
}

// Warnings reach the caller's diagnostics sink, not stderr: squeezing a symbolic dim makes
// inference assume it is 1, which verbose inference reports.
TEST(OriginalCases, VerboseWarningsGoThroughTheDiagnosticsSink) {
  ModelBuilder b(11);
  b.Input("x", kFloat, {"n", "k"});
  b.Output("y");
  AttrInts(b.Node("Squeeze", {"x"}, {"y"}), "axes", {1});
  ShapeInferOptions opt;
  opt.verbose = 1;
  onnx::ModelProto verbose_model = b.model();
  DiagnosticCapture capture;
  MustInfer(verbose_model, opt);
  std::string all;
  for (const auto& l : capture.lines()) all += l.text + "\n";
  const auto warnings = capture.Texts(Severity::kWarning);
  ASSERT_FALSE(warnings.empty()) << all;
  EXPECT_EQ(warnings[0].rfind("shape_infer: warning: Squeeze", 0), 0u) << all;
  opt.verbose = 0;
  DiagnosticCapture quiet;
  MustInfer(b.model(), opt);
  EXPECT_TRUE(quiet.lines().empty());
}

TEST(OriginalCases, UnsqueezeOpset11) {
  ModelBuilder b(11);
  b.Input("input", kFloat, {"b", "s"});
  Dims out{"1", "b", "s"};
  b.Output("output", kFloat, &out);
  AttrInts(b.Node("Unsqueeze", {"input"}, {"temp"}), "axes", {0});
  b.Node("Identity", {"temp"}, {"output"});
  ShapeInferOptions opt;
  opt.auto_merge = true;
  auto r = MustInfer(b.model(), opt);
  EXPECT_EQ(r.outcome, InferOutcome::kComplete);
  ExpectValueInfo(b.graph(), {{"temp", {kFloat, "1,b,s"}}, {"output", {kFloat, "1,b,s"}}});
}

TEST(OriginalCases, UnsqueezeOpset13) {
  ModelBuilder b(13);
  b.Input("input", kFloat, {"b", "s"});
  b.InitInt64("axes", {1}, {-1});
  b.Output("output", kFloat);
  b.Node("Unsqueeze", {"input", "axes"}, {"temp"});
  b.Node("Identity", {"temp"}, {"output"});
  ShapeInferOptions opt;
  opt.auto_merge = true;
  EXPECT_EQ(MustInfer(b.model(), opt).outcome, InferOutcome::kComplete);
  ExpectValueInfo(b.graph(), {{"temp", {kFloat, "b,s,1"}}, {"output", {kFloat, "b,s,1"}}});
}

TEST(OriginalCases, EmbedLayerNorm) {
  ModelBuilder b(13);
  b.Input("input_ids", kFloat, {"b", "s"}).Input("segment_ids", kFloat, {"b", "s"});
  b.InitFloat("word_embedding", {100, 32}).InitFloat("position_embedding", {20, 32});
  b.InitFloat("segment_embedding", {2, 32}).InitFloat("gamma", {32}).InitFloat("beta", {32});
  b.Output("output", kFloat).Output("mask_index", kInt32);
  b.Node("EmbedLayerNormalization",
         {"input_ids", "segment_ids", "word_embedding", "position_embedding", "segment_embedding", "gamma", "beta"},
         {"output", "mask_index"}, "com.microsoft");
  ShapeInferOptions opt;
  opt.auto_merge = true;
  EXPECT_EQ(MustInfer(b.model(), opt).outcome, InferOutcome::kComplete);
  ExpectValueInfo(b.graph(), {{"output", {kFloat, "b,s,32"}}, {"mask_index", {kInt32, "b"}}});
}

// check_slice_of_concat (cases 5-13): Slice(Concat(t_i [B, D_i]), starts, ends, axes, steps).
struct SliceCase {
  const char* name;
  Dims input_dims;
  std::string start, end, step;
  std::string expected;
};

void AddRef(ModelBuilder& b, const std::string& ref, const Dims& dims, std::vector<std::string>* pieces) {
  bool neg = !ref.empty() && ref[0] == '-';
  std::string base = neg ? ref.substr(1) : ref;
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] == base) {
      pieces->push_back((neg ? "neg_dim_" : "dim_") + std::to_string(i));
      return;
    }
  pieces->push_back(neg ? "neg_" + base : base);
}

class SliceOfConcat : public ::testing::TestWithParam<SliceCase> {};

TEST_P(SliceOfConcat, MatchesOriginal) {
  const SliceCase& c = GetParam();
  ModelBuilder b(13);
  for (auto [n, v] : std::vector<std::pair<std::string, int64_t>>{
           {"zero", 0}, {"one", 1}, {"two", 2}, {"ten", 10}, {"intmax", int64_t{1} << 32},
           {"neg_intmax", -(int64_t{1} << 32)}, {"neg_one", -1}, {"neg_ten", -10}})
    b.InitInt64(n, {1}, {v});
  std::vector<std::string> concat_inputs;
  std::map<std::string, std::pair<int32_t, std::string>> want;
  for (size_t i = 0; i < c.input_dims.size(); ++i) {
    std::string k = std::to_string(i);
    b.Input("t_" + k, kFloat, {"B", c.input_dims[i]});
    b.Node("Shape", {"t_" + k}, {"shape_" + k});
    b.Node("Slice", {"shape_" + k, "one", "two", "zero", "one"}, {"dim_" + k});
    b.Node("Neg", {"dim_" + k}, {"neg_dim_" + k});
    concat_inputs.push_back("t_" + k);
    want["shape_" + k] = {kInt64, "2"};
    want["dim_" + k] = {kInt64, "1"};
    want["neg_dim_" + k] = {kInt64, "1"};
  }
  AttrInt(b.Node("Concat", concat_inputs, {"concat"}), "axis", 1);
  std::vector<std::string> starts{"zero"}, ends{"intmax"}, steps{"one"};
  AddRef(b, c.start, c.input_dims, &starts);
  AddRef(b, c.end, c.input_dims, &ends);
  AddRef(b, c.step, c.input_dims, &steps);
  AttrInt(b.Node("Concat", starts, {"starts"}), "axis", 0);
  AttrInt(b.Node("Concat", ends, {"ends"}), "axis", 0);
  AttrInt(b.Node("Concat", {"zero", "one"}, {"axes"}), "axis", 0);
  AttrInt(b.Node("Concat", steps, {"steps"}), "axis", 0);
  b.Node("Slice", {"concat", "starts", "ends", "axes", "steps"}, {"output"});
  Dims declared{"d1", "d2"};
  b.Output("output", kFloat, &declared);
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  for (const char* n : {"starts", "ends", "axes", "steps"}) want[n] = {kInt64, "2"};
  std::string concat_dim;
  {
    // Concat dim as the original prints it: M, M + N, 2*N, 3*N.
    std::map<std::string, int> counts;
    for (const auto& d : c.input_dims) ++counts[d];
    for (const auto& [d, n] : counts) concat_dim += (concat_dim.empty() ? "" : " + ") + (n > 1 ? std::to_string(n) + "*" : "") + d;
  }
  want["concat"] = {kFloat, "B," + concat_dim};
  want["output"] = {kFloat, "B," + c.expected};
  ExpectValueInfo(b.graph(), want);
}

INSTANTIATE_TEST_SUITE_P(
    Original, SliceOfConcat,
    ::testing::Values(SliceCase{"numeric_negative_indices_forward", {"M"}, "-ten", "-one", "one", "9"},
                      SliceCase{"numeric_negative_indices_backward", {"M"}, "-one", "-ten", "-one", "9"},
                      SliceCase{"symbolic_end_index", {"M", "N"}, "zero", "M", "one", "M"},
                      SliceCase{"symbolic_negative_start_index", {"M", "N"}, "-N", "intmax", "one", "N"},
                      SliceCase{"non_unit_step", {"N", "N"}, "zero", "intmax", "two", "N"},
                      SliceCase{"symbolic_step", {"N", "N"}, "zero", "intmax", "N", "floor(-1/N) + 3"},
                      SliceCase{"symbolic_negative_step", {"N", "N"}, "-one", "-intmax", "-N", "floor(-1/N) + 3"},
                      SliceCase{"flip", {"N"}, "-one", "-intmax", "-one", "N"},
                      SliceCase{"flip_of_concat", {"N", "N", "N"}, "-one", "-intmax", "-one", "3*N"}),
    [](const ::testing::TestParamInfo<SliceCase>& info) { return std::string(info.param.name); });

// ---- newer upstream tests (spec §5, required extras) ----

TEST(UpstreamCases, MismatchedIfTypesIsAnError) {
  ModelBuilder b(13);
  b.Input("cond", onnx::TensorProto::BOOL, {});
  b.Input("x", kFloat, {"s"});
  onnx::GraphProto then_g, else_g;
  then_g.set_name("then");
  else_g.set_name("else");
  auto* n1 = then_g.add_node();
  n1->set_op_type("Identity");
  n1->add_input("x");
  n1->add_output("t_out");
  ModelBuilder::SetType(then_g.add_output(), kFloat, nullptr);
  then_g.mutable_output(0)->set_name("t_out");
  auto* n2 = else_g.add_node();
  n2->set_op_type("Cast");
  n2->add_input("x");
  n2->add_output("e_out");
  AttrInt(*n2, "to", onnx::TensorProto::DOUBLE);
  else_g.add_output()->set_name("e_out");
  auto& node = b.Node("If", {"cond"}, {"y"});
  node.set_name("if_node");
  AttrGraph(node, "then_branch", then_g);
  AttrGraph(node, "else_branch", else_g);
  b.Output("y");
  auto r = InferShapes(&b.model(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.message().find("if_node"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("FLOAT"), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("DOUBLE"), std::string::npos) << r.message();
}

TEST(UpstreamCases, GatherIndices) {
  ModelBuilder b(13);
  b.Input("input", kInt64, {"b"});
  auto& c = b.Node("Constant", {}, {"data"});
  onnx::TensorProto t;
  t.set_data_type(kInt64);
  t.add_dims(5);
  for (int i = 0; i < 5; ++i) t.add_int64_data(i);
  AttrTensor(c, "value", t);
  AttrInt(b.Node("Gather", {"data", "input"}, {"output"}), "axis", 0);
  b.Output("output");
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ShapeStr(b.graph(), "data"), "5");
  EXPECT_EQ(ShapeStr(b.graph(), "output"), "b");
}

TEST(UpstreamCases, SoftmaxCrossEntropyLoss) {
  ModelBuilder b(13);
  b.Input("logits", kFloat, {"b", "s", "1024"}).Input("labels", kInt32, {"b", "s"});
  b.Node("SoftmaxCrossEntropyLoss", {"logits", "labels"}, {"loss"});
  b.Output("loss");
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ElemType(b.graph(), "loss"), kFloat);
  EXPECT_EQ(ShapeStr(b.graph(), "loss"), "");
}

std::string Einsum(const std::string& eq, const std::vector<Dims>& inputs) {
  ModelBuilder b(13);
  std::vector<std::string> names;
  for (size_t i = 0; i < inputs.size(); ++i) {
    names.push_back("x" + std::to_string(i));
    b.Input(names.back(), kFloat, inputs[i]);
  }
  AttrString(b.Node("Einsum", names, {"y"}), "equation", eq);
  b.Output("y");
  if (MustInfer(b.model()).outcome != InferOutcome::kComplete) return "<incomplete>";
  return ShapeStr(b.graph(), "y");
}

TEST(UpstreamCases, Einsum) {
  EXPECT_EQ(Einsum("abc, cde -> abde", {{"1", "b", "8"}, {"8", "12", "n"}}), "1,b,12,n");
  EXPECT_EQ(Einsum("bij, bjk -> bik", {{"5", "2", "3"}, {"5", "3", "4"}}), "5,2,4");
  EXPECT_EQ(Einsum("i, i", {{"5"}, {"5"}}), "");
  EXPECT_EQ(Einsum("...ii ->...i", {{"3", "5", "5"}}), "3,5");
  EXPECT_EQ(Einsum("ij -> i", {{"a", "b"}}), "a");
  EXPECT_EQ(Einsum("ij -> ji", {{"a", "b"}}), "b,a");
}

// Shape of [n] scaled by a float and fed to Resize sizes (float-preserving Mul/Div, S3).
std::string ResizeBy(const std::string& op, float factor, int64_t n) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {std::to_string(n)});
  auto& c = b.Node("Constant", {}, {"f"});
  onnx::TensorProto t;
  t.set_data_type(kFloat);
  t.add_float_data(factor);
  AttrTensor(c, "value", t);
  b.Node("Shape", {"x"}, {"shape"});
  auto& cast = b.Node("Cast", {"shape"}, {"shape_f"});
  AttrInt(cast, "to", kFloat);
  b.Node(op, {"shape_f", "f"}, {"scaled"});
  AttrInt(b.Node("Cast", {"scaled"}, {"sizes"}), "to", kInt64);
  b.Node("Resize", {"x", "", "", "sizes"}, {"y"});
  b.Output("y");
  if (MustInfer(b.model()).outcome != InferOutcome::kComplete) return "<incomplete>";
  return ShapeStr(b.graph(), "y");
}

TEST(UpstreamCases, MulAndDivPrecision) {
  EXPECT_EQ(ResizeBy("Mul", 0.5f, 1024), "512");
  EXPECT_EQ(ResizeBy("Div", 1.5f, 768), "512");
}

TEST(UpstreamCases, QuantizeDequantizeLinear) {
  for (auto [domain, zp_type, want] : std::vector<std::tuple<std::string, int32_t, int32_t>>{
           {"", onnx::TensorProto::INT8, onnx::TensorProto::INT8},
           {"com.microsoft", onnx::TensorProto::UINT16, onnx::TensorProto::UINT16},
           {"", 0, onnx::TensorProto::UINT8}}) {
    ModelBuilder b(13);
    b.Opset("com.microsoft", 1);
    b.Input("x", kFloat, {"b", "2", "3", "4"}).Input("scale", kFloat, {});
    std::vector<std::string> in{"x", "scale"};
    if (zp_type) {
      b.Input("zp", zp_type, {});
      in.push_back("zp");
    }
    b.Node("QuantizeLinear", in, {"q"}, domain);
    b.Node("DequantizeLinear", in.size() == 3 ? std::vector<std::string>{"q", "scale", "zp"}
                                              : std::vector<std::string>{"q", "scale"},
           {"dq"}, "com.microsoft");
    b.Output("dq");
    EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
    EXPECT_EQ(ElemType(b.graph(), "q"), want) << domain;
    EXPECT_EQ(ShapeStr(b.graph(), "q"), "b,2,3,4");
    EXPECT_EQ(ElemType(b.graph(), "dq"), kFloat);
  }
}

TEST(UpstreamCases, SliceOfMin) {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"N"});
  b.InitInt64("c42", {1}, {42}).InitInt64("c1", {1}, {1}).InitInt64("c21", {1}, {21}).InitInt64("zero", {1}, {0});
  b.InitFloat("big", {42});
  b.Node("Shape", {"x"}, {"n"});
  b.Node("Sub", {"c21", "n"}, {"t"});
  b.Node("Add", {"c1", "t"}, {"starts"});
  b.Node("Add", {"c21", "n"}, {"ends"});
  b.Node("Slice", {"big", "starts", "ends"}, {"sliced"});
  b.Node("Slice", {"sliced", "zero", "n"}, {"cropped"});
  b.Node("Add", {"cropped", "x"}, {"y"});
  b.Output("y");
  EXPECT_EQ(MustInfer(b.model()).outcome, InferOutcome::kComplete);
  EXPECT_EQ(ShapeStr(b.graph(), "y"), "N");
}

}  // namespace
}  // namespace nuphar::testing
