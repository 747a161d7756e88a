// BenchConfig labels and --sweep expansion (benchmark/rnn_benchmark.h).
#include "benchmark/rnn_benchmark.h"

#include <algorithm>
#include <cctype>


namespace nuphar::bench {
namespace {

Expected<int64_t> ParsePositive(const std::string& key, const std::string& v) {
  if (v.empty() || !std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }) ||
      v.size() > 9 || std::stoll(v) < 1)
    return Diag::Msg("--sweep " + key + ": '" + v + "' is not a positive integer");
  return std::stoll(v);
}

Expected<bool> ParseBool(const std::string& key, const std::string& v) {
  if (v == "1" || v == "true" || v == "on") return true;
  if (v == "0" || v == "false" || v == "off") return false;
  return Diag::Msg("--sweep " + key + ": '" + v + "' is not 0/1");
}

// Sets one field of `c` from a --sweep key and value.
Status Apply(const std::string& key, const std::string& v, BenchConfig* c) {
  if (key == "rnn_type") {
    if (v != "lstm" && v != "gru" && v != "rnn") return Diag::Msg("--sweep rnn_type: '" + v + "' is not lstm, gru or rnn");
    c->rnn_type = v;
    return Status::OK();
  }
  if (key == "bidirectional" || key == "linear_before_reset") {
    NUPHAR_ASSIGN_OR_RETURN(bool b, ParseBool(key, v));
    (key == "bidirectional" ? c->bidirectional : c->linear_before_reset) = b;
    return Status::OK();
  }
  NUPHAR_ASSIGN_OR_RETURN(int64_t n, ParsePositive(key, v));
  if (key == "input_dim") c->input_dim = n;
  else if (key == "hidden_dim" || key == "hidden") c->hidden_dim = n;
  else if (key == "layers") c->layers = n;
  else if (key == "seq_len" || key == "seq") c->seq_len = n;
  else if (key == "batch_size" || key == "batch") c->batch_size = n;
  else if (key == "num_threads" || key == "threads") c->num_threads = static_cast<int>(std::min<int64_t>(n, 256));
  else return Diag::Msg("--sweep: unknown key '" + key + "' (one of rnn_type, input_dim, hidden_dim, layers, seq_len, "
                        "batch_size, num_threads, bidirectional, linear_before_reset)");
  return Status::OK();
}

}  // namespace

std::string BenchConfig::Label() const {
  std::string s = rnn_type + " i" + std::to_string(input_dim) + " h" + std::to_string(hidden_dim) + " l" +
                  std::to_string(layers) + " s" + std::to_string(seq_len) + " b" + std::to_string(batch_size) + " t" +
                  std::to_string(num_threads);
  if (bidirectional) s += " bi";
  if (linear_before_reset && rnn_type == "gru") s += " lbr";
  return s;
}

const std::vector<std::string>& SweepKeys() {
  static const std::vector<std::string> keys = {"rnn_type", "input_dim", "hidden_dim", "hidden", "layers",
                                                "seq_len", "seq", "batch_size", "batch", "num_threads",
                                                "threads", "bidirectional", "linear_before_reset"};
  return keys;
}

Expected<std::vector<BenchConfig>> ExpandSweeps(const BenchConfig& base, const std::vector<std::string>& sweeps) {
  std::vector<BenchConfig> configs = {base};
  for (const std::string& sweep : sweeps) {
    const size_t eq = sweep.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == sweep.size())
      return Diag::Msg("--sweep '" + sweep + "' is not KEY=V1,V2,...");
    const std::string key = sweep.substr(0, eq);
    std::vector<std::string> values;
    for (size_t p = eq + 1; p <= sweep.size();) {
      size_t q = sweep.find(',', p);
      if (q == std::string::npos) q = sweep.size();
      if (q > p) values.push_back(sweep.substr(p, q - p));
      p = q + 1;
    }
    if (values.empty()) return Diag::Msg("--sweep '" + sweep + "' lists no values");
    std::vector<BenchConfig> next;
    for (const BenchConfig& c : configs)
      for (const std::string& v : values) {
        BenchConfig n = c;
        NUPHAR_RETURN_IF_ERROR(Apply(key, v, &n));
        next.push_back(n);
      }
    configs = std::move(next);
  }
  return configs;
}

}  // namespace nuphar::bench
