// loop_to_scan, opt_inproj, gemm_to_matmul and remove_initializers_from_inputs (issue 3 acc. 5, 6),
// and the model_editor CLI contract (exit codes, no output on error).
#include <onnx/onnx_pb.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "editor/editor.h"
#include "graph/model_io.h"
#include "graph/node_builder.h"
#include "tests/editor/editor_test_util.h"

namespace nuphar::editor::testing {
namespace {

const std::string kLoopDir = std::string(NUPHAR_SHARED_DIR) + "/fixtures/loop_to_scan/";

Expected<onnx::ModelProto> Edit(const std::string& mode, onnx::ModelProto m, EditorOptions options = {}) {
  std::vector<std::string>* warnings = nullptr;
  (void)warnings;
  if (!options.log) options.log = [](const std::string&) {};
  Status s = RunEditor(mode, &m, options);
  if (!s.ok()) return s;
  return m;
}

onnx::ModelProto Load(const std::string& path) {
  onnx::ModelProto m;
  Status s = LoadModel(path, &m);
  EXPECT_TRUE(s.ok()) << s.message();
  return m;
}

// ---- loop_to_scan ----

TEST(LoopToScan, ConvertsTinyModelAndCleansUp) {
  auto original = Load(kLoopDir + "nuphar_tiny_model_with_loop_shape_infered.onnx");
  auto converted = Edit("loop_to_scan", original);
  ASSERT_TRUE(converted.ok()) << converted.message();
  EXPECT_EQ(CountOps(converted->graph(), "Loop"), 0);
  EXPECT_EQ(CountOps(converted->graph(), "Scan"), 4);
  EXPECT_EQ(CountOps(converted->graph(), "Cast"), 0);   // cond Casts (main and bodies) removed
  EXPECT_EQ(CountOps(converted->graph(), "Shape"), 0);  // dead trip-count chains removed
  for (const auto& n : converted->graph().node()) {
    if (n.op_type() != "Scan") continue;
    const auto& body = FindAttr(n, "body")->g();
    ASSERT_EQ(body.output_size(), 3);
    EXPECT_NE(body.output(0).name(), body.output(2).name());  // duplicate output made distinct
    EXPECT_EQ(AttrInt(n, "num_scan_inputs", 0), 1);
  }
  EXPECT_EQ(FullCheck(*converted), "");
}

TEST(LoopToScan, TinyModelOutputsAreBitIdenticalOnRuntime) {
  auto original = Load(kLoopDir + "nuphar_tiny_model_with_loop_shape_infered.onnx");
  auto converted = Edit("loop_to_scan", original);
  ASSERT_TRUE(converted.ok()) << converted.message();
  for (int64_t seq : {1, 30}) {
    NamedTensors in{{"input", RandomTensor({seq, 1, 10}, 3)},
                    {"hi0", RandomTensor({4, 1, 20}, 4)},
                    {"ci0", RandomTensor({4, 1, 20}, 5)}};
    ExpectSameOutputs(original, *converted, in, 0.0);
  }
}

TEST(LoopToScan, InconvertibleLoopIsAnErrorOrKeptWithWarning) {
  auto original = Load(kLoopDir + "nuphar_onnx_test_loop11_inconvertible_loop.onnx");
  auto refused = Edit("loop_to_scan", original);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("Loop"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("cond"), std::string::npos) << refused.message();

  std::vector<std::string> warnings;
  EditorOptions keep;
  keep.keep_unconvertible_loop_ops = true;
  keep.log = [&](const std::string& line) { warnings.push_back(line); };
  auto kept = Edit("loop_to_scan", original, keep);
  ASSERT_TRUE(kept.ok()) << kept.message();
  EXPECT_EQ(CountOps(kept->graph(), "Loop"), 1);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("cannot be converted"), std::string::npos);
  EXPECT_EQ(kept->graph().node_size(), original.graph().node_size());  // nothing removed (B14)
}

// ---- gemm_to_matmul ----

onnx::ModelProto GemmModel(float alpha, float beta, int64_t ta, int64_t tb, bool with_c, bool shared_weight) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* op = m.add_opset_import();
  op->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("gemm_model");
  NameTable names;
  NodeBuilder b(g, &names, 13);
  b.AddValueInfo("A", DType::kFloat, {DimSpec::Of(ta ? 3 : 2), DimSpec::Of(ta ? 2 : 3)}, g->mutable_input());
  std::vector<float> w(12);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.1f * static_cast<float>(i) - 0.5f;
  b.Const<float>(tb ? std::vector<int64_t>{4, 3} : std::vector<int64_t>{3, 4}, w, "Wg");
  b.Const<float>({4}, {0.1f, -0.2f, 0.3f, 0.4f}, "Cg");
  auto& gemm = b.Add("Gemm", with_c ? std::vector<std::string>{"A", "Wg", "Cg"} : std::vector<std::string>{"A", "Wg"},
                     {"Y"});
  SetAttr(gemm, "alpha", alpha);
  SetAttr(gemm, "beta", beta);
  SetAttr(gemm, "transA", ta);
  SetAttr(gemm, "transB", tb);
  b.AddValueInfo("Y", DType::kFloat, {DimSpec::Of(2), DimSpec::Of(4)}, g->mutable_output());
  if (shared_weight) {
    b.Op("Identity", {"Wg"}, "W_copy");
    b.AddValueInfo("W_copy", DType::kFloat, {DimSpec::Of(tb ? 4 : 3), DimSpec::Of(tb ? 3 : 4)}, g->mutable_output());
  }
  return m;
}

TEST(GemmToMatMul, EveryAttributeCombination) {
  for (float alpha : {1.f, 0.5f})
    for (float beta : {1.f, 2.f, 0.f})
      for (int64_t ta : {0, 1})
        for (int64_t tb : {0, 1})
          for (bool with_c : {true, false}) {
            SCOPED_TRACE(::testing::Message() << alpha << " " << beta << " " << ta << tb << " c=" << with_c);
            auto original = GemmModel(alpha, beta, ta, tb, with_c, false);
            auto converted = Edit("gemm_to_matmul", original);
            ASSERT_TRUE(converted.ok()) << converted.message();
            EXPECT_EQ(CountOps(converted->graph(), "Gemm"), 0);
            EXPECT_EQ(CountOps(converted->graph(), "MatMul"), 1);
            EXPECT_EQ(CountOps(converted->graph(), "Add"), with_c && beta != 0.f ? 1 : 0);
            EXPECT_EQ(FullCheck(*converted), "");
            ExpectSameOutputs(original, *converted, {{"A", RandomTensor({ta ? 3 : 2, ta ? 2 : 3}, 9)}});
          }
}

TEST(GemmToMatMul, KeepsWeightThatOthersRead) {
  auto original = GemmModel(1.f, 1.f, 0, 1, true, true);
  auto converted = Edit("gemm_to_matmul", original);
  ASSERT_TRUE(converted.ok()) << converted.message();
  std::set<std::string> inits;
  for (const auto& t : converted->graph().initializer()) inits.insert(t.name());
  EXPECT_TRUE(inits.count("Wg"));        // still read by Identity (B18)
  EXPECT_TRUE(inits.count("Wg_trans"));
  auto alone = Edit("gemm_to_matmul", GemmModel(1.f, 1.f, 0, 1, true, false));
  ASSERT_TRUE(alone.ok());
  for (const auto& t : alone->graph().initializer()) EXPECT_NE(t.name(), "Wg");
}

// ---- opt_inproj ----

// Scan body: c = Concat(x_t, h) (or (h, x_t)); h' = Tanh(MatMul(c, Wc)); y = Identity(h').
onnx::ModelProto ScanConcatModel(bool x_first, int64_t concat_axis) {
  const int64_t I = 3, H = 5, B = 2;
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(11);
  auto* g = m.mutable_graph();
  g->set_name("scan_model");
  NameTable names;
  NodeBuilder b(g, &names, 11);
  b.AddValueInfo("X", DType::kFloat, {DimSpec::Sym("seq"), DimSpec::Of(B), DimSpec::Of(I)}, g->mutable_input());
  std::vector<float> w((I + H) * H), h0(B * H, 0.25f);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.05f * static_cast<float>(i % 17) - 0.4f;
  b.Const<float>({I + H, H}, w, "Wc");
  b.Const<float>({B, H}, h0, "h0");
  onnx::GraphProto body;
  body.set_name("body");
  NodeBuilder bb(&body, &names, 11);
  bb.AddValueInfo("h", DType::kFloat, {DimSpec::Of(B), DimSpec::Of(H)}, body.mutable_input());
  bb.AddValueInfo("x_t", DType::kFloat, {DimSpec::Of(B), DimSpec::Of(I)}, body.mutable_input());
  auto& concat = bb.Add("Concat", x_first ? std::vector<std::string>{"x_t", "h"} : std::vector<std::string>{"h", "x_t"},
                        {"c"});
  SetAttr(concat, "axis", concat_axis);
  bb.Op("Tanh", {bb.Op("MatMul", {"c", "Wc"})}, "h_new");
  bb.Op("Identity", {"h_new"}, "y");
  bb.AddValueInfo("h_new", DType::kFloat, {DimSpec::Of(B), DimSpec::Of(H)}, body.mutable_output());
  bb.AddValueInfo("y", DType::kFloat, {DimSpec::Of(B), DimSpec::Of(H)}, body.mutable_output());
  auto& scan = b.Add("Scan", {"h0", "X"}, {"h_last", "Y"});
  SetAttr(scan, "body", std::move(body));
  SetAttr(scan, "num_scan_inputs", static_cast<int64_t>(1));
  SetAttr(scan, "scan_input_axes", std::vector<int64_t>{0});
  b.AddValueInfo("h_last", DType::kFloat, {DimSpec::Of(B), DimSpec::Of(H)}, g->mutable_output());
  b.AddValueInfo("Y", DType::kFloat, {DimSpec::Sym("seq"), DimSpec::Of(B), DimSpec::Of(H)}, g->mutable_output());
  return m;
}

TEST(OptInproj, HoistsInputProjectionForBothConcatOrders) {
  for (bool x_first : {true, false}) {
    auto original = ScanConcatModel(x_first, -1);
    auto converted = Edit("opt_inproj", original);
    ASSERT_TRUE(converted.ok()) << converted.message();
    EXPECT_EQ(CountOps(converted->graph(), "Concat"), 0);
    EXPECT_EQ(CountOps(converted->graph(), "MatMul"), 2);  // one outside, one in the body
    const onnx::NodeProto* scan = nullptr;
    for (const auto& n : converted->graph().node())
      if (n.op_type() == "Scan") scan = &n;
    ASSERT_NE(scan, nullptr);
    EXPECT_NE(FindAttr(*scan, "scan_input_axes"), nullptr);  // B8c
    EXPECT_EQ(FullCheck(*converted), "");
    ExpectSameOutputs(original, *converted, {{"X", RandomTensor({4, 2, 3}, 2)}});
  }
}

TEST(OptInproj, LeavesOtherConcatsAlone) {
  auto original = ScanConcatModel(true, 0);  // axis 0 is not the feature axis
  auto converted = Edit("opt_inproj", original);
  ASSERT_TRUE(converted.ok());
  EXPECT_EQ(CountOps(converted->graph(), "Concat"), 1);  // kept, not dropped (B8a)
}

// ---- remove_initializers_from_inputs ----

TEST(RemoveInitializersFromInputs, DropsBackedInputsAndRaisesIr) {
  auto m = GemmModel(1.f, 1.f, 0, 0, true, false);
  m.set_ir_version(3);
  for (const char* name : {"Wg", "Cg"}) {
    auto* vi = m.mutable_graph()->add_input();
    vi->set_name(name);
    vi->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  EditorOptions options;
  options.remain_inputs = {"Cg"};
  auto converted = Edit("remove_initializers_from_inputs", m, options);
  ASSERT_TRUE(converted.ok());
  std::vector<std::string> inputs;
  for (const auto& vi : converted->graph().input()) inputs.push_back(vi.name());
  EXPECT_EQ(inputs, (std::vector<std::string>{"A", "Cg"}));
  EXPECT_EQ(converted->ir_version(), 4);
  ExpectSameOutputs(m, *converted, {{"A", RandomTensor({2, 3}, 1)}});
}

// ---- the CLI ----

int RunTool(const std::string& args) {
  const std::string cmd = std::string(NUPHAR_BIN_DIR) + "/model_editor " + args + " >/dev/null 2>&1";
  return WEXITSTATUS(std::system(cmd.c_str()));
}

TEST(ModelEditorCli, ErrorWritesNothingAndExitsNonZero) {
  const auto dir = std::filesystem::temp_directory_path() / "nuphar_editor_cli_test";
  std::filesystem::create_directories(dir);
  const std::string out = (dir / "out.onnx").string();
  std::filesystem::remove(out);
  EXPECT_NE(RunTool("--mode loop_to_scan --input " + kLoopDir + "nuphar_onnx_test_loop11_inconvertible_loop.onnx" +
                    " --output " + out),
            0);
  EXPECT_FALSE(std::filesystem::exists(out));
  EXPECT_EQ(RunTool("--mode=loop_to_scan --keep_unconvertible_loop_ops --input " + kLoopDir +
                    "nuphar_onnx_test_loop11_inconvertible_loop.onnx --output=" + out),
            0);
  EXPECT_TRUE(std::filesystem::exists(out));
  EXPECT_NE(RunTool("--mode no_such_mode --input x --output y"), 0);
  EXPECT_NE(RunTool("--mode to_scan --input " + (dir / "missing.onnx").string() + " --output " + out), 0);
  EXPECT_EQ(RunTool("--help"), 0);
}

}  // namespace
}  // namespace nuphar::editor::testing
