// rnn_benchmark: generate LSTM/GRU/RNN models, convert them to Scan, quantize them, and time
// float / Scan / int8 on the nuphar runtime (and ONNX Runtime with --ort); the flags of the
// original rnn_benchmark.py plus --sweep, --out, --ort and --linear_before_reset (README).
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "benchmark/rnn_benchmark.h"
#include "graph/model_io.h"
#include "tools/common/cli.h"
#include "tools/common/tensor_files.h"

using namespace nuphar;
using namespace nuphar::tools;
namespace fs = std::filesystem;

namespace {

constexpr const char* kTool = "rnn_benchmark";

// The four sweeps of the original's --auto NAME (spec editor_quantizer.md §5.4; the multi-thread
// file uses seq_len 32 as its header says, not the leaked 64 of B26).
struct AutoFile {
  std::string file, description;
  std::vector<std::string> columns, sweeps;
  bench::BenchConfig base;
};

std::vector<AutoFile> AutoFiles(const std::string& name) {
  bench::BenchConfig single;
  single.input_dim = 128;
  single.layers = 4;
  single.num_threads = 1;
  bench::BenchConfig batch = single;
  batch.hidden_dim = 1024;
  bench::BenchConfig multi_batch = batch;
  multi_batch.seq_len = 32;
  bench::BenchConfig multi = single;
  multi.seq_len = 32;
  return {
      {"single_thread_" + name + ".csv", "single thread test: input_dim=128, unidirectional, layers=4, batch_size=1",
       {"rnn_type", "hidden", "seq_len"}, {"rnn_type=lstm,gru,rnn", "hidden=32,128,1024,2048", "seq=1,16,32,64"}, single},
      {"multi_thread_" + name + ".csv", "multi-thread test: input_dim=128, unidirectional, layers=4, seq_len=32, batch_size=1",
       {"rnn_type", "threads", "hidden"}, {"rnn_type=lstm,gru,rnn", "threads=1,2,4", "hidden=32,128,1024,2048"}, multi},
      {"batch_single_thread_" + name + ".csv", "batch single thread test: input_dim=128, hidden=1024, unidirectional, layers=4",
       {"rnn_type", "seq_len", "batch_size"}, {"rnn_type=lstm,gru,rnn", "seq=1,16,32,64", "batch=1,4,16,64"}, batch},
      {"batch_multi_thread_" + name + ".csv",
       "batch multi-thread test: input_dim=128, hidden=1024, unidirectional, layers=4, seq_len=32",
       {"rnn_type", "threads", "batch_size"}, {"rnn_type=lstm,gru,rnn", "threads=1,2,4", "batch=1,4,16,64"}, multi_batch},
  };
}

}  // namespace

int main(int argc, char** argv) {
  nuphar::tools::PrintDiagnosticsToStderr();
  CLI::App app{"Generates LSTM/GRU/RNN models, converts them to Scan, quantizes them, and times float, Scan and int8 "
               "on the nuphar runtime (and in ONNX Runtime with --ort). Writes results.json, results.csv and "
               "report.html to --out."};
  const int cpu_count = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  bench::BenchConfig base;
  base.num_threads = cpu_count;
  int top_n = 5;
  std::string auto_name, out_dir = "rnn_benchmark_out", ort_peer = NUPHAR_DEFAULT_ORT_PEER;
  std::vector<std::string> sweeps;
  bool ort = false;
  bench::BenchOptions options;
  uint32_t seed = 0;
  app.add_option("--rnn_type", base.rnn_type, "lstm, gru or rnn (default lstm)")->check(CLI::IsMember({"lstm", "gru", "rnn"}));
  app.add_option("--input_dim", base.input_dim, "input size (default 128)")->check(CLI::PositiveNumber);
  app.add_option("--hidden_dim", base.hidden_dim, "hidden size (default 1024)")->check(CLI::PositiveNumber);
  app.add_flag("--bidirectional", base.bidirectional, "bidirectional layers");
  app.add_option("--layers", base.layers, "stacked layers (default 4)")->check(CLI::PositiveNumber);
  app.add_option("--seq_len", base.seq_len, "sequence length (default 32)")->check(CLI::PositiveNumber);
  app.add_option("--batch_size", base.batch_size, "batch size; 1 gives a fixed batch dim, more a symbolic one (default 1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--num_threads", base.num_threads, "threads, clamped to [1, cpu_count] (default cpu_count)");
  app.add_option("--top_n", top_n, "latency = mean of the N fastest runs (default 5)")->check(CLI::PositiveNumber);
  app.add_option("--auto", auto_name, "run the original's four sweeps and write single_thread_NAME.csv, "
                                      "multi_thread_NAME.csv, batch_single_thread_NAME.csv, batch_multi_thread_NAME.csv");
  app.add_flag("--linear_before_reset", base.linear_before_reset, "GRU: linear_before_reset=1");
  app.add_option("--sweep", sweeps, "KEY=V1,V2,... run every value (repeatable: the product); keys are the flags above "
                                    "(hidden, seq, batch, threads also accepted)");
  app.add_option("--out", out_dir, "directory for results.json, results.csv, report.html and models/ (default rnn_benchmark_out)");
  app.add_flag("--ort", ort, "also time the three models in ONNX Runtime (../shared/peer/ort_run.js); skipped with a "
                             "message when it is not set up");
  app.add_option("--ort_peer", ort_peer, "folder of ort_run.js (default: the shared/peer folder beside the checkout)");
  app.add_option("--min_seconds", options.min_seconds, "timing per configuration, our three models together (default 1)")
      ->check(CLI::PositiveNumber);
  app.add_option("--min_runs", options.min_runs, "at least this many runs of each model (default 10)")->check(CLI::PositiveNumber);
  app.add_flag("--only_for_scan", options.only_for_scan, "quantize only the MatMuls inside the Scan bodies (the original "
                                                        "quantized every MatMul)");
  app.add_option("--seed", seed, "seed of the numpy-compatible random inputs (default 0)");
  if (int rc = ParseCommandLine(app, argc, argv); rc >= 0) return rc;
  options.top_n = top_n;
  base.num_threads = std::clamp(base.num_threads, 1, cpu_count);

  std::vector<AutoFile> auto_files;
  std::vector<std::vector<bench::BenchConfig>> groups;
  if (!auto_name.empty()) {
    auto_files = AutoFiles(auto_name);
    for (auto& f : auto_files) {
      f.base.rnn_type = base.rnn_type;
      groups.push_back(ExitOnErr(kTool, bench::ExpandSweeps(f.base, f.sweeps)));
    }
  } else {
    std::printf("Testing model: %s\n  input_dim: %lld\n  hidden_dim: %lld\n", base.rnn_type.c_str(),
                static_cast<long long>(base.input_dim), static_cast<long long>(base.hidden_dim));
    if (base.bidirectional) std::printf("  bidirectional\n");
    std::printf("  layers: %lld\nTest setup\n  cpu_count: %d\n  num_threads: %d\n  seq_len: %lld\n  batch_size: %lld\n",
                static_cast<long long>(base.layers), cpu_count, base.num_threads,
                static_cast<long long>(base.seq_len), static_cast<long long>(base.batch_size));
    std::fflush(stdout);
    groups.push_back(ExitOnErr(kTool, bench::ExpandSweeps(base, sweeps)));
  }
  if (auto_name.empty())  // the original clamps only outside --auto (whose thread sweep is 1, 2, 4)
    for (auto& c : groups.front()) c.num_threads = std::clamp(c.num_threads, 1, cpu_count);

  std::error_code ec;
  fs::create_directories(out_dir, ec);
  if (ec) return ReportError(kTool, Diag::File(out_dir, "cannot create the directory: " + ec.message()));
  options.model_dir = (fs::path(out_dir) / "models").string();
  std::string ort_skipped;
  if (ort) {
    Status probe = bench::ProbeOrtPeer(ort_peer);
    if (probe.ok()) options.ort_peer_dir = ort_peer;
    else ort_skipped = "not measured: " + probe.diag().reason;
    if (!probe.ok()) std::fprintf(stderr, "%s: --ort: skipping the ONNX Runtime columns: %s\n", kTool, probe.diag().reason.c_str());
  }
  options.make_inputs = [seed](const Session& s, const std::map<std::string, int64_t>& dims) {
    InputSpec spec;
    spec.dims = dims;
    spec.seed = seed;
    return MakeInputs(s, spec);
  };
  const bool tty = isatty(STDERR_FILENO);
  size_t total = 0, done = 0;
  for (const auto& g : groups) total += g.size();
  std::string prefix;
  options.progress = [&](const std::string& status) {
    if (tty) std::fprintf(stderr, "\r\033[K%s%s", prefix.c_str(), status.c_str());
  };

  std::vector<bench::BenchResult> all;
  std::vector<std::vector<bench::BenchResult>> per_group;
  for (const auto& g : groups) {
    per_group.emplace_back();
    for (const auto& c : g) {
      prefix = "[" + std::to_string(++done) + "/" + std::to_string(total) + "] ";
      if (!tty) std::fprintf(stderr, "%s%s\n", prefix.c_str(), c.Label().c_str());
      auto r = bench::RunBenchmark(c, options);
      if (!r) {
        if (tty) std::fprintf(stderr, "\n");
        return ReportError(kTool, Status(r.status()).WithGraph(c.Label()));
      }
      if (r->ort_note.empty()) r->ort_note = ort_skipped;
      per_group.back().push_back(*r);
      all.push_back(*r);
    }
  }
  if (tty) std::fprintf(stderr, "\r\033[K");

  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  const bench::MachineInfo machine = bench::DescribeMachine();
  std::printf("%s", bench::ResultsTable(all).c_str());
  std::printf("(%s, ISA tier %s; ms = top-%d average of interleaved runs; *_x = speed-up against our float RNN; "
              "int8_err = max abs error of the int8 output against float; t = nuphar_num_threads and ORT intra-op threads)\n",
              machine.cpu.c_str(), machine.isa_tier.c_str(), top_n);
  for (size_t i = 0; i < auto_files.size(); ++i)
    ExitOnErr(kTool, WriteFileAtomic((fs::path(out_dir) / auto_files[i].file).string(),
                                     bench::OriginalAutoCsv(per_group[i], auto_files[i].description, auto_files[i].columns)));
  ExitOnErr(kTool, WriteFileAtomic((fs::path(out_dir) / "results.json").string(), bench::ResultsJson(all, machine, options)));
  ExitOnErr(kTool, WriteFileAtomic((fs::path(out_dir) / "results.csv").string(), bench::ResultsCsv(all)));
  const std::string report = (fs::path(out_dir) / "report.html").string();
  ExitOnErr(kTool, WriteFileAtomic(report, bench::ReportHtml(all, machine, command)));
  std::printf("wrote %s/results.json, results.csv, report.html\n", out_dir.c_str());
  return kExitOk;
}
