// Bad input to the runtime tools gives one line naming the cause and a non-zero exit code
// (issue 2, acceptance 4): truncated model, cycle, missing input, wrong shape or dtype, unknown op.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "graph/model_io.h"
#include "runtime/core/tensor.h"
#include "tests/modellib/model_builder.h"
#include "tools/common/tensor_files.h"

namespace nuphar {
namespace {

namespace fs = std::filesystem;
using testing::AddNode;
using testing::MakeModel;
using testing::MakeValueInfo;

struct CommandResult {
  int exit_code;
  std::string output;  // stdout and stderr
};

CommandResult RunCommand(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  std::array<char, 4096> buf{};
  while (p && fgets(buf.data(), buf.size(), p)) out += buf.data();
  const int status = p ? pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

class CliErrorsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nuphar_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // y = Identity(x) with x: float[2, 3]
  onnx::ModelProto SmallModel() {
    onnx::GraphProto g;
    g.set_name("small");
    *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{2}, int64_t{3}});
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{2}, int64_t{3}});
    AddNode(g, "Identity", {"x"}, {"y"}, "copy");
    return MakeModel(g, 13);
  }
  std::string Save(const onnx::ModelProto& m, const std::string& name) {
    const std::string path = (dir_ / name).string();
    EXPECT_TRUE(SaveModel(m, path).ok());
    return path;
  }
  CommandResult PerfTest(const std::string& args) {
    return RunCommand(std::string(NUPHAR_BIN_DIR) + "/perf_test -r 1 --warmup 0 " + args);
  }
  static int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }

  fs::path dir_;
};

TEST_F(CliErrorsTest, GoodModelRuns) {
  auto r = PerfTest(Save(SmallModel(), "ok.onnx"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"median_ms\""), std::string::npos) << r.output;
}

TEST_F(CliErrorsTest, TruncatedModel) {
  const std::string path = Save(SmallModel(), "full.onnx");
  std::string bytes = *ReadFile(path);
  const std::string cut = (dir_ / "truncated.onnx").string();
  std::ofstream(cut, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  auto r = PerfTest(cut);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("truncated.onnx"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("not a valid ONNX model"), std::string::npos) << r.output;
}

TEST_F(CliErrorsTest, MissingFileAndNotAModel) {
  auto missing = PerfTest((dir_ / "nope.onnx").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("does not exist"), std::string::npos) << missing.output;
  const std::string text = (dir_ / "text.onnx").string();
  std::ofstream(text) << "hello, I am not a model\n";
  auto r = PerfTest(text);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.output), 1) << r.output;
}

TEST_F(CliErrorsTest, Cycle) {
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{1}});
  *g.add_output() = MakeValueInfo("b", DType::kFloat, {int64_t{1}});
  AddNode(g, "Identity", {"b"}, {"a"}, "loop_a");
  AddNode(g, "Identity", {"a"}, {"b"}, "loop_b");
  auto r = PerfTest(Save(MakeModel(g, 13), "cycle.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("cycle"), std::string::npos) << r.output;
}

TEST_F(CliErrorsTest, UnknownOp) {
  auto m = SmallModel();
  m.mutable_graph()->mutable_node(0)->set_op_type("Frobnicate");
  auto r = PerfTest(Save(m, "unknown_op.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("node 'copy' (Frobnicate)"), std::string::npos) << r.output;
}

TEST_F(CliErrorsTest, MissingInput) {
  auto m = SmallModel();
  *m.mutable_graph()->add_input() = MakeValueInfo("extra", DType::kFloat, {std::string("n")});
  auto r = PerfTest(Save(m, "needs_dims.onnx"));  // symbolic dim without --dims: cannot make the input
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(Lines(r.output), 1) << r.output;
  EXPECT_NE(r.output.find("'extra'"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("--dims n="), std::string::npos) << r.output;
}

TEST_F(CliErrorsTest, WrongInputShapeAndDtype) {
  const std::string model = Save(SmallModel(), "m.onnx");
  fs::create_directories(dir_ / "shape");
  ASSERT_TRUE(tools::WriteTensorBin((dir_ / "shape" / "x").string(), "x",
                                    Tensor::FromVector<float>({3, 2}, {1, 2, 3, 4, 5, 6}))
                  .ok());
  auto shape = PerfTest("--input-dir " + (dir_ / "shape").string() + " " + model);
  EXPECT_EQ(shape.exit_code, 1);
  EXPECT_EQ(Lines(shape.output), 1) << shape.output;
  EXPECT_NE(shape.output.find("input 'x' has shape [3,2], dim 0 must be 2"), std::string::npos) << shape.output;

  fs::create_directories(dir_ / "dtype");
  ASSERT_TRUE(tools::WriteTensorBin((dir_ / "dtype" / "x").string(), "x",
                                    Tensor::FromVector<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6}))
                  .ok());
  auto dtype = PerfTest("--input-dir " + (dir_ / "dtype").string() + " " + model);
  EXPECT_EQ(dtype.exit_code, 1);
  EXPECT_EQ(Lines(dtype.output), 1) << dtype.output;
  EXPECT_NE(dtype.output.find("input 'x' has type int64, the model expects float"), std::string::npos) << dtype.output;
}

TEST_F(CliErrorsTest, BadFlagsAreUsageErrors) {
  auto r = PerfTest("--dims seq=abc " + Save(SmallModel(), "m.onnx"));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("--dims entry 'seq=abc'"), std::string::npos) << r.output;
  auto usage = RunCommand(std::string(NUPHAR_BIN_DIR) + "/perf_test --no-such-flag x.onnx");
  EXPECT_NE(usage.exit_code, 0);
}

// create_shared (runtime/jit/create_shared.h): a missing directory, a directory without objects,
// a corrupt object, a missing model are errors (exit 1) naming the file, and nothing is written; no
// --input_dir is a usage error (exit 2). The linking itself is tested in runtime_jit_test.
TEST_F(CliErrorsTest, CreateSharedErrors) {
  const std::string tool = std::string(NUPHAR_BIN_DIR) + "/create_shared";
  EXPECT_EQ(RunCommand(tool).exit_code, 2);
  auto missing = RunCommand(tool + " --input_dir " + (dir_ / "nope").string());
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.output.find("nope"), std::string::npos) << missing.output;
  auto empty = RunCommand(tool + " -c " + dir_.string());
  EXPECT_EQ(empty.exit_code, 1);
  EXPECT_NE(empty.output.find("no kernel objects"), std::string::npos) << empty.output;
  std::ofstream(dir_ / "k_0123.o") << "not an object";
  auto corrupt = RunCommand(tool + " --input_dir " + dir_.string() + " -o lib.so");
  EXPECT_EQ(corrupt.exit_code, 1);
  EXPECT_NE(corrupt.output.find("k_0123.o"), std::string::npos) << corrupt.output;
  auto no_model = RunCommand(tool + " --input_dir " + dir_.string() + " --input_model " + (dir_ / "m.onnx").string());
  EXPECT_EQ(no_model.exit_code, 1);
  EXPECT_FALSE(fs::exists(dir_ / "lib.so"));
  EXPECT_FALSE(fs::exists(dir_ / "jit.so"));
}

}  // namespace
}  // namespace nuphar
