// onnx_test_runner: runs ONNX backend test directories the way ONNX Runtime's runner does.
//
//   onnx_test_runner [-e reference] [-j N] [--filter REGEX] [--atol A --rtol R]
//                    [--expected FILE] [--write-expected FILE] [--timeout SEC] DIR...
//
// Each test runs in a forked child, so a crash or a hang is reported as that test's failure
// (signal or timeout) and the run goes on. With --expected, the run fails on any difference
// from the file: a failure not listed there, or a listed failure that now passes.
// Expected-results file: one test per line, "NAME  skip|fail  reason"; '#' starts a comment.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "tools/common/cli.h"
#include "tools/onnx_test_runner/backend_test.h"

namespace fs = std::filesystem;
using namespace nuphar;
using namespace nuphar::tools;

namespace {

struct ExpectedEntry {
  std::string status;  // "skip" or "fail"
  std::string reason;
};

Expected<std::map<std::string, ExpectedEntry>> ReadExpected(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Diag::File(path, "cannot open the expected-results file");
  std::map<std::string, ExpectedEntry> out;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    ++lineno;
    if (auto h = line.find('#'); h != std::string::npos) line = line.substr(0, h);
    std::istringstream ss(line);
    std::string name, status;
    if (!(ss >> name)) continue;
    if (!(ss >> status) || (status != "skip" && status != "fail"))
      return Diag::File(path, "line " + std::to_string(lineno) + ": expected 'NAME skip|fail reason'");
    std::string reason;
    std::getline(ss, reason);
    reason.erase(0, reason.find_first_not_of(" \t"));
    if (reason.empty()) return Diag::File(path, "line " + std::to_string(lineno) + ": '" + name + "' needs a reason");
    out[name] = {status, reason};
  }
  return out;
}

std::vector<fs::path> CollectTests(const std::vector<std::string>& roots, const std::regex& re) {
  std::vector<fs::path> tests;
  for (const auto& root : roots) {
    std::vector<fs::path> found;
    if (fs::exists(fs::path(root) / "model.onnx")) {
      found.push_back(root);
    } else if (fs::is_directory(root)) {
      for (const auto& e : fs::directory_iterator(root))
        if (fs::exists(e.path() / "model.onnx")) found.push_back(e.path());
    }
    std::sort(found.begin(), found.end());
    for (auto& f : found)
      if (std::regex_search(f.filename().string(), re)) tests.push_back(f);
  }
  return tests;
}

struct Outcome {
  bool passed = false;
  std::string message;
};

struct Running {
  pid_t pid;
  int fd;
  size_t index;
  std::chrono::steady_clock::time_point start;
};

// Forks a child that runs one test and writes "P" or "F<reason>" to a pipe.
Running Launch(const fs::path& dir, size_t index, const std::string& settings, const Tolerance& tol) {
  int fds[2];
  if (pipe(fds) != 0) {
    std::perror("pipe");
    std::exit(kExitError);
  }
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    Status s = RunBackendTest(dir.string(), settings, tol);
    std::string msg = s.ok() ? "P" : "F" + s.message();
    if (msg.size() > 2000) msg.resize(2000);
    ssize_t ignored = write(fds[1], msg.data(), msg.size());
    (void)ignored;
    _exit(0);
  }
  close(fds[1]);
  return {pid, fds[0], index, std::chrono::steady_clock::now()};
}

Outcome Collect(const Running& r, int wstatus, bool timed_out, double timeout) {
  std::string msg;
  char buf[4096];
  ssize_t n;
  while ((n = read(r.fd, buf, sizeof buf)) > 0) msg.append(buf, static_cast<size_t>(n));
  close(r.fd);
  if (timed_out) return {false, "timeout after " + std::to_string(static_cast<int>(timeout)) + " s"};
  if (WIFSIGNALED(wstatus)) return {false, std::string("crashed: signal ") + strsignal(WTERMSIG(wstatus))};
  if (msg.empty()) return {false, "the test process exited without a result"};
  if (msg[0] == 'P') return {true, ""};
  return {false, msg.substr(1)};
}

}  // namespace

int main(int argc, char** argv) {
  nuphar::tools::PrintDiagnosticsToStderr();
  CLI::App app{"Runs ONNX backend test directories (model.onnx + test_data_set_*) on the nuphar runtime."};
  std::string engine = "reference", filter, expected_path, write_expected;
  int jobs = 1, threads = 1;
  double timeout = 120;
  Tolerance tol;
  std::vector<std::string> dirs;
  app.add_option("-e,--engine", engine, "execution engine: reference, or jit (JIT where possible, reference elsewhere)")->check(CLI::IsMember({"reference", "jit"}));  // jit: JIT where possible, reference elsewhere
  app.add_option("-j,--jobs", jobs, "tests run in parallel")->check(CLI::Range(1, 64));
  app.add_option("-x,--threads", threads,
                 "threads of each test's session (nuphar_num_threads); above 1 every product that can be split is")
      ->check(CLI::Range(1, 256));
  app.add_option("--filter", filter, "run only tests whose name matches this regular expression");
  app.add_option("--atol", tol.atol, "absolute tolerance for floating outputs (default 1e-5)");
  app.add_option("--rtol", tol.rtol, "relative tolerance for floating outputs (default 1e-3)");
  app.add_option("--expected", expected_path, "expected-results file; the run fails on any difference from it");
  app.add_option("--write-expected", write_expected, "write an expected-results file listing every failure of this run");
  app.add_option("--timeout", timeout, "seconds before a test counts as hung (default 120)");
  app.add_option("dirs", dirs, "test directories, or directories that contain them")->required();
  if (int rc = ParseCommandLine(app, argc, argv); rc >= 0) return rc;

  std::map<std::string, ExpectedEntry> expected;
  if (!expected_path.empty()) expected = ExitOnErr("onnx_test_runner", ReadExpected(expected_path));
  const std::string settings = "nuphar_execution_mode:" + engine +
                               (threads > 1 ? ", nuphar_num_threads:" + std::to_string(threads) +
                                                  ", nuphar_parallel_min_workloads:1"
                                            : std::string());

  // A bad pattern is a bad command line: std::regex throws, and nothing above would catch it.
  std::regex filter_re;
  try {
    filter_re = std::regex(filter.empty() ? ".*" : filter);
  } catch (const std::regex_error& e) {
    std::fprintf(stderr, "onnx_test_runner: error: --filter '%s' is not a valid regular expression: %s\n",
                 filter.c_str(), e.what());
    return kExitUsage;
  }
  const auto tests = CollectTests(dirs, filter_re);
  if (tests.empty()) {
    std::fprintf(stderr, "onnx_test_runner: error: no test directories found\n");
    return kExitUsage;
  }
  std::vector<Outcome> outcomes(tests.size());
  std::vector<bool> skipped(tests.size(), false);
  std::vector<Running> running;
  size_t next = 0;
  auto report = [&](size_t i) {
    const std::string name = tests[i].filename().string();
    const auto& o = outcomes[i];
    auto it = expected.find(name);
    if (o.passed)
      std::printf("%s %s\n", it != expected.end() ? "UNEXPECTED-PASS" : "PASS", name.c_str());
    else
      std::printf("%s %s: %s\n", it != expected.end() ? "XFAIL" : "FAIL", name.c_str(), o.message.c_str());
    std::fflush(stdout);
  };
  while (next < tests.size() || !running.empty()) {
    while (next < tests.size() && static_cast<int>(running.size()) < jobs) {
      const std::string name = tests[next].filename().string();
      if (auto it = expected.find(name); it != expected.end() && it->second.status == "skip") {
        skipped[next] = true;
        std::printf("SKIP %s: %s\n", name.c_str(), it->second.reason.c_str());
        ++next;
        continue;
      }
      running.push_back(Launch(tests[next], next, settings, tol));
      ++next;
    }
    bool progressed = false;
    for (size_t r = 0; r < running.size();) {
      int wstatus = 0;
      pid_t done = waitpid(running[r].pid, &wstatus, WNOHANG);
      const double elapsed =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - running[r].start).count();
      bool timed_out = false;
      if (done == 0 && elapsed > timeout) {
        kill(running[r].pid, SIGKILL);
        waitpid(running[r].pid, &wstatus, 0);
        timed_out = true;
        done = running[r].pid;
      }
      if (done == running[r].pid) {
        outcomes[running[r].index] = Collect(running[r], wstatus, timed_out, timeout);
        report(running[r].index);
        running.erase(running.begin() + static_cast<long>(r));
        progressed = true;
      } else {
        ++r;
      }
    }
    if (!progressed && !running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }

  int passed = 0, failed = 0, skip = 0, unexpected_fail = 0, unexpected_pass = 0;
  std::ostringstream listing;
  for (size_t i = 0; i < tests.size(); ++i) {
    const std::string name = tests[i].filename().string();
    auto it = expected.find(name);
    if (skipped[i]) {
      ++skip;
      listing << name << " skip " << it->second.reason << "\n";
      continue;
    }
    if (outcomes[i].passed) {
      ++passed;
      if (it != expected.end()) ++unexpected_pass;
    } else {
      ++failed;
      if (it == expected.end()) ++unexpected_fail;
      std::string reason = it != expected.end() ? it->second.reason : outcomes[i].message;
      std::replace(reason.begin(), reason.end(), '\n', ' ');
      listing << name << " fail " << reason << "\n";
    }
  }
  if (!write_expected.empty()) {
    std::ofstream out(write_expected);
    out << "# Expected results of onnx_test_runner: NAME skip|fail reason\n" << listing.str();
  }
  if (!expected_path.empty()) {
    std::printf("differences from %s: %d unexpected failures, %d unexpected passes\n", expected_path.c_str(),
                unexpected_fail, unexpected_pass);
  }
  std::printf("%d passed, %d failed, %d skipped\n", passed, failed, skip);
  const bool ok = expected_path.empty() ? failed == 0 : (unexpected_fail == 0 && unexpected_pass == 0);
  return ok ? kExitOk : kExitError;
}
