// perf_test: times a model on the nuphar runtime and prints one JSON line, the same fields as
// ../shared/peer/ort_run.js, so the two can be compared side by side on identical inputs.
//
//   perf_test [-e ENGINE] [-r N | -t SECONDS] [-x THREADS] [--dims name=value,...] [--seed S]
//             [--input-dir DIR] [--dump-outputs DIR] [--warmup W] [--profile FILE] [--profile-summary [N]] MODEL
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "graph/model_io.h"
#include "runtime/core/profiler.h"
#include "runtime/session.h"
#include "tools/common/cli.h"
#include "tools/common/tensor_files.h"

using namespace nuphar;
using namespace nuphar::tools;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTool = "perf_test";

std::string SafeName(std::string n) {
  for (char& c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' && c != '-') c = '_';
  return n;
}

nlohmann::json Describe(const std::string& name, const Tensor& t) {
  return {{"name", name}, {"dtype", NumpyDTypeName(t.dtype())}, {"shape", t.shape()}};
}

double Round3(double x) { return std::round(x * 1000) / 1000; }

// --profile-summary: the `top` nodes by total kernel time over every profiled run, on stderr.
void PrintProfileSummary(const Profiler& profiler, int top) {
  double kernel_ms = 0, run_ms = 0;
  int64_t runs = 0;
  const auto totals = profiler.Totals(&kernel_ms, &run_ms, &runs);
  std::fprintf(stderr, "profile: %lld runs, %.3f ms per run, main-graph kernels %.3f ms per run (%.1f%% of the run)\n",
               static_cast<long long>(runs), run_ms / std::max<int64_t>(1, runs), kernel_ms / std::max<int64_t>(1, runs),
               run_ms > 0 ? 100 * kernel_ms / run_ms : 0.0);
  std::fprintf(stderr, "%4s %10s %7s %9s %10s  %-18s %-14s %s\n", "rank", "ms/run", "%run", "calls/run", "us/call",
               "op", "path", "node (body nodes as scan/node)");
  for (size_t i = 0; i < totals.size() && static_cast<int>(i) < top; ++i) {
    const auto& t = totals[i];
    std::fprintf(stderr, "%4zu %10.3f %6.1f%% %9.1f %10.2f  %-18s %-14s %s%s\n", i + 1, t.total_ms / std::max<int64_t>(1, runs),
                 run_ms > 0 ? 100 * t.total_ms / run_ms : 0.0, static_cast<double>(t.calls) / std::max<int64_t>(1, runs),
                 1000 * t.total_ms / std::max<int64_t>(1, t.calls), t.op_type.c_str(), t.path.c_str(),
                 std::string(2 * static_cast<size_t>(t.depth), ' ').c_str(), t.name.c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  nuphar::tools::PrintDiagnosticsToStderr();
  CLI::App app{"Times a model on the nuphar runtime; prints one JSON line (median_ms, min_ms, p90_ms, load_ms, ...)."};
  std::string engine = "jit", model, input_dir, dump_dir, settings;
  int runs = 20, threads = 1, warmup = 3;
  double seconds = 0;
  uint32_t seed = 0;
  std::vector<std::string> dim_specs;
  app.add_option("-e,--engine", engine, "jit (JIT where possible, reference elsewhere) or reference")
      ->check(CLI::IsMember({"jit", "reference"}));
  auto* r_opt = app.add_option("-r,--runs", runs, "timed runs (default 20)")->check(CLI::PositiveNumber);
  app.add_option("-t,--time", seconds, "run for at least this many seconds instead of -r")
      ->check(CLI::PositiveNumber)
      ->excludes(r_opt);
  auto* x_opt = app.add_option("-x,--threads", threads,
                               "threads including the caller: the setting nuphar_num_threads (default 1)")
                    ->check(CLI::Range(1, 256));
  app.add_option("--dims", dim_specs, "dim values: name=value (a symbol) or INPUT:AXIS=value (a dim without a name), comma-separated");
  app.add_option("--seed", seed, "seed of the numpy-compatible random inputs (default 0)");
  app.add_option("--input-dir", input_dir, "feed inputs from *.pb / *.bin files in DIR");
  app.add_option("--dump-outputs", dump_dir, "write every output as NAME.bin+.json and output_K.pb, plus manifest.json");
  app.add_option("--warmup", warmup, "untimed runs first (default 3)")->check(CLI::NonNegativeNumber);
  app.add_option("--settings", settings, "runtime settings string key:value,...");
  std::string profile_file;
  int profile_top = 0;
  app.add_option("--profile", profile_file, "write a Chrome trace-event JSON (ORT profiler format) of every run to FILE");
  app.add_option("--profile-summary", profile_top, "print the N nodes with the most kernel time on stderr (default 15)")
      ->expected(0, 1)
      ->default_str("15")
      ->check(CLI::PositiveNumber);
  int reloads = 0;
  app.add_option("--reload", reloads,
                 "create the session this many more times and report their median as reload_ms, and the median "
                 "CPU time of the process as reload_cpu_ms (with nuphar_cache_path: the warm-cache load of a second "
                 "session; counters are the last session's)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("model", model, "the ONNX model")->required();
  if (int rc = ParseCommandLine(app, argc, argv); rc >= 0) return rc;

  auto dims = ExitOnErr(kTool, ParseDimSpecs(dim_specs));
  SessionOptions options;
  options.settings = "nuphar_execution_mode:" + std::string(engine == "jit" ? "jit" : "reference") +
                     (x_opt->count() > 0 ? ", nuphar_num_threads:" + std::to_string(threads) : std::string()) +
                     (settings.empty() ? "" : ", " + settings);
  if (!profile_file.empty()) options.settings += ", nuphar_profile_file:" + profile_file;
  options.enable_profiling = app.count("--profile-summary") > 0;
  const auto t0 = std::chrono::steady_clock::now();
  auto session = ExitOnErr(kTool, Session::Create(model, options));
  const double load_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // Wall time and the process's CPU time per reload: on a shared machine a load of a few ms is
  // often preempted for a whole time slice, which only the wall time shows.
  auto cpu_ms = [] {
    timespec t;
    ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
  };
  std::vector<double> reload_ms, reload_cpu_ms;
  for (int i = 0; i < reloads; ++i) {
    session.reset();
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_ms();
    session = ExitOnErr(kTool, Session::Create(model, options));
    reload_cpu_ms.push_back(cpu_ms() - cpu_start);
    reload_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  }

  InputSpec spec;
  spec.dims = dims;
  spec.seed = seed;
  spec.input_dir = input_dir;
  spec.strict_dims = true;
  std::vector<std::string> sources;
  auto inputs = ExitOnErr(kTool, MakeInputs(*session, spec, &sources));

  std::vector<Tensor> outputs;
  for (int i = 0; i < warmup; ++i) outputs = ExitOnErr(kTool, session->Run(inputs));
  std::vector<double> times;
  const auto start = std::chrono::steady_clock::now();
  while (true) {
    const auto s = std::chrono::steady_clock::now();
    outputs = ExitOnErr(kTool, session->Run(inputs));
    const auto e = std::chrono::steady_clock::now();
    times.push_back(std::chrono::duration<double, std::milli>(e - s).count());
    const double elapsed = std::chrono::duration<double>(e - start).count();
    if (seconds > 0 ? elapsed >= seconds : static_cast<int>(times.size()) >= runs) break;
  }

  if (!dump_dir.empty()) {
    std::error_code ec;
    fs::create_directories(dump_dir, ec);
    if (ec) return ReportError(kTool, Diag::File(dump_dir, "cannot create the directory: " + ec.message()));
    nlohmann::json manifest = nlohmann::json::array();
    for (size_t k = 0; k < outputs.size(); ++k) {
      const std::string& name = session->outputs()[k].name;
      const std::string file = SafeName(name);
      ExitOnErr(kTool, WriteTensorBin((fs::path(dump_dir) / file).string(), name, outputs[k]));
      ExitOnErr(kTool, WriteTensorPb((fs::path(dump_dir) / ("output_" + std::to_string(k) + ".pb")).string(), name,
                                     outputs[k]));
      manifest.push_back({{"name", name}, {"file", file + ".bin"}, {"pb", "output_" + std::to_string(k) + ".pb"},
                          {"dtype", NumpyDTypeName(outputs[k].dtype())}, {"shape", outputs[k].shape()}});
    }
    ExitOnErr(kTool, WriteFileAtomic((fs::path(dump_dir) / "manifest.json").string(), manifest.dump(1) + "\n"));
  }

  if (const Profiler* profiler = session->profiler()) {
    if (app.count("--profile-summary")) PrintProfileSummary(*profiler, profile_top > 0 ? profile_top : 15);
    if (!profile_file.empty()) ExitOnErr(kTool, session->EndProfiling());
  }

  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  double mean = 0;
  for (double t : sorted) mean += t / static_cast<double>(n);
  const double p90 = sorted[std::min(n - 1, static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n))) - 1)];
  nlohmann::json in_meta = nlohmann::json::array(), out_meta = nlohmann::json::array();
  for (size_t k = 0; k < inputs.size(); ++k) {
    in_meta.push_back(Describe(inputs[k].first, inputs[k].second));
    in_meta.back()["source"] = sources[k];
  }
  // What ran, not what was asked for: "jit" when generated kernels or loops ran, else the
  // reference kernels (plus the load-time fusions); threads beyond the first count only when the
  // session's workers ran a parallel region (a split product or two nodes side by side).
  const bool generated = session->counter("jit_kernels") + session->counter("jit_scan_loops") > 0;
  const std::string engine_ran = generated                              ? "jit"
                                 : session->fused_pattern_count() > 0 ? "reference+fusions"
                                                                        : "reference";
  const int threads_used = session->parallel_regions_run() > 0 ? session->num_threads() : 1;
  for (size_t k = 0; k < outputs.size(); ++k) out_meta.push_back(Describe(session->outputs()[k].name, outputs[k]));
  nlohmann::json out = {{"model", model},          {"engine", engine_ran},      {"engine_requested", engine},
                        {"threads", threads_used}, {"threads_requested", session->num_threads()},
                        {"seed", seed},            {"dims", dims},              {"inputs", in_meta},
                        {"outputs", out_meta},     {"load_ms", Round3(load_ms)}, {"warmup", warmup},
                        {"iters", n},              {"median_ms", Round3(median)}, {"min_ms", Round3(sorted.front())},
                        {"mean_ms", Round3(mean)}, {"p90_ms", Round3(p90)},     {"max_ms", Round3(sorted.back())}};
  // What the JIT took (runtime/jit/): generated kernels, the model nodes they run, the plan nodes
  // left to the reference executor (fused kernels included), and the time spent compiling. Plan
  // nodes by kernel path: "jit" generated code, "jit_view" a generated view (no code), "jit_scan"
  // a whole-Scan loop, "jit_loop_call" a kernel such a loop calls directly; the rest reference.
  out["jit_kernels"] = session->counter("jit_kernels");
  out["jit_nodes"] = session->counter("jit_nodes");
  out["reference_nodes"] = session->counter("plan_nodes") - session->counter("plan_nodes_jit") -
                           session->counter("plan_nodes_jit_view") - session->counter("plan_nodes_jit_scan") -
                           session->counter("plan_nodes_jit_loop_call");
  out["compile_ms"] = Round3(static_cast<double>(session->counter("jit_compile_us")) / 1000.0);
  // Where the kernels' code came from (runtime/jit/kernel_cache.h): compiled now, the object
  // cache (nuphar_cache_path), or the AOT library create_shared wrote.
  if (!reload_ms.empty()) {
    std::sort(reload_ms.begin(), reload_ms.end());
    out["reload_ms"] = Round3(reload_ms[reload_ms.size() / 2]);
    std::sort(reload_cpu_ms.begin(), reload_cpu_ms.end());
    out["reload_cpu_ms"] = Round3(reload_cpu_ms[reload_cpu_ms.size() / 2]);
  }
  out["jit_compiled"] = session->counter("jit_compiled");
  out["jit_from_cache"] = session->counter("jit_from_cache");
  out["jit_from_so"] = session->counter("jit_from_so");
  out["jit_shared_kernels"] = session->counter("jit_shared_kernels");
  out["shapes_from_cache"] = session->counter("shapes_from_cache");
  // Nodes a frame skips when its input shapes repeat (runtime/core/shape_values.h), bodies included.
  out["shape_decided_nodes"] = session->counter("plan_nodes_shape_decided");
  std::printf("%s\n", out.dump().c_str());
  return kExitOk;
}
