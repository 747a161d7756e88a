// The command-line contract of every tool, tried as a new user would (issue 14): one exit-code
// mapping (0 ok, 1 error, 2 bad command line, 3 incomplete), argparse-style unique prefixes,
// --input-dir and --dims that never guess, outputs written through symlinks with their mode
// kept, and a quantizer run that quantized nothing reported as such.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "graph/model_io.h"
#include "runtime/core/tensor.h"
#include "tests/modellib/model_builder.h"
#include "tools/common/cli.h"
#include "tools/common/tensor_files.h"

namespace nuphar {
namespace {

namespace fs = std::filesystem;
using testing::AddNode;
using testing::MakeModel;
using testing::MakeValueInfo;

struct CommandResult {
  int exit_code;  // -1 when the process died on a signal
  std::string output;
};

CommandResult Tool(const std::string& tool, const std::string& args) {
  std::string out;
  FILE* p = popen((std::string(NUPHAR_BIN_DIR) + "/" + tool + " " + args + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  while (p && fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int status = p ? pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

bool Has(const CommandResult& r, const std::string& s) { return r.output.find(s) != std::string::npos; }

class CliContractTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nuphar_contract_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string P(const std::string& name) const { return (dir_ / name).string(); }

  // y = Relu(x) with x: float[n, 3]
  std::string SmallModel(const std::string& name = "m.onnx") {
    onnx::GraphProto g;
    g.set_name("small");
    *g.add_input() = MakeValueInfo("x", DType::kFloat, {std::string("n"), int64_t{3}});
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {std::string("n"), int64_t{3}});
    AddNode(g, "Relu", {"x"}, {"y"}, "relu");
    EXPECT_TRUE(SaveModel(MakeModel(g, 13), P(name)).ok());
    return P(name);
  }
  // y = MatMul(x, W) with W an initializer: something the quantizer quantizes.
  std::string MatMulModel() {
    onnx::GraphProto g;
    g.set_name("mm");
    *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{1}, int64_t{4}});
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{1}, int64_t{2}});
    auto* w = g.add_initializer();
    w->set_name("W");
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(4);
    w->add_dims(2);
    for (int i = 0; i < 8; ++i) w->add_float_data(0.25f * static_cast<float>(i) - 1.0f);
    AddNode(g, "MatMul", {"x", "W"}, {"y"}, "mm");
    EXPECT_TRUE(SaveModel(MakeModel(g, 13), P("mm.onnx")).ok());
    return P("mm.onnx");
  }
  // A float LSTM whose weights are Constant nodes, as exporters write it: nothing to quantize
  // until model_editor --mode to_scan has run.
  std::string FloatLstmModel() {
    constexpr int64_t kI = 2, kH = 3;
    onnx::GraphProto g;
    g.set_name("lstm");
    *g.add_input() = MakeValueInfo("X", DType::kFloat, {std::string("seq"), int64_t{1}, kI});
    *g.add_output() = MakeValueInfo("Y", DType::kFloat, {std::string("seq"), int64_t{1}, int64_t{1}, kH});
    for (auto [name, cols] : {std::pair<const char*, int64_t>{"W", kI}, {"R", kH}}) {
      auto& c = AddNode(g, "Constant", {}, {name}, std::string(name) + "_const");
      auto* a = c.add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      auto* t = a->mutable_t();
      t->set_data_type(onnx::TensorProto::FLOAT);
      for (int64_t d : {int64_t{1}, 4 * kH, cols}) t->add_dims(d);
      for (int64_t i = 0; i < 4 * kH * cols; ++i) t->add_float_data(0.01f * static_cast<float>(i));
    }
    auto& lstm = AddNode(g, "LSTM", {"X", "W", "R"}, {"Y"}, "lstm");
    testing::SetAttr(lstm, "hidden_size", kH);
    EXPECT_TRUE(SaveModel(MakeModel(g, 13), P("lstm.onnx")).ok());
    return P("lstm.onnx");
  }

  fs::path dir_;
};

// ---- exit codes: one mapping for every tool -------------------------------------------------

TEST_F(CliContractTest, BadCommandLinesExit2AndHelpExits0InEveryTool) {
  for (const char* tool : {"model_editor", "symbolic_shape_infer", "model_quantizer", "perf_test", "compare_models",
                           "onnx_test_runner", "rnn_benchmark"}) {
    auto bad = Tool(tool, "--no-such-flag");
    EXPECT_EQ(bad.exit_code, 2) << tool << ": " << bad.output;
    auto help = Tool(tool, "--help");
    EXPECT_EQ(help.exit_code, 0) << tool << ": " << help.output;
  }
  EXPECT_EQ(Tool("perf_test", "-r 0 x.onnx").exit_code, 2);         // a failed check
  EXPECT_EQ(Tool("model_quantizer", "--input a.onnx").exit_code, 2);  // a required option missing
}

TEST_F(CliContractTest, InputErrorsExit1InEveryTool) {
  const std::string missing = P("missing.onnx");
  EXPECT_EQ(Tool("model_editor", "--input " + missing + " --output " + P("o.onnx") + " --mode to_scan").exit_code, 1);
  EXPECT_EQ(Tool("symbolic_shape_infer", "--input " + missing).exit_code, 1);
  EXPECT_EQ(Tool("model_quantizer", "--input " + missing + " --output " + P("o.onnx")).exit_code, 1);
  EXPECT_EQ(Tool("perf_test", missing).exit_code, 1);
  EXPECT_EQ(Tool("compare_models", missing + " " + missing).exit_code, 1);
  EXPECT_FALSE(fs::exists(P("o.onnx")));
}

TEST_F(CliContractTest, OnnxTestRunnerBadFilterIsAUsageError) {
  auto r = Tool("onnx_test_runner", "--filter '[' " + dir_.string());
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(Has(r, "--filter '[' is not a valid regular expression")) << r.output;
}

// ---- --input-dir, --dims, what perf_test reports ------------------------------------------

TEST_F(CliContractTest, InputDirWithoutMatchingFilesIsAnErrorNamingTheDirectory) {
  const std::string model = SmallModel();
  fs::create_directories(P("empty"));
  for (const char* tool : {"perf_test -r 1 --warmup 0 --dims n=2", "compare_models --dims n=2"}) {
    const std::string models = std::string(tool).starts_with("perf") ? model : model + " " + model;
    auto empty = Tool(tool, "--input-dir " + P("empty") + " " + models);
    EXPECT_EQ(empty.exit_code, 1) << empty.output;
    EXPECT_TRUE(Has(empty, P("empty"))) << empty.output;
    EXPECT_TRUE(Has(empty, "holds no tensor file")) << empty.output;
  }
  fs::create_directories(P("other"));
  ASSERT_TRUE(tools::WriteTensorBin(P("other/z"), "z", Tensor::FromVector<float>({1}, {1.f})).ok());
  auto other = Tool("perf_test", "-r 1 --warmup 0 --input-dir " + P("other") + " " + model);
  EXPECT_EQ(other.exit_code, 1) << other.output;
  EXPECT_TRUE(Has(other, P("other"))) << other.output;
  EXPECT_TRUE(Has(other, "has no file for input 'x'")) << other.output;
}

TEST_F(CliContractTest, TheJsonSaysWhereEachInputCameFrom) {
  const std::string model = SmallModel();
  fs::create_directories(P("in"));
  ASSERT_TRUE(tools::WriteTensorBin(P("in/x"), "x", Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6})).ok());
  auto file = Tool("perf_test", "-r 1 --warmup 0 --input-dir " + P("in") + " " + model);
  EXPECT_EQ(file.exit_code, 0) << file.output;
  EXPECT_TRUE(Has(file, "\"source\":\"file " + P("in/x.bin") + "\"")) << file.output;
  auto random = Tool("perf_test", "-r 1 --warmup 0 --seed 7 --dims n=2 " + model);
  EXPECT_EQ(random.exit_code, 0) << random.output;
  EXPECT_TRUE(Has(random, "\"source\":\"random (seed 7)\"")) << random.output;
  auto cmp = Tool("compare_models", "--json --dims n=2 " + model + " " + model);
  EXPECT_EQ(cmp.exit_code, 0) << cmp.output;
  EXPECT_TRUE(Has(cmp, "\"source\":\"random (seed 0)\"")) << cmp.output;
}

TEST_F(CliContractTest, UnknownDimNamesAreErrorsAndMissingDimsAreListedAtOnce) {
  auto unknown = Tool("perf_test", "-r 1 --warmup 0 --dims n=2,bogus=3 " + SmallModel());
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
  EXPECT_TRUE(Has(unknown, "--dims 'bogus': no input of the model has such a dim (settable dims: n, x:0)"))
      << unknown.output;

  onnx::GraphProto g;
  g.set_name("two");
  *g.add_input() = MakeValueInfo("a", DType::kFloat, {std::string("seq"), int64_t{2}});
  *g.add_input() = MakeValueInfo("b", DType::kFloat, {std::string("batch"), std::string("")});
  *g.add_output() = MakeValueInfo("c", DType::kFloat, {std::string("seq"), int64_t{2}});
  AddNode(g, "Identity", {"a"}, {"c"}, "id");
  ASSERT_TRUE(SaveModel(MakeModel(g, 13), P("two.onnx")).ok());
  auto missing = Tool("perf_test", "-r 1 --warmup 0 " + P("two.onnx"));
  EXPECT_EQ(missing.exit_code, 1) << missing.output;
  EXPECT_TRUE(Has(missing, "input 'a' dim 0 ('seq'), input 'b' dim 0 ('batch'), input 'b' dim 1 ('') have no value; "
                           "pass --dims seq=N,batch=N,b:1=N"))
      << missing.output;
}

TEST_F(CliContractTest, PerfTestReportsTheEngineAndThreadsThatRan) {
  auto r = Tool("perf_test", "-r 2 --warmup 0 -x 4 -e jit --dims n=2 " + SmallModel());
  EXPECT_EQ(r.exit_code, 0) << r.output;
  // A Relu has no product to split and no second node to run beside: one thread ran; the JIT
  // generated its kernel.
  EXPECT_TRUE(Has(r, "\"engine\":\"jit\"")) << r.output;
  EXPECT_TRUE(Has(r, "\"engine_requested\":\"jit\"")) << r.output;
  EXPECT_TRUE(Has(r, "\"threads\":1")) << r.output;
  EXPECT_TRUE(Has(r, "\"threads_requested\":4")) << r.output;
}

TEST_F(CliContractTest, TheTensorBudgetIsASettingAndNamesTheNode) {
  const std::string model = SmallModel();
  auto small = Tool("perf_test", "-e reference -r 1 --warmup 0 --dims n=100 --settings nuphar_max_tensor_bytes:1000 " + model);
  EXPECT_EQ(small.exit_code, 1) << small.output;
  EXPECT_TRUE(Has(small, "node 'relu' (Relu): needs a tensor of 1200 bytes, above nuphar_max_tensor_bytes (1000"))
      << small.output;
  // On the JIT the node is the partition that took the Relu, named after it.
  auto jit = Tool("perf_test", "-r 1 --warmup 0 --dims n=100 --settings nuphar_max_tensor_bytes:1000 " + model);
  EXPECT_EQ(jit.exit_code, 1) << jit.output;
  EXPECT_TRUE(Has(jit, "node 'relu' (JitKernel): needs a tensor of 1200 bytes")) << jit.output;
  auto off = Tool("perf_test", "-r 1 --warmup 0 --dims n=100 --settings nuphar_max_tensor_bytes:0 " + model);
  EXPECT_EQ(off.exit_code, 0) << off.output;
  auto bad = Tool("perf_test", "-r 1 --warmup 0 --dims n=1 --settings nuphar_max_loop_iterations:-1 " + model);
  EXPECT_EQ(bad.exit_code, 1) << bad.output;
  EXPECT_TRUE(Has(bad, "nuphar_max_loop_iterations must not be negative")) << bad.output;
}

// ---- outputs -------------------------------------------------------------------------------

TEST_F(CliContractTest, OutputNamingADirectoryOrNothingIsAClearError) {
  const std::string model = SmallModel();
  fs::create_directories(P("outdir"));
  auto dir = Tool("model_editor", "--input " + model + " --output " + P("outdir") + " --mode remove_initializers_from_inputs");
  EXPECT_EQ(dir.exit_code, 1) << dir.output;
  EXPECT_TRUE(Has(dir, "is a directory; the output must name a file")) << dir.output;
  EXPECT_FALSE(Has(dir, "Success")) << dir.output;
  auto empty = Tool("symbolic_shape_infer", "--input " + model + " --output ''");
  // An empty --output means "no output" to symbolic_shape_infer (the flag is optional).
  EXPECT_EQ(empty.exit_code, 0) << empty.output;
  auto q = Tool("model_quantizer", "--input " + MatMulModel() + " --output ''");
  EXPECT_EQ(q.exit_code, 1) << q.output;
  EXPECT_TRUE(Has(q, "no output file given")) << q.output;
  EXPECT_TRUE(fs::is_empty(P("outdir")));
}

TEST_F(CliContractTest, OutputThroughASymlinkKeepsTheLinkAndTheMode) {
  const std::string model = SmallModel();
  fs::create_directories(P("real"));
  { std::ofstream(P("real/target.onnx")) << "old"; }
  ::chmod(P("real/target.onnx").c_str(), 0640);
  fs::create_symlink("real/target.onnx", P("link.onnx"));
  auto r = Tool("symbolic_shape_infer", "--input " + model + " --output " + P("link.onnx"));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(P("link.onnx")));
  onnx::ModelProto out;
  EXPECT_TRUE(LoadModel(P("real/target.onnx"), &out).ok());
  struct stat st {};
  ASSERT_EQ(::stat(P("real/target.onnx").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  // No temporary file left beside the link or the target.
  EXPECT_EQ(std::distance(fs::directory_iterator(P("real")), fs::directory_iterator()), 1);
}

TEST_F(CliContractTest, ExternalDataThroughASymlinkLandsBesideTheTarget) {
  const std::string model = SmallModel();
  fs::create_directories(P("real"));
  { std::ofstream(P("real/t.onnx")) << "old"; }
  fs::create_symlink("real/t.onnx", P("link.onnx"));
  auto r = Tool("symbolic_shape_infer", "--input " + model + " --output " + P("link.onnx") +
                                             " --save_as_external_data --external_data_size_threshold 0");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(fs::is_symlink(P("link.onnx")));
  EXPECT_TRUE(fs::exists(P("real/t.onnx.data")));  // the model names its side file relative to itself
  EXPECT_FALSE(fs::exists(P("link.onnx.data")));
  onnx::ModelProto out;
  EXPECT_TRUE(LoadModel(P("link.onnx"), &out).ok());
}

// ---- model_quantizer: nothing quantized ---------------------------------------------------

TEST_F(CliContractTest, QuantizerThatQuantizedNothingSaysWhyAndWritesNothing) {
  auto lstm = Tool("model_quantizer", "--input " + FloatLstmModel() + " --output " + P("q.onnx"));
  EXPECT_EQ(lstm.exit_code, 3) << lstm.output;
  EXPECT_TRUE(Has(lstm, "quantized nothing")) << lstm.output;
  EXPECT_TRUE(Has(lstm, "run model_editor --mode to_scan first")) << lstm.output;
  EXPECT_FALSE(Has(lstm, "Done!")) << lstm.output;
  EXPECT_FALSE(fs::exists(P("q.onnx")));
  auto ok = Tool("model_quantizer", "--input " + MatMulModel() + " --output " + P("q.onnx"));
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_TRUE(fs::exists(P("q.onnx")));
}

// ---- argparse-style prefixes --------------------------------------------------------------

TEST_F(CliContractTest, UniquePrefixesOfLongOptionsWorkAsInArgparse) {
  const std::string model = SmallModel();
  auto editor = Tool("model_editor", "--in " + model + " --out=" + P("e.onnx") + " --mode remove_initializers_from_inputs");
  EXPECT_EQ(editor.exit_code, 0) << editor.output;
  EXPECT_TRUE(fs::exists(P("e.onnx")));
  auto si = Tool("symbolic_shape_infer", "--inp " + model + " --out " + P("s.onnx") + " --auto");
  EXPECT_EQ(si.exit_code, 0) << si.output;
  // (--in would be ambiguous there: --input, --int_max; argparse refuses it too.)
  // --only reaches --only_for_scan: a MatMul outside any Scan is then left float.
  auto q = Tool("model_quantizer", "--in " + MatMulModel() + " --out " + P("q.onnx") + " --only");
  EXPECT_EQ(q.exit_code, 3) << q.output;
  EXPECT_TRUE(Has(q, "--only_for_scan quantizes only MatMuls inside Scan/Loop bodies")) << q.output;
  auto ambiguous = Tool("perf_test", "--pro x " + model);
  EXPECT_EQ(ambiguous.exit_code, 2) << ambiguous.output;
  EXPECT_TRUE(Has(ambiguous, "ambiguous option: --pro could match --profile, --profile-summary")) << ambiguous.output;
}

TEST(ExpandLongOptionPrefixes, ExactUniqueAmbiguousAndAfterDoubleDash) {
  const std::vector<std::string> names = {"input", "output", "only_for_scan", "auto_merge", "auto"};
  auto r = tools::ExpandLongOptionPrefixes({"--in", "a", "--out=b", "--only", "--auto", "-v", "--", "--in"}, names);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(*r, (std::vector<std::string>{"--input", "a", "--output=b", "--only_for_scan", "--auto", "-v", "--", "--in"}));
  auto amb = tools::ExpandLongOptionPrefixes({"--au"}, names);
  ASSERT_FALSE(amb.ok());
  EXPECT_NE(amb.message().find("--au could match --auto_merge, --auto"), std::string::npos) << amb.message();
  auto unknown = tools::ExpandLongOptionPrefixes({"--zzz"}, names);
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ((*unknown)[0], "--zzz");
}

}  // namespace
}  // namespace nuphar
