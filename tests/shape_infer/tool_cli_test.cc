// symbolic_shape_infer CLI: exit codes (every tool's: 0 ok, 1 I/O, invalid model or opset < 7, 2 usage, 3 incomplete),
// no output written on failure, --save_partial, flag spellings (spec §1).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "graph/model_io.h"
#include "tests/shape_infer/shape_check.h"

namespace nuphar::testing {
namespace {

namespace fs = std::filesystem;
constexpr int32_t kFloat = onnx::TensorProto::FLOAT;

class ToolCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("shape_infer_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Save(ModelBuilder& b, const std::string& name) {
    std::string path = (dir_ / name).string();
    EXPECT_TRUE(SaveModel(b.model(), path).ok());
    return path;
  }
  int Run(const std::string& args) {
    std::string cmd = std::string(NUPHAR_BIN_DIR) + "/symbolic_shape_infer " + args + " >/dev/null 2>&1";
    int status = std::system(cmd.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  std::string Out(const std::string& name) { return (dir_ / name).string(); }
  fs::path dir_;
};

ModelBuilder ConcatModel() {
  ModelBuilder b(13);
  b.Input("x", kFloat, {"a", "s"}).Input("z", kFloat, {"b", "t"});
  AttrInt(b.Node("Concat", {"x", "z"}, {"y"}), "axis", 1);
  b.Output("y");
  return b;
}

TEST_F(ToolCli, ExitCodes) {
  auto ok_model = ConcatModel();
  std::string in = Save(ok_model, "concat.onnx");
  EXPECT_EQ(Run("--input " + in + " --output " + Out("o1.onnx")), 3);  // incomplete without auto_merge
  EXPECT_FALSE(fs::exists(Out("o1.onnx")));
  EXPECT_EQ(Run("--input " + in + " --output " + Out("o1.onnx") + " --save_partial " + Out("partial.onnx")), 3);
  EXPECT_TRUE(fs::exists(Out("partial.onnx")));
  EXPECT_EQ(Run("--input=" + in + " --output=" + Out("o2.onnx") + " --auto_merge --int_max 100000 --verbose=0"), 0);
  onnx::ModelProto out;
  ASSERT_TRUE(LoadModel(Out("o2.onnx"), &out).ok());
  EXPECT_EQ(ShapeStr(out.graph(), "y"), "a,s + t");
  EXPECT_EQ(Run("--input " + Out("missing.onnx")), 1);
  EXPECT_EQ(Run("--no_such_flag"), 2);
  ModelBuilder old(6);
  old.Input("x", kFloat, {"s"});
  old.Node("Relu", {"x"}, {"y"});
  old.Output("y");
  EXPECT_EQ(Run("--input " + Save(old, "old.onnx") + " --output " + Out("o3.onnx")), 1);
  EXPECT_FALSE(fs::exists(Out("o3.onnx")));
  ModelBuilder cyc(13);
  cyc.Input("x", kFloat, {"s"});
  cyc.Node("Add", {"x", "q"}, {"p"});
  cyc.Node("Relu", {"p"}, {"q"});
  cyc.Output("q");
  EXPECT_EQ(Run("--input " + Save(cyc, "cyc.onnx")), 1);
}

}  // namespace
}  // namespace nuphar::testing
