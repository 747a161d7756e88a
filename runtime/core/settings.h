// Per-session runtime settings (spec runtime.md R5), never a process global.
//
// Format: "key:value, key:value". Pairs split on commas, each pair at its first ':' (so
// "nuphar_cache_path:C:\x" works); keys and values are trimmed; an empty string means no
// options; an unknown key is an error. Every key also reads the environment variable of the
// same name upper-cased (NUPHAR_*, CODEGEN_*, DUMP_ALL_OPTIONS). Precedence: built-in default <
// environment < explicit string; an explicit key hides its environment variable with a warning.
// Values keep their case and compare case-insensitively.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/error.h"

namespace nuphar {

class Settings {
 public:
  /// Parses `text` and merges the environment. `warnings` receives one line per hidden env var.
  static Expected<Settings> Parse(const std::string& text, std::vector<std::string>* warnings = nullptr);

  bool Has(const std::string& key) const { return values_.count(key) > 0; }
  /// The value, or `fallback` when unset.
  std::string Get(const std::string& key, const std::string& fallback = "") const;
  /// Case-insensitive comparison of the value.
  bool Is(const std::string& key, const std::string& value) const;
  /// An integer setting; a non-integer value is an error naming the key.
  Expected<long long> GetInt(const std::string& key, long long fallback) const;
  const std::map<std::string, std::string>& values() const { return values_; }

  /// Every key the runtime knows, in documentation order.
  static const std::vector<std::string>& KnownKeys();

 private:
  std::map<std::string, std::string> values_;
};

}  // namespace nuphar
