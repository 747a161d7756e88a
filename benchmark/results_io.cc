// Results as JSON, CSV (the original's --auto columns first) and the stdout table
// (benchmark/rnn_benchmark.h).
#include "benchmark/rnn_benchmark.h"

#include <cstdio>
#include <ctime>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "runtime/platform/cpu_features.h"

namespace nuphar::bench {
namespace {

nlohmann::json Num(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

std::string Fmt(double v, const char* fmt = "%.3f") {
  if (std::isnan(v)) return "";
  char buf[64];
  std::snprintf(buf, sizeof(buf), fmt, v);
  return buf;
}

const char* const kOriginalTiming[] = {"avg_rnn", "avg_nuphar_fp", "avg_nuphar_int8", "speedup_fp", "speedup_int8"};

std::string OriginalField(const BenchResult& r, const std::string& column) {
  const BenchConfig& c = r.config;
  if (column == "rnn_type") return c.rnn_type;
  if (column == "threads") return std::to_string(c.num_threads);
  if (column == "hidden") return std::to_string(c.hidden_dim);
  if (column == "seq_len") return std::to_string(c.seq_len);
  if (column == "batch_size") return std::to_string(c.batch_size);
  if (column == "avg_rnn") return Fmt(r.at(Engine::kRnn).top_n_avg_ms);
  if (column == "avg_nuphar_fp") return Fmt(r.at(Engine::kScan).top_n_avg_ms);
  if (column == "avg_nuphar_int8") return Fmt(r.at(Engine::kInt8).top_n_avg_ms);
  if (column == "speedup_fp") return Fmt(r.Speedup(Engine::kRnn, Engine::kScan));
  if (column == "speedup_int8") return Fmt(r.Speedup(Engine::kRnn, Engine::kInt8));
  return "";
}

}  // namespace

MachineInfo DescribeMachine() {
  MachineInfo m;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      m.cpu = line.substr(line.find(':') + 2);
      break;
    }
  if (m.cpu.empty()) m.cpu = "unknown CPU";
  m.isa_tier = IsaTierName(ActiveIsaTier());
  m.cores = static_cast<int>(std::thread::hardware_concurrency());
  char buf[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  m.date_utc = buf;
  return m;
}

std::string ResultsJson(const std::vector<BenchResult>& results, const MachineInfo& machine, const BenchOptions& options) {
  nlohmann::json rows = nlohmann::json::array();
  for (const BenchResult& r : results) {
    const BenchConfig& c = r.config;
    nlohmann::json engines = nlohmann::json::object();
    for (int e = 0; e < kEngineCount; ++e) {
      const EngineTiming& t = r.timing[e];
      if (!t.measured()) continue;
      engines[EngineKey(static_cast<Engine>(e))] = {{"median_ms", t.median_ms}, {"top_n_avg_ms", t.top_n_avg_ms},
                                                    {"min_ms", t.min_ms}, {"runs", t.runs}};
    }
    rows.push_back({{"config",
                     {{"rnn_type", c.rnn_type}, {"input_dim", c.input_dim}, {"hidden_dim", c.hidden_dim},
                      {"bidirectional", c.bidirectional}, {"layers", c.layers}, {"seq_len", c.seq_len},
                      {"batch_size", c.batch_size}, {"num_threads", c.num_threads},
                      {"linear_before_reset", c.linear_before_reset}}},
                    {"label", c.Label()},
                    {"engines", engines},
                    {"speedup_fp", Num(r.Speedup(Engine::kRnn, Engine::kScan))},
                    {"speedup_int8", Num(r.Speedup(Engine::kRnn, Engine::kInt8))},
                    {"speedup_int8_vs_ort_rnn", Num(r.Speedup(Engine::kOrtRnn, Engine::kInt8))},
                    {"int8_max_abs_error", Num(r.int8_max_abs)},
                    {"int8_mean_abs_error", Num(r.int8_mean_abs)},
                    {"scan_max_abs_error", Num(r.scan_max_abs)},
                    {"output_absmax", Num(r.output_absmax)},
                    {"quantized_matmuls", r.quantized_matmuls},
                    {"model", r.model_file},
                    {"ort_note", r.ort_note}});
  }
  nlohmann::json doc = {
      {"machine", {{"cpu", machine.cpu}, {"isa_tier", machine.isa_tier}, {"cores", machine.cores}, {"date", machine.date_utc}}},
      {"options", {{"top_n", options.top_n}, {"min_seconds", options.min_seconds}, {"min_runs", options.min_runs},
                   {"warmup", options.warmup}, {"only_for_scan", options.only_for_scan},
                   {"ort", !options.ort_peer_dir.empty()}}},
      {"results", rows}};
  return doc.dump(1) + "\n";
}

std::string ResultsCsv(const std::vector<BenchResult>& results) {
  std::ostringstream os;
  os << "rnn_type,threads,hidden,seq_len,batch_size,avg_rnn,avg_nuphar_fp,avg_nuphar_int8,speedup_fp,speedup_int8,"
        "input_dim,layers,bidirectional,linear_before_reset,median_rnn,median_nuphar_fp,median_nuphar_int8,"
        "int8_max_abs_error,int8_mean_abs_error,scan_max_abs_error,avg_ort_rnn,avg_ort_fp,avg_ort_int8,"
        "median_ort_rnn,median_ort_fp,median_ort_int8\n";
  for (const BenchResult& r : results) {
    const BenchConfig& c = r.config;
    for (const char* col : {"rnn_type", "threads", "hidden", "seq_len", "batch_size"}) os << OriginalField(r, col) << ",";
    for (const char* col : kOriginalTiming) os << OriginalField(r, col) << ",";
    os << c.input_dim << "," << c.layers << "," << (c.bidirectional ? 1 : 0) << "," << (c.linear_before_reset ? 1 : 0)
       << "," << Fmt(r.at(Engine::kRnn).median_ms) << "," << Fmt(r.at(Engine::kScan).median_ms) << ","
       << Fmt(r.at(Engine::kInt8).median_ms) << "," << Fmt(r.int8_max_abs, "%.3g") << ","
       << Fmt(r.int8_mean_abs, "%.3g") << "," << Fmt(r.scan_max_abs, "%.3g") << ","
       << Fmt(r.at(Engine::kOrtRnn).top_n_avg_ms) << "," << Fmt(r.at(Engine::kOrtScan).top_n_avg_ms) << ","
       << Fmt(r.at(Engine::kOrtInt8).top_n_avg_ms) << "," << Fmt(r.at(Engine::kOrtRnn).median_ms) << ","
       << Fmt(r.at(Engine::kOrtScan).median_ms) << "," << Fmt(r.at(Engine::kOrtInt8).median_ms) << "\n";
  }
  return os.str();
}

std::string OriginalAutoCsv(const std::vector<BenchResult>& results, const std::string& description,
                            const std::vector<std::string>& columns) {
  std::ostringstream os;
  os << description << "\n";
  std::string header;
  for (const auto& c : columns) header += c + ",";
  for (const char* c : kOriginalTiming) header += std::string(c) + ",";
  header.pop_back();
  os << header << "\n";
  for (const BenchResult& r : results) {
    std::string row;
    for (const auto& c : columns) row += OriginalField(r, c) + ",";
    for (const char* c : kOriginalTiming) row += OriginalField(r, c) + ",";
    row.pop_back();
    os << row << "\n";
  }
  return os.str();
}

std::string ResultsTable(const std::vector<BenchResult>& results) {
  bool ort = false;
  for (const auto& r : results) ort |= r.at(Engine::kOrtRnn).measured();
  std::ostringstream os;
  char buf[512];
  std::snprintf(buf, sizeof(buf), "%-34s %9s %9s %9s %8s %8s %10s", "config (top-n avg ms)", "rnn", "scan", "int8",
                "fp_x", "int8_x", "int8_err");
  os << buf;
  if (ort) {
    std::snprintf(buf, sizeof(buf), " %9s %9s %9s %11s", "ort_rnn", "ort_scan", "ort_int8", "int8/ortrnn");
    os << buf;
  }
  os << "\n";
  for (const auto& r : results) {
    std::snprintf(buf, sizeof(buf), "%-34s %9s %9s %9s %8s %8s %10s", r.config.Label().c_str(),
                  Fmt(r.at(Engine::kRnn).top_n_avg_ms).c_str(), Fmt(r.at(Engine::kScan).top_n_avg_ms).c_str(),
                  Fmt(r.at(Engine::kInt8).top_n_avg_ms).c_str(), Fmt(r.Speedup(Engine::kRnn, Engine::kScan), "%.2fx").c_str(),
                  Fmt(r.Speedup(Engine::kRnn, Engine::kInt8), "%.2fx").c_str(), Fmt(r.int8_max_abs, "%.2e").c_str());
    os << buf;
    if (ort) {
      std::snprintf(buf, sizeof(buf), " %9s %9s %9s %11s", Fmt(r.at(Engine::kOrtRnn).top_n_avg_ms).c_str(),
                    Fmt(r.at(Engine::kOrtScan).top_n_avg_ms).c_str(), Fmt(r.at(Engine::kOrtInt8).top_n_avg_ms).c_str(),
                    Fmt(r.Speedup(Engine::kOrtRnn, Engine::kInt8), "%.2fx").c_str());
      os << buf;
    }
    os << "\n";
  }
  return os.str();
}

}  // namespace nuphar::bench
