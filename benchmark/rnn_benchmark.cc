// The benchmark pipeline of one configuration: generate, to_scan, shape inference, quantize, time
// the three models interleaved, compare outputs, optionally time them in ONNX Runtime.
#include "benchmark/rnn_benchmark.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>

#include "benchmark/ort_peer.h"
#include "benchmark/rnn_model_gen.h"
#include "editor/editor.h"
#include "graph/model_io.h"
#include "quantizer/quantizer.h"
#include "shape_infer/shape_infer.h"

namespace nuphar::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

Status InferComplete(onnx::ModelProto* model, const std::string& stage) {
  ShapeInferOptions opt;  // the original ran SymbolicShapeInference without auto_merge here
  NUPHAR_ASSIGN_OR_RETURN(ShapeInferResult r, InferShapes(model, opt));
  if (r.outcome != InferOutcome::kComplete)
    return Diag::Msg("symbolic shape inference after " + stage + " left shapes unknown (first at " +
                     r.first_incomplete_node + ")");
  return Status::OK();
}

EngineTiming Summarize(std::vector<double> times, int top_n) {
  EngineTiming t;
  if (times.empty()) return t;
  std::sort(times.begin(), times.end());
  const size_t n = times.size();
  t.runs = static_cast<int>(n);
  t.min_ms = times.front();
  t.median_ms = n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
  const size_t k = std::min(n, static_cast<size_t>(std::max(1, top_n)));
  double sum = 0;
  for (size_t i = 0; i < k; ++i) sum += times[i];
  t.top_n_avg_ms = sum / static_cast<double>(k);
  return t;
}

struct Difference {
  double max_abs = 0, mean_abs = 0, ref_absmax = 0;
};

Expected<Difference> Compare(const Tensor& ref, const Tensor& test, const std::string& what) {
  if (ref.shape() != test.shape() || ref.dtype() != DType::kFloat || test.dtype() != DType::kFloat)
    return Diag::Msg(what + " output " + ShapeToString(test.shape()) + " does not match the float model's " +
                     ShapeToString(ref.shape()));
  Difference d;
  const float* a = ref.data<float>();
  const float* b = test.data<float>();
  for (int64_t i = 0; i < ref.size(); ++i) {
    const double diff = std::fabs(static_cast<double>(a[i]) - b[i]);
    d.max_abs = std::max(d.max_abs, diff);
    d.mean_abs += diff;
    d.ref_absmax = std::max(d.ref_absmax, std::fabs(static_cast<double>(a[i])));
  }
  if (ref.size() > 0) d.mean_abs /= static_cast<double>(ref.size());
  return d;
}

}  // namespace

const char* EngineName(Engine e) {
  static const char* const names[kEngineCount] = {"nuphar float RNN", "nuphar float Scan", "nuphar int8 Scan",
                                                  "ORT float RNN",    "ORT float Scan",    "ORT int8 Scan"};
  return names[static_cast<int>(e)];
}

const char* EngineKey(Engine e) {
  static const char* const keys[kEngineCount] = {"rnn", "scan", "int8", "ort_rnn", "ort_scan", "ort_int8"};
  return keys[static_cast<int>(e)];
}

double BenchResult::Speedup(Engine base, Engine e) const {
  if (!at(base).measured() || !at(e).measured() || at(e).top_n_avg_ms <= 0) return NAN;
  return at(base).top_n_avg_ms / at(e).top_n_avg_ms;
}

Expected<BenchResult> RunBenchmark(const BenchConfig& config, const BenchOptions& options) {
  auto progress = [&](const std::string& stage) {
    if (options.progress) options.progress(config.Label() + ": " + stage);
  };
  if (!options.make_inputs) return Diag::Msg("BenchOptions::make_inputs is not set");
  BenchResult result;
  result.config = config;

  progress("generating");
  RnnModelSpec spec;
  spec.op = config.rnn_type;
  spec.input_dim = config.input_dim;
  spec.hidden_dim = config.hidden_dim;
  spec.layers = config.layers;
  spec.bidirectional = config.bidirectional;
  spec.linear_before_reset = config.linear_before_reset;
  spec.batch = config.batch_size == 1 ? "1" : "batch";  // the original: batch 1 fixed, else symbolic
  NUPHAR_ASSIGN_OR_RETURN(onnx::ModelProto float_model, MakeRnnModel(spec));

  progress("to_scan");
  onnx::ModelProto scan_model = float_model;
  NUPHAR_RETURN_IF_ERROR(editor::RunEditor("to_scan", &scan_model, editor::EditorOptions{}));
  NUPHAR_RETURN_IF_ERROR(InferComplete(&scan_model, "to_scan"));

  progress("quantizing");
  onnx::ModelProto int8_model = scan_model;
  quant::QuantizeOptions qopt;
  qopt.only_for_scan = options.only_for_scan;
  NUPHAR_ASSIGN_OR_RETURN(quant::QuantizeReport qreport, quant::Quantize(&int8_model, qopt));
  result.quantized_matmuls = static_cast<int>(qreport.quantized.size());
  NUPHAR_RETURN_IF_ERROR(InferComplete(&int8_model, "quantization"));

  std::string paths[3];
  if (!options.model_dir.empty()) {
    std::error_code ec;
    fs::create_directories(options.model_dir, ec);
    if (ec) return Diag::File(options.model_dir, "cannot create the directory: " + ec.message());
    const std::string base = (fs::path(options.model_dir) / RnnModelBaseName(spec)).string();
    paths[0] = base + ".onnx";
    paths[1] = base + "_scan.onnx";
    paths[2] = base + "_int8.onnx";
    NUPHAR_RETURN_IF_ERROR(SaveModel(float_model, paths[0]));
    NUPHAR_RETURN_IF_ERROR(SaveModel(scan_model, paths[1]));
    NUPHAR_RETURN_IF_ERROR(SaveModel(int8_model, paths[2]));
    result.model_file = paths[0];
  }

  progress("loading");
  SessionOptions so;
  so.settings = "nuphar_num_threads:" + std::to_string(config.num_threads);
  const onnx::ModelProto* models[3] = {&float_model, &scan_model, &int8_model};
  const char* origins[3] = {"<float model>", "<scan model>", "<int8 model>"};
  std::unique_ptr<Session> sessions[3];
  for (int i = 0; i < 3; ++i) {
    NUPHAR_ASSIGN_OR_RETURN(sessions[i], Session::CreateFromModel(*models[i], so, paths[i].empty() ? origins[i] : paths[i]));
  }
  const std::map<std::string, int64_t> dims = {{"seq", config.seq_len}, {"batch", config.batch_size}};
  NUPHAR_ASSIGN_OR_RETURN(NamedTensors inputs, options.make_inputs(*sessions[0], dims));

  progress("checking outputs");
  std::vector<Tensor> outputs[3];
  for (int i = 0; i < 3; ++i) {
    NUPHAR_ASSIGN_OR_RETURN(outputs[i], sessions[i]->Run(inputs));
    if (outputs[i].empty()) return Diag::Msg("the model has no output");
  }
  NUPHAR_ASSIGN_OR_RETURN(Difference scan_diff, Compare(outputs[0][0], outputs[1][0], "the Scan model's"));
  NUPHAR_ASSIGN_OR_RETURN(Difference int8_diff, Compare(outputs[0][0], outputs[2][0], "the int8 model's"));
  result.scan_max_abs = scan_diff.max_abs;
  result.int8_max_abs = int8_diff.max_abs;
  result.int8_mean_abs = int8_diff.mean_abs;
  result.output_absmax = int8_diff.ref_absmax;

  progress("timing");
  for (int w = 0; w < options.warmup; ++w)
    for (auto& s : sessions) NUPHAR_RETURN_IF_ERROR(s->Run(inputs).status());
  std::vector<double> times[3];
  const auto start = Clock::now();
  for (int round = 0;; ++round) {
    for (int i = 0; i < 3; ++i) {
      const auto t0 = Clock::now();
      auto out = sessions[i]->Run(inputs);
      const auto t1 = Clock::now();
      if (!out) return out.status();
      times[i].push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    if ((elapsed >= options.min_seconds && round + 1 >= options.min_runs) || round + 1 >= 100000) break;
  }
  for (int i = 0; i < 3; ++i) result.timing[i] = Summarize(times[i], options.top_n);

  if (!options.ort_peer_dir.empty()) {
    if (paths[0].empty()) return Diag::Msg("timing in ONNX Runtime needs a model directory");
    const Engine ort[3] = {Engine::kOrtRnn, Engine::kOrtScan, Engine::kOrtInt8};
    OrtRunOptions ro;
    ro.threads = config.num_threads;
    ro.dims = dims;
    ro.runs = std::max(options.min_runs, result.timing[0].runs);
    ro.max_seconds = std::max(1.0, options.min_seconds);
    for (int i = 0; i < 3; ++i) {
      progress(std::string("timing in ") + EngineName(ort[i]));
      auto t = TimeInOrt(options.ort_peer_dir, paths[i], ro);
      if (!t) {
        result.ort_note = t.diag().reason;
        break;
      }
      result.at(ort[i]) = Summarize(*t, options.top_n);
    }
  }
  return result;
}

}  // namespace nuphar::bench
