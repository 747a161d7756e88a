// Child-process bridge to ../shared/peer/ort_run.js (benchmark/ort_peer.h).
#include "benchmark/ort_peer.h"

#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "benchmark/rnn_benchmark.h"

namespace nuphar::bench {
namespace {

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `command` through the shell and returns its stdout (callers append 2>&1 for stderr).
Expected<std::string> Capture(const std::string& command, int* exit_code) {
  FILE* p = popen(command.c_str(), "r");
  if (!p) return Diag::Msg("cannot start: " + command);
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

// The line of a node failure that says what went wrong ("Error: ..."), else the last line.
std::string ErrorLine(const std::string& out) {
  size_t p = out.find("Error: ");
  if (p == std::string::npos) p = out.find("Error:");
  if (p != std::string::npos) return out.substr(p, out.find('\n', p) - p);
  std::string s = out;
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

std::string LastLine(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  const size_t nl = s.rfind('\n');
  return nl == std::string::npos ? s : s.substr(nl + 1);
}

}  // namespace

Status ProbeOrtPeer(const std::string& peer_dir) {
  namespace fs = std::filesystem;
  if (peer_dir.empty()) return Diag::Msg("no ORT peer folder given");
  const fs::path lib = fs::path(peer_dir) / "ort_lib.js";
  if (!fs::exists(fs::path(peer_dir) / "ort_run.js") || !fs::exists(lib))
    return Diag::File(peer_dir, "ort_run.js / ort_lib.js not found");
  int code = 0;
  NUPHAR_ASSIGN_OR_RETURN(std::string out,
                          Capture("node -e " + Quote("const L=require(" + nlohmann::json(lib.string()).dump() +
                                                     ");const o=L.loadOrt();console.log(o.version)") +
                                      " 2>&1",
                                  &code));
  if (code != 0)
    return Diag::Msg("ONNX Runtime is not set up (" + ErrorLine(out) + "); run " + peer_dir +
                     "/setup_ort.sh or set ORT_NODE_DIR");
  return Status::OK();
}

Expected<std::vector<double>> TimeInOrt(const std::string& peer_dir, const std::string& model,
                                        const OrtRunOptions& options) {
  std::string cmd = "node " + Quote((std::filesystem::path(peer_dir) / "ort_run.js").string()) + " " + Quote(model) +
                    " --threads " + std::to_string(options.threads) + " --iters " + std::to_string(options.runs) +
                    " --warmup 2 --all-times --quiet";
  if (options.max_seconds > 0) cmd += " --max-time " + std::to_string(options.max_seconds);
  std::string dims;
  for (const auto& [k, v] : options.dims) dims += (dims.empty() ? "" : ",") + k + "=" + std::to_string(v);
  if (!dims.empty()) cmd += " --dims " + Quote(dims);
  int code = 0;
  NUPHAR_ASSIGN_OR_RETURN(std::string out, Capture(cmd + " 2>&1", &code));
  const std::string line = LastLine(out);
  if (code != 0) return Diag::File(model, "ONNX Runtime failed: " + ErrorLine(out));
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("times_ms") || !j["times_ms"].is_array())
    return Diag::File(model, "ort_run.js printed no timing JSON: " + line);
  std::vector<double> times;
  for (const auto& t : j["times_ms"]) times.push_back(t.get<double>());
  if (times.empty()) return Diag::File(model, "ort_run.js timed no run");
  return times;
}

}  // namespace nuphar::bench
