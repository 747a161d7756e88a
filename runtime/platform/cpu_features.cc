// CPUID once, the tier names, and the process tier (cpu_features.h).
#include "runtime/platform/cpu_features.h"

#include <cpuid.h>

#include <atomic>
#include <cctype>
#include <cstdlib>

namespace nuphar {

namespace {

constexpr const char* kNames[kIsaTierCount] = {"portable", "avx2", "avxvnni", "avx512", "avx512vnni"};

// -1: not forced; otherwise the forced IsaTier.
std::atomic<int> g_forced_tier{-1};

IsaTier ProcessDefaultTier() {
  static const IsaTier tier = [] {
    const CpuFeatures& cpu = HostCpu();
    const char* env = std::getenv("NUPHAR_CODEGEN_TARGET");
    if (env != nullptr && *env != '\0') {
      const std::optional<IsaTier> wanted = ParseIsaTier(env);
      // An unknown or unsupported value is reported by Session::Create (ValidateIsaTier); the
      // kernels never run code the CPU lacks.
      if (wanted && cpu.Supports(*wanted)) return *wanted;
    }
    return cpu.BestTier();
  }();
  return tier;
}

}  // namespace

CpuFeatures CpuFeatures::Detect() {
  __builtin_cpu_init();
  CpuFeatures f;
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  // clang 14's __builtin_cpu_supports knows neither "f16c" nor "avxvnni": read those two bits
  // from CPUID (leaf 1 ECX bit 29; leaf 7 subleaf 1 EAX bit 4). Both use the ymm state that the
  // avx2 check above has already found enabled by the OS.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) f.f16c = f.avx2 && (ecx & (1u << 29)) != 0;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) f.avxvnni = f.avx2 && (eax & (1u << 4)) != 0;
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512dq = __builtin_cpu_supports("avx512dq");
  f.avx512vnni = __builtin_cpu_supports("avx512vnni");
  return f;
}

bool CpuFeatures::Supports(IsaTier tier) const {
  const bool avx2_tier = avx2 && fma && f16c;
  const bool avx512_tier = avx2_tier && avx512f && avx512bw && avx512vl && avx512dq;
  switch (tier) {
    case IsaTier::kPortable: return true;
    case IsaTier::kAvx2: return avx2_tier;
    case IsaTier::kAvxVnni: return avx2_tier && avxvnni;
    case IsaTier::kAvx512: return avx512_tier;
    case IsaTier::kAvx512Vnni: return avx512_tier && avx512vnni;
  }
  return false;
}

IsaTier CpuFeatures::BestTier() const {
  for (int t = kIsaTierCount - 1; t > 0; --t) {
    if (Supports(static_cast<IsaTier>(t))) return static_cast<IsaTier>(t);
  }
  return IsaTier::kPortable;
}

const CpuFeatures& HostCpu() {
  static const CpuFeatures features = CpuFeatures::Detect();
  return features;
}

const char* IsaTierName(IsaTier tier) { return kNames[static_cast<int>(tier)]; }

std::optional<IsaTier> ParseIsaTier(std::string_view name) {
  std::string lower;
  for (char c : name) {
    if (!std::isspace(static_cast<unsigned char>(c))) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  if (lower == "ref") return IsaTier::kPortable;
  for (int t = 0; t < kIsaTierCount; ++t) {
    if (lower == kNames[t]) return static_cast<IsaTier>(t);
  }
  return std::nullopt;
}

IsaTier FallbackTier(IsaTier tier) {
  switch (tier) {
    case IsaTier::kAvx512Vnni: return IsaTier::kAvx512;
    case IsaTier::kAvx512: return IsaTier::kAvx2;
    case IsaTier::kAvxVnni: return IsaTier::kAvx2;
    case IsaTier::kAvx2: return IsaTier::kPortable;
    case IsaTier::kPortable: return IsaTier::kPortable;
  }
  return IsaTier::kPortable;
}

std::string SupportedTierList() {
  std::string list;
  for (int t = kIsaTierCount - 1; t >= 0; --t) {
    if (!HostCpu().Supports(static_cast<IsaTier>(t))) continue;
    if (!list.empty()) list += ", ";
    list += kNames[t];
  }
  return list;
}

bool ValidateIsaTier(std::string_view name, const char* what, std::string* error) {
  if (name.find_first_not_of(" \t") == std::string_view::npos) return true;
  const std::optional<IsaTier> tier = ParseIsaTier(name);
  if (!tier) {
    *error = std::string(what) + "='" + std::string(name) +
             "' is not a tier (avx512vnni, avx512, avxvnni, avx2, portable)";
    return false;
  }
  if (!HostCpu().Supports(*tier)) {
    *error = std::string(what) + "='" + std::string(name) + "': this CPU does not support it (supported: " +
             SupportedTierList() + ")";
    return false;
  }
  return true;
}

IsaTier ActiveIsaTier() {
  const int forced = g_forced_tier.load(std::memory_order_acquire);
  return forced >= 0 ? static_cast<IsaTier>(forced) : ProcessDefaultTier();
}

bool ForceIsaTierForTesting(std::optional<IsaTier> tier) {
  if (!tier) {
    g_forced_tier.store(-1, std::memory_order_release);
    return true;
  }
  if (!HostCpu().Supports(*tier)) return false;
  g_forced_tier.store(static_cast<int>(*tier), std::memory_order_release);
  return true;
}

}  // namespace nuphar
