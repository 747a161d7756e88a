// Settings string parsing and environment merge (runtime/core/settings.h).
#include "runtime/core/settings.h"

#include "runtime/platform/cpu_features.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

namespace nuphar {
namespace {

std::string Trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string Upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
  return s;
}

}  // namespace

const std::vector<std::string>& Settings::KnownKeys() {
  static const std::vector<std::string> keys = {
      "dump_all_options", "codegen_dump_lower", "codegen_dump_module", "codegen_dump_schedule",
      "nuphar_dump_partition", "nuphar_dump_fused_nodes", "nuphar_execution_mode", "nuphar_codegen_target",
      "nuphar_num_threads", "nuphar_parallel_min_workloads", "nuphar_cache_path", "nuphar_cache_so_name",
      "nuphar_cache_model_checksum", "nuphar_cache_force_no_jit", "nuphar_matmul_exec", "nuphar_igemm_tile_m",
      "nuphar_igemm_tile_n", "nuphar_igemm_tile_k", "nuphar_igemm_permute", "nuphar_igemm_split_last_tile",
      "nuphar_fast_math", "nuphar_fast_activation", "nuphar_imatmul_force_mkl", "nuphar_force_no_tensorize",
      "nuphar_profile_file",  // per-kernel trace (runtime/core/profiler.h)
      "nuphar_reuse_shape_values",  // skip the shape arithmetic of a repeated input shape (runtime/core/shape_values.h)
      // Budgets against hostile models (runtime/core/tensor_budget.h, kernels/control_flow/control_flow_loop.cc).
      "nuphar_max_tensor_bytes", "nuphar_max_loop_iterations", "nuphar_max_subgraph_depth",
  };
  return keys;
}

Expected<Settings> Settings::Parse(const std::string& text, std::vector<std::string>* warnings) {
  const auto& known = KnownKeys();
  Settings s;
  std::map<std::string, std::string> explicit_values;
  size_t start = 0;
  const std::string trimmed = Trim(text);
  while (!trimmed.empty() && start <= trimmed.size()) {
    size_t comma = trimmed.find(',', start);
    const std::string pair = Trim(trimmed.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    start = comma == std::string::npos ? trimmed.size() + 1 : comma + 1;
    if (pair.empty()) return Diag::Msg("settings: empty entry in '" + text + "'");
    const size_t colon = pair.find(':');
    if (colon == std::string::npos) return Diag::Msg("settings: '" + pair + "' is not key:value");
    const std::string key = Lower(Trim(pair.substr(0, colon)));
    const std::string value = Trim(pair.substr(colon + 1));
    if (std::find(known.begin(), known.end(), key) == known.end())
      return Diag::Msg("settings: unknown key '" + key + "' (the README lists the runtime settings)");
    explicit_values[key] = value;
  }
  for (const auto& key : known) {
    const char* env = std::getenv(Upper(key).c_str());
    auto it = explicit_values.find(key);
    if (it != explicit_values.end()) {
      if (env && warnings) warnings->push_back("settings: " + key + " given explicitly; ignoring " + Upper(key));
      s.values_[key] = it->second;
    } else if (env) {
      s.values_[key] = env;
    }
  }
  if (s.Has("nuphar_execution_mode")) {
    const std::string m = Lower(s.Get("nuphar_execution_mode"));
    if (m != "jit" && m != "reference" && m != "compare")
      return Diag::Msg("settings: nuphar_execution_mode must be jit, reference or compare, not '" +
                       s.Get("nuphar_execution_mode") + "'");
  }
  for (const char* int_key : {"nuphar_num_threads", "nuphar_parallel_min_workloads", "nuphar_igemm_tile_m",
                              "nuphar_igemm_tile_n", "nuphar_igemm_tile_k", "nuphar_max_tensor_bytes",
                              "nuphar_max_loop_iterations", "nuphar_max_subgraph_depth"}) {
    auto v = s.GetInt(int_key, 0);
    if (!v) return v.status();
    if (*v < 0) return Diag::Msg(std::string("settings: ") + int_key + " must not be negative");
  }
  if (s.Has("nuphar_codegen_target")) {
    std::string why;
    if (!ValidateIsaTier(s.Get("nuphar_codegen_target"), "nuphar_codegen_target", &why))
      return Diag::Msg("settings: " + why);
  }
  if (s.Has("nuphar_igemm_permute")) {
    const std::string p = Lower(s.Get("nuphar_igemm_permute"));
    if (p != "none" && p != "inner" && p != "outer" && p != "all")
      return Diag::Msg("settings: nuphar_igemm_permute must be none, inner, outer or all, not '" + p + "'");
  }
  return s;
}

std::string Settings::Get(const std::string& key, const std::string& fallback) const {
  auto it = values_.find(key);
  return it == values_.end() ? fallback : it->second;
}

bool Settings::Is(const std::string& key, const std::string& value) const {
  return Has(key) && Lower(Get(key)) == Lower(value);
}

Expected<long long> Settings::GetInt(const std::string& key, long long fallback) const {
  if (!Has(key)) return fallback;
  const std::string v = Get(key);
  char* end = nullptr;
  const long long n = std::strtoll(v.c_str(), &end, 10);
  if (v.empty() || *end != '\0') return Diag::Msg("settings: " + key + " must be an integer, not '" + v + "'");
  return n;
}

}  // namespace nuphar
