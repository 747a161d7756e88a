// --dims INPUT:AXIS=VALUE (issue 11): dims without a name (Silero VAD v5's inputs are [?, ?])
// are set per input and axis, next to name=value; a missing one is named in the error.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace {

struct Result {
  int exit_code;
  std::string output;
};

Result RunCommand(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  char buf[4096];
  while (p && fgets(buf, sizeof(buf), p)) out += buf;
  const int status = p ? pclose(p) : -1;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

const std::string kPerfTest = std::string(NUPHAR_BIN_DIR) + "/perf_test";
const std::string kSileroV5 = std::string(NUPHAR_SHARED_DIR) + "/models/silero_vad_v5.onnx";

TEST(DimsSpecTest, InputAxisValuesSetUnnamedDims) {
  // Integer inputs are 1, so sr = 1 takes the model's 8 kHz branch: 256-sample frames.
  const Result r = RunCommand(kPerfTest + " -r 2 --warmup 0 --dims input:0=1,input:1=256 --dims state:1=1 " + kSileroV5);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("\"name\":\"input\",\"shape\":[1,256]"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"name\":\"state\",\"shape\":[2,1,128]"), std::string::npos) << r.output;
}

TEST(DimsSpecTest, AMissingUnnamedDimIsNamedInTheError) {
  const Result r = RunCommand(kPerfTest + " -r 1 --dims input:0=1 " + kSileroV5);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.output.find("input:1=N"), std::string::npos) << r.output;
}

}  // namespace
