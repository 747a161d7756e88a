// model_quantizer CLI behaviour: the original's stdout lines, --flag=value, exit codes, clear
// errors on stderr, and no output file (or an untouched existing one) on any error.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "graph/model_io.h"

namespace {

namespace fs = std::filesystem;
const std::string kTool = NUPHAR_BIN_DIR "/model_quantizer";
const std::string kFixtures = NUPHAR_SHARED_DIR "/fixtures/quantizer/";

struct ToolRun {
  int exit_code = -1;
  std::string out, err;
};

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nuphar_quant_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  ToolRun Exec(const std::string& args) {
    const std::string err_file = (dir_ / "stderr.txt").string();
    const std::string cmd = kTool + " " + args + " 2>" + err_file;
    ToolRun r;
    FILE* p = ::popen(cmd.c_str(), "r");
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.err = Slurp(err_file);
    return r;
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }

  fs::path dir_;
};

TEST_F(CliTest, PrintsTheOriginalsLinesAndWritesTheModel) {
  const std::string out = Path("q.onnx");
  const ToolRun r = Exec("--input " + kFixtures + "lstm_scan.onnx --output=" + out + " --only_for_scan");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "input model: " + kFixtures + "lstm_scan.onnx\noutput model " + out +
                       "\nQuantize MatMul to MatMulInteger...\nDone!\n");
  onnx::ModelProto m;
  ASSERT_TRUE(nuphar::LoadModel(out, &m).ok());
  EXPECT_EQ(m.opset_import(1).domain(), "com.microsoft");
}

TEST_F(CliTest, ExportsQcfgJsonAfterTheModel) {
  const ToolRun r = Exec("--input " + kFixtures + "lstm_scan.onnx --output " + Path("q.onnx") +
                     " --export_qcfg_json --qcfg_json " + Path("cfg.json"));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(Slurp(Path("cfg.json")).find("\"layer_output_1_1_MatMul_59\": {"), std::string::npos);
}

TEST_F(CliTest, ExportWithoutQcfgJsonIsAnError) {
  const ToolRun r = Exec("--input " + kFixtures + "lstm_scan.onnx --output " + Path("q.onnx") + " --export_qcfg_json");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("--qcfg_json must be specified when --export_qcfg_json is used"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(Path("q.onnx")));
}

TEST_F(CliTest, BadQcfgLeavesExistingOutputUntouched) {
  std::ofstream(Path("q.onnx")) << "previous";
  std::ofstream(Path("bad.json")) << R"({"y": {"W": {}, "X": {}, "Symmetric": 0, "Typo": 1}})";
  const ToolRun r = Exec("--input " + kFixtures + "lstm_scan.onnx --output " + Path("q.onnx") + " --qcfg_json " +
                     Path("bad.json"));
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("unknown key \"Typo\""), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("bad.json"), std::string::npos) << r.err;
  EXPECT_EQ(Slurp(Path("q.onnx")), "previous");
}

TEST_F(CliTest, UsageErrors) {
  EXPECT_NE(Exec("--output " + Path("q.onnx")).exit_code, 0);  // --input is required
  const ToolRun r = Exec("--input " + kFixtures + "lstm_scan.onnx --output " + Path("q.onnx") + " --default_qcfg asymm4");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(fs::exists(Path("q.onnx")));
  const ToolRun missing = Exec("--input " + Path("nope.onnx") + " --output " + Path("q.onnx"));
  EXPECT_NE(missing.exit_code, 0);
  EXPECT_NE(missing.err.find("nope.onnx"), std::string::npos) << missing.err;
}

TEST_F(CliTest, VerboseExplainsSkippedMatMulsAndReportPrintsErrors) {
  const ToolRun r = Exec("--input " + kFixtures + "matmul_edges.onnx --output " + Path("q.onnx") + " --verbose --report");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: main: MatMul 'mm5_rank3_weight' left float: weight 'W3' has rank 3, not 2"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("main:mm3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("max_abs_err"), std::string::npos) << r.out;
}

}  // namespace
