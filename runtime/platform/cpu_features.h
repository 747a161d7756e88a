// What the CPU can run, read once from CPUID, and the ISA tiers every CPU-dependent kernel family
// dispatches over (spec runtime.md R7). The one place that asks CPUID: NGEMM's dispatch, the fp32
// GEMM/GEMV dispatch and vector math all fill their tables from ActiveIsaTier() (STYLE R11).
//
// # Tiers and their fallback
//
//   avx512vnni  AVX-512 F/BW/VL/DQ + AVX512-VNNI (EVEX vpdpbusd)   -> avx512
//   avx512      AVX-512 F/BW/VL/DQ, no VNNI                         -> avx2
//   avxvnni     AVX2 + FMA + AVX-VNNI (VEX vpdpbusd on ymm)         -> avx2
//   avx2        AVX2 + FMA + F16C                                   -> portable
//   portable    baseline x86-64
//
// A kernel family with no code of its own for a tier runs its fallback's (SelectForTier), so a
// new tier needs no edit in families that gain nothing from it.
//
// # Forcing a tier
//
// NUPHAR_CODEGEN_TARGET (read once per process) forces a tier the CPU supports, for tests and
// benchmarks; the session setting nuphar_codegen_target does the same for the int8 kernels of one
// session. Session::Create rejects an unknown name or a tier this CPU lacks (ValidateIsaTier).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace nuphar {

enum class IsaTier : uint8_t { kPortable = 0, kAvx2, kAvxVnni, kAvx512, kAvx512Vnni };
inline constexpr int kIsaTierCount = 5;

/// CPUID bits (with the OS's XSAVE support, as __builtin_cpu_supports checks it).
struct CpuFeatures {
  bool avx2 = false, fma = false, f16c = false, avxvnni = false;
  bool avx512f = false, avx512bw = false, avx512vl = false, avx512dq = false, avx512vnni = false;

  static CpuFeatures Detect();
  bool Supports(IsaTier tier) const;
  /// The highest tier this CPU supports.
  IsaTier BestTier() const;
};

/// The host's features, detected once.
const CpuFeatures& HostCpu();

const char* IsaTierName(IsaTier tier);
/// "avx512vnni", "avx512", "avxvnni", "avx2", "portable" (case-insensitive; "ref" = portable).
std::optional<IsaTier> ParseIsaTier(std::string_view name);
/// The tier a family without its own code for `tier` runs instead (portable stays portable).
IsaTier FallbackTier(IsaTier tier);
/// Every tier the host supports, highest first ("avx512vnni, avx512, avx2, portable").
std::string SupportedTierList();

/// nuphar_codegen_target / NUPHAR_CODEGEN_TARGET value check: empty is fine; otherwise a known
/// name of a tier this CPU supports. On error returns false with a message naming `what`.
bool ValidateIsaTier(std::string_view name, const char* what, std::string* error);

/// The tier the process's kernels run: a tier forced for testing, else NUPHAR_CODEGEN_TARGET when
/// set and supported (read once), else the host's best.
IsaTier ActiveIsaTier();
/// Forces the process tier (nullopt restores the default). Returns false, changing nothing, for
/// a tier the CPU lacks. Tests and benchmarks only: call before starting work.
bool ForceIsaTierForTesting(std::optional<IsaTier> tier);

/// table[t] for the first tier at or below `tier` (along FallbackTier) whose entry is not null.
/// table[kPortable] must be set.
template <class T>
const T& SelectForTier(const T* const (&table)[kIsaTierCount], IsaTier tier) {
  while (table[static_cast<int>(tier)] == nullptr) tier = FallbackTier(tier);
  return *table[static_cast<int>(tier)];
}

}  // namespace nuphar
