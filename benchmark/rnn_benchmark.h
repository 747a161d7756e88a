// rnn_benchmark's library: for each configuration, generate a stacked LSTM/GRU/RNN model
// (rnn_model_gen.h), convert it to Scan (editor to_scan + symbolic shape inference), quantize it
// (quantizer, default preset, every MatMul as the original), then time float RNN ops / float Scan /
// int8 Scan on the nuphar runtime and measure the int8 output error against float. Optionally the
// same three models run in ONNX Runtime (../shared/peer/ort_run.js). Results go to results.json,
// results.csv and a self-contained report.html (report_html.cc).
//
// # Timing method
// The three sessions run interleaved (one run of each per round) after warm-up runs, until both
// `min_seconds` of rounds and `min_runs` rounds have passed, so drifts of a shared machine hit all
// engines alike. Each engine reports the median and, as the original did, the mean of its `top_n`
// fastest runs. ORT runs in its own process (node), not interleaved; compare its ratios, not
// absolute times across runs.
#pragma once

#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "graph/error.h"
#include "runtime/session.h"

namespace nuphar::bench {

/// One benchmark configuration: the original's flags plus linear_before_reset.
struct BenchConfig {
  std::string rnn_type = "lstm";
  int64_t input_dim = 128;
  int64_t hidden_dim = 1024;
  bool bidirectional = false;
  int64_t layers = 4;
  int64_t seq_len = 32;
  int64_t batch_size = 1;
  int num_threads = 1;
  bool linear_before_reset = false;

  /// "lstm i128 h1024 l4 s32 b1 t1" (+ " bi", " lbr").
  std::string Label() const;
};

/// The flags --sweep accepts, each with its aliases: rnn_type, input_dim, hidden_dim|hidden,
/// layers, seq_len|seq, batch_size|batch, num_threads|threads, bidirectional, linear_before_reset.
const std::vector<std::string>& SweepKeys();
/// `base` for every combination of the sweeps ("hidden=128,256", "rnn_type=lstm,gru"), the
/// first sweep varying slowest. An unknown key or bad value is an error naming it.
Expected<std::vector<BenchConfig>> ExpandSweeps(const BenchConfig& base, const std::vector<std::string>& sweeps);

/// Latency of one engine on one configuration, in ms (NaN when not measured).
struct EngineTiming {
  double median_ms = NAN;
  double top_n_avg_ms = NAN;  ///< mean of the top_n fastest runs (the original's avg_*)
  double min_ms = NAN;
  int runs = 0;
  bool measured() const { return runs > 0; }
};

/// The engines of a result row, in report order.
enum class Engine { kRnn, kScan, kInt8, kOrtRnn, kOrtScan, kOrtInt8 };
inline constexpr int kEngineCount = 6;
const char* EngineName(Engine e);  ///< "nuphar float RNN", ..., "ORT int8 Scan"
const char* EngineKey(Engine e);   ///< "rnn", "scan", "int8", "ort_rnn", "ort_scan", "ort_int8"

struct BenchResult {
  BenchConfig config;
  EngineTiming timing[kEngineCount];
  double int8_max_abs = NAN, int8_mean_abs = NAN;  ///< int8 Scan output vs float RNN output
  double scan_max_abs = NAN;                       ///< float Scan output vs float RNN output
  double output_absmax = NAN;                      ///< max |float output| (scale of the errors)
  int quantized_matmuls = 0;
  std::string model_file;  ///< the float model; "_scan" / "_int8" variants beside it
  std::string ort_note;    ///< why the ORT columns are empty, when they are

  const EngineTiming& at(Engine e) const { return timing[static_cast<int>(e)]; }
  EngineTiming& at(Engine e) { return timing[static_cast<int>(e)]; }
  /// at(base).top_n_avg / at(e).top_n_avg (the original's speedup_fp / speedup_int8), NaN if unmeasured.
  double Speedup(Engine base, Engine e) const;
};

using InputMaker = std::function<Expected<NamedTensors>(const Session&, const std::map<std::string, int64_t>& dims)>;

struct BenchOptions {
  int top_n = 5;
  double min_seconds = 1.0;  ///< per configuration, all three of our engines together
  int min_runs = 10;
  int warmup = 2;
  /// Quantize only the MatMuls inside Scan bodies (model_quantizer --only_for_scan); the original
  /// quantized every MatMul, the hoisted input projection included.
  bool only_for_scan = false;
  std::string model_dir;     ///< where the generated models are written (created when missing)
  /// Random inputs for a session (the tool passes numpy-compatible ones, as ort_run.js draws).
  InputMaker make_inputs;
  /// ONNX Runtime: the folder of ort_run.js, or empty for none.
  std::string ort_peer_dir;
  /// Called with a short status ("lstm i80 h512 ...: timing"), for a progress line.
  std::function<void(const std::string&)> progress;
};

/// Checks that ORT can run from `peer_dir` (node on PATH, ort_run.js there, onnxruntime-node
/// installed under ORT_NODE_DIR or ~/.cache/ort-peer). The error says what is missing.
Status ProbeOrtPeer(const std::string& peer_dir);

/// Generates, converts, quantizes and times one configuration.
Expected<BenchResult> RunBenchmark(const BenchConfig& config, const BenchOptions& options);

/// What the figures were measured on: "AMD EPYC 9xx4 ...", the active ISA tier, core count.
struct MachineInfo {
  std::string cpu;
  std::string isa_tier;
  int cores = 0;
  std::string date_utc;
};
MachineInfo DescribeMachine();

/// results.json: {"machine": {...}, "options": {...}, "results": [{config, engines, errors}]}.
std::string ResultsJson(const std::vector<BenchResult>& results, const MachineInfo& machine, const BenchOptions& options);
/// results.csv: the original --auto columns (rnn_type,threads,hidden,seq_len,batch_size,avg_rnn,
/// avg_nuphar_fp,avg_nuphar_int8,speedup_fp,speedup_int8) then ours.
std::string ResultsCsv(const std::vector<BenchResult>& results);
/// One of the original's --auto CSVs: `description` line, then `columns` (a prefix of
/// rnn_type,threads,hidden,seq_len,batch_size picked by the file), then the timing columns.
std::string OriginalAutoCsv(const std::vector<BenchResult>& results, const std::string& description,
                            const std::vector<std::string>& columns);
/// The text table printed on stdout.
std::string ResultsTable(const std::vector<BenchResult>& results);
/// report.html: one self-contained page (inline SVG and CSS, no script, no network).
std::string ReportHtml(const std::vector<BenchResult>& results, const MachineInfo& machine, const std::string& command);

}  // namespace nuphar::bench
