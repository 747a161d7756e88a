// NGEMM benchmark (issue 6, acceptance 3): int8 GEMV (M = 1) and GEMM (M = 100) on packed weights
// against Eigen fp32 and oneDNN's u8s8s32 GEMM, single-threaded, same shapes, one run. After the
// benchmarks, a table of median GMAC/s and ratios goes to stderr (stdout stays valid for
// --benchmark_format=json). By default 9 repetitions are run, interleaved in random order (so a
// slow phase of a shared machine hits every contender alike), and only aggregates reported.
//
// Build flags: this file gets -mavx2 -mfma so Eigen's fp32 kernels use the same ISA as ours.
// oneDNN picks its own ISA at run time; DNNL_MAX_CPU_ISA=AVX2 limits it to the target CPU's.
#include <dlfcn.h>
#include <immintrin.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <Eigen/Core>
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/platform/thread_pool.h"

#ifdef NGEMM_BENCH_HAVE_DNNL
#include <dnnl.h>
#endif

namespace {

using nuphar::ngemm::NgemmParams;
using nuphar::ngemm::PackedInt8Weights;

const std::vector<std::pair<int64_t, int64_t>> kShapes = {{128, 512}, {256, 1024}, {512, 2048}, {1024, 4096}};
const char* const kCounter = "GMAC/s";

void SetMacCounter(benchmark::State& state, int64_t M, int64_t K, int64_t N) {
  state.counters[kCounter] = benchmark::Counter(static_cast<double>(M * K * N) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

template <class T>
std::vector<T> Random(size_t n, int lo, int hi, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> d(lo, hi);
  std::vector<T> v(n);
  for (auto& x : v) x = static_cast<T>(d(rng));
  return v;
}

/// Our kernel on the quantizer's data: A in [0, 127] (Clip(0,127) -> Cast<u8>), full-range s8 W;
/// `exact`: full-range A, so the exact mode runs. `path`: kAuto (CPUID's choice) or forced.
void BM_Ngemm(benchmark::State& state, nuphar::ngemm::NgemmPath path, bool exact, int threads) {
  if (!nuphar::ngemm::SetNgemmPathForTesting(path)) {
    state.SkipWithError("path not available on this CPU");
    return;
  }
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  const auto A = Random<uint8_t>(M * K, 0, exact ? 255 : 127, 1);
  const auto B = Random<int8_t>(K * N, -128, 127, 2);
  const size_t bytes = PackedInt8Weights::RequiredBytes(K, N);
  std::unique_ptr<void, decltype(&std::free)> storage(std::aligned_alloc(64, (bytes + 63) / 64 * 64), &std::free);
  PackedInt8Weights packed;
  if (!PackedInt8Weights::Pack(B.data(), K, N, N, storage.get(), &packed)) {
    state.SkipWithError("pack failed");
    return;
  }
  std::vector<int32_t> C(M * N);
  NgemmParams params;
  params.a_within_7bit = !exact;
  std::string why;
  if (!nuphar::ngemm::TilesFromEnvironment(&params.tiles, &why)) {
    state.SkipWithError(why.c_str());
    return;
  }
  // More than one thread: the session's pool with the README's suggested split threshold.
  std::unique_ptr<nuphar::ThreadPool> pool;
  if (threads > 1) {
    pool = nuphar::ThreadPool::Create(threads);
    params.tiles.pool = pool.get();
    params.tiles.parallel_min_work = 131072;
  }
  for (auto _ : state) {
    nuphar::ngemm::NgemmU8S8(A.data(), M, K, K, packed, C.data(), N, params);
    benchmark::DoNotOptimize(C.data());
    benchmark::ClobberMemory();
  }
  SetMacCounter(state, M, K, N);
  state.SetLabel(std::string(nuphar::ngemm::GetNgemmDispatch().name) + " " +
                 nuphar::ngemm::ModeName(nuphar::ngemm::ChooseNgemmMode(packed, params)));
  nuphar::ngemm::SetNgemmPathForTesting(nuphar::ngemm::NgemmPath::kAuto);
}

void BM_EigenF32(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> a(M * K), b(K * N), c(M * N);
  for (auto& x : a) x = d(rng);
  for (auto& x : b) x = d(rng);
  Eigen::Map<const RowMajor> A(a.data(), M, K), B(b.data(), K, N);
  Eigen::Map<RowMajor> C(c.data(), M, N);
  for (auto _ : state) {
    if (M == 1) {
      C.row(0).noalias() = A.row(0) * B;  // GEMV
    } else {
      C.noalias() = A * B;
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  SetMacCounter(state, M, K, N);
}

#ifdef NGEMM_BENCH_HAVE_DNNL
void BM_DnnlU8S8S32(benchmark::State& state) {
  const int64_t M = state.range(0), K = state.range(1), N = state.range(2);
  const auto A = Random<uint8_t>(M * K, 0, 127, 1);
  const auto B = Random<int8_t>(K * N, -128, 127, 2);
  std::vector<int32_t> C(M * N);
  const int32_t c_offset = 0;
  for (auto _ : state) {
    const dnnl_status_t s = dnnl_gemm_u8s8s32('N', 'N', 'F', M, N, K, 1.0f, A.data(), K, 0, B.data(), N, 0, 0.0f,
                                              C.data(), N, &c_offset);
    if (s != dnnl_success) {
      state.SkipWithError("dnnl_gemm_u8s8s32 failed");
      break;
    }
    benchmark::DoNotOptimize(C.data());
    benchmark::ClobberMemory();
  }
  SetMacCounter(state, M, K, N);
}
#endif

/// Register-only ceilings of this core, measured in the same run as the kernels: the u8 x s8
/// sequence every AVX2 kernel without VNNI is built from (vpmaddubsw + vpmaddwd(ones) + vpaddd,
/// 32 MAC) and fp32 FMA (8 MAC), each on 12 independent accumulators, no memory traffic. Their
/// ratio bounds what any int8 kernel can gain over a compute-bound fp32 GEMM on this CPU.
// `prologue`, then n times `STEP` on each of the 12 accumulators ymm0..ymm11.
#define NGEMM_CEILING_LOOP(n, prologue, STEP)                                                                  \
  asm volatile(prologue "1:\n\t" STEP("ymm0") STEP("ymm1") STEP("ymm2") STEP("ymm3") STEP("ymm4") STEP("ymm5") \
                   STEP("ymm6") STEP("ymm7") STEP("ymm8") STEP("ymm9") STEP("ymm10") STEP("ymm11")             \
               "dec %[n]\n\tjnz 1b\n\t"                                                                        \
               : [n] "+r"(n)                                                                                   \
               :                                                                                               \
               : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10",      \
                 "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "cc")
#define NGEMM_U8S8_STEP(acc) \
  "vpmaddubsw %%ymm13, %%ymm12, %%ymm14\n\tvpmaddwd %%ymm15, %%ymm14, %%ymm14\n\tvpaddd %%ymm14, %%" acc ", %%" acc "\n\t"
#define NGEMM_FMA_STEP(acc) "vfmadd231ps %%ymm13, %%ymm12, %%" acc "\n\t"

void U8S8CeilingLoop(int64_t n) {
  NGEMM_CEILING_LOOP(n, "vpcmpeqw %%ymm15, %%ymm15, %%ymm15\n\tvpsrlw $15, %%ymm15, %%ymm15\n\t"
                        "vpabsb %%ymm15, %%ymm12\n\tvpabsb %%ymm15, %%ymm13\n\t", NGEMM_U8S8_STEP);
}
void FmaCeilingLoop(int64_t n) {
  NGEMM_CEILING_LOOP(n, "vxorps %%xmm12, %%xmm12, %%xmm12\n\tvxorps %%xmm13, %%xmm13, %%xmm13\n\t", NGEMM_FMA_STEP);
}

void BM_Ceiling(benchmark::State& state, void (*loop)(int64_t), int64_t mac_per_step) {
  constexpr int64_t kIters = 1 << 16;
  for (auto _ : state) loop(kIters);
  state.counters[kCounter] = benchmark::Counter(static_cast<double>(kIters * 12 * mac_per_step) * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

/// Adds the "max" aggregate: for the GMAC/s counter it is the best repetition (for the times it
/// is the worst), a second view next to the median on a shared, noisy machine.
benchmark::internal::Benchmark* WithMax(benchmark::internal::Benchmark* b) {
  return b->ComputeStatistics("max", [](const std::vector<double>& v) { return *std::max_element(v.begin(), v.end()); });
}

/// Read ceiling of a GEMV: streams the K x N weight bytes (one byte per MAC for int8 weights)
/// from wherever they live at this size (L2 for 256 KB) with plain 64-byte loads and no
/// arithmetic. No int8 GEMV of that shape can beat it on one core; counted as GMAC/s.
__attribute__((target("avx512f"))) void BM_ReadCeiling(benchmark::State& state) {
  const int64_t bytes = state.range(1) * state.range(2);
  std::unique_ptr<void, decltype(&std::free)> storage(std::aligned_alloc(64, bytes), &std::free);
  auto* p = static_cast<uint8_t*>(storage.get());
  for (int64_t i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(i);
  __m512i acc0 = _mm512_setzero_si512(), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (auto _ : state) {
    for (int64_t i = 0; i < bytes; i += 256) {
      acc0 = _mm512_xor_si512(acc0, _mm512_load_si512(p + i));
      acc1 = _mm512_xor_si512(acc1, _mm512_load_si512(p + i + 64));
      acc2 = _mm512_xor_si512(acc2, _mm512_load_si512(p + i + 128));
      acc3 = _mm512_xor_si512(acc3, _mm512_load_si512(p + i + 192));
    }
    benchmark::DoNotOptimize(acc0);
    benchmark::DoNotOptimize(acc1);
    benchmark::DoNotOptimize(acc2);
    benchmark::DoNotOptimize(acc3);
  }
  SetMacCounter(state, 1, state.range(1), state.range(2));
}

std::string TierRowName(nuphar::ngemm::NgemmPath path) {
  using nuphar::ngemm::NgemmPath;
  switch (path) {
    case NgemmPath::kAvx512Vnni: return "avx512vnni";
    case NgemmPath::kAvx512: return "avx512";
    case NgemmPath::kAvxVnni: return "avxvnni";
    case NgemmPath::kAvx2: return "avx2";
    default: return "ref";
  }
}

void RegisterAll() {
  WithMax(benchmark::RegisterBenchmark("ceiling_u8s8_avx2", BM_Ceiling, U8S8CeilingLoop, 32));
  WithMax(benchmark::RegisterBenchmark("ceiling_fp32_fma", BM_Ceiling, FmaCeilingLoop, 8));
  for (int64_t M : {1, 100}) {
    for (const auto& [K, N] : kShapes) {
      const std::vector<int64_t> args = {M, K, N};
      const std::vector<std::string> names = {"M", "K", "N"};
      using nuphar::ngemm::NgemmPath;
      // One row per tier this machine has, each named after its tier; the AVX2 exact mode too
      // (the VNNI tiers have no separate exact mode: vpdpbusd never saturates).
      for (NgemmPath path : {NgemmPath::kAvx512Vnni, NgemmPath::kAvx512, NgemmPath::kAvxVnni, NgemmPath::kAvx2}) {
        if (!nuphar::ngemm::NgemmPathAvailable(path)) continue;
        const std::string tier = TierRowName(path);
        WithMax(benchmark::RegisterBenchmark(("ngemm_int8_" + tier).c_str(), BM_Ngemm, path, false, 1))->Args(args)->ArgNames(names);
      }
      if (nuphar::ngemm::NgemmPathAvailable(NgemmPath::kAvx2))
        WithMax(benchmark::RegisterBenchmark("ngemm_int8_avx2_exact", BM_Ngemm, NgemmPath::kAvx2, true, 1))->Args(args)->ArgNames(names);
      // Two threads on the best tier (issue 12: GEMM M=100 1024x4096 at least 1.8x one thread).
      for (NgemmPath path : {NgemmPath::kAvx512Vnni, NgemmPath::kAvx512, NgemmPath::kAvxVnni, NgemmPath::kAvx2}) {
        if (!nuphar::ngemm::NgemmPathAvailable(path)) continue;
        WithMax(benchmark::RegisterBenchmark(("ngemm_int8_" + TierRowName(path) + "_2threads").c_str(), BM_Ngemm, path,
                                             false, 2))
            ->Args(args)
            ->ArgNames(names)
            ->UseRealTime();
        break;
      }
      WithMax(benchmark::RegisterBenchmark("eigen_fp32", BM_EigenF32))->Args(args)->ArgNames(names);
      if (M == 1 && __builtin_cpu_supports("avx512f"))
        WithMax(benchmark::RegisterBenchmark("ceiling_read", BM_ReadCeiling))->Args(args)->ArgNames(names);
#ifdef NGEMM_BENCH_HAVE_DNNL
      WithMax(benchmark::RegisterBenchmark("onednn_u8s8s32", BM_DnnlU8S8S32))->Args(args)->ArgNames(names);
#endif
    }
  }
}

/// Forwards to the reporter chosen by --benchmark_format and keeps the runs for the ratio table.
class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  explicit CollectingReporter(benchmark::BenchmarkReporter* inner) : inner_(inner) {}
  bool ReportContext(const Context& context) override { return inner_->ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    inner_->ReportRuns(runs);
    for (const Run& r : runs) {
      if (r.error_occurred) continue;
      const bool aggregate = r.run_type == Run::RT_Aggregate && (r.aggregate_name == "median" || r.aggregate_name == "max");
      const bool single = r.run_type == Run::RT_Iteration && r.repetitions <= 1;
      if (!aggregate && !single) continue;
      auto it = r.counters.find(kCounter);
      if (it == r.counters.end()) continue;
      // run_name.function_name is the registered name; args are "M:1/K:256/N:1024".
      const std::string stat = single ? "median" : r.aggregate_name;
      gmacs_[{stat, r.run_name.function_name + "|" + r.run_name.args}] = it->second.value;
      if (single) gmacs_[{"max", r.run_name.function_name + "|" + r.run_name.args}] = it->second.value;
    }
  }
  void Finalize() override { inner_->Finalize(); }

  void PrintRatioTables() const {
    PrintRatioTable("median");
    PrintRatioTable("max");
  }

  void PrintRatioTable(const std::string& stat) const {
    stat_ = stat;
    // The best tier this machine has (its own row), next to the AVX2 row of issue 6's targets.
    std::string best = "avx2";
    for (nuphar::ngemm::NgemmPath p : {nuphar::ngemm::NgemmPath::kAvx512Vnni, nuphar::ngemm::NgemmPath::kAvx512,
                                       nuphar::ngemm::NgemmPath::kAvxVnni}) {
      if (nuphar::ngemm::NgemmPathAvailable(p)) {
        best = TierRowName(p);
        break;
      }
    }
    const std::string& auto_name = best;
    std::fprintf(stderr, "\n%s GMAC/s over repetitions (1 thread). int8 = AVX2 tier, exact = AVX2 exact mode,\n"
                         "%s = this host's best tier. Issue 6 targets: the AVX2 tier; issue 12 targets: the best tier\n"
                         "(GEMV 256x1024 >= 1.8x AVX2 and >= 3x oneDNN; GEMM M=100 >= 1.0x oneDNN).\n",
                 stat == "max" ? "Best (max)" : "Median", auto_name.c_str());
    std::fprintf(stderr, "%-20s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s  %s\n", "shape", "int8", "exact", auto_name.c_str(),
                 "eigen", "onednn", "x eigen", "x onednn", "best/eig", "best/dnn", "best/avx2", "targets");
    const double ceil_int8 = Get("ceiling_u8s8_avx2", ""), ceil_fp32 = Get("ceiling_fp32_fma", "");
    if (ceil_int8 > 0 && ceil_fp32 > 0)
      std::fprintf(stderr, "%-20s %8.1f %8s %8s %8.1f %8s %8.2f   (register-only: int8/fp32 is the most any AVX2 int8 kernel gains on a compute-bound GEMM)\n",
                   "ceiling", ceil_int8, "", "", ceil_fp32, "", ceil_int8 / ceil_fp32);
    for (int64_t M : {1, 100}) {
      for (const auto& [K, N] : kShapes) {
        char args[64];
        std::snprintf(args, sizeof(args), "M:%lld/K:%lld/N:%lld", static_cast<long long>(M), static_cast<long long>(K),
                      static_cast<long long>(N));
        const double ours = Get("ngemm_int8_avx2", args), exact = Get("ngemm_int8_avx2_exact", args);
        const double host = Get("ngemm_int8_" + best, args);
        const double eigen = Get("eigen_fp32", args), dnnl = Get("onednn_u8s8s32", args);
        if (ours <= 0) continue;
        const double re = eigen > 0 ? ours / eigen : 0, rd = dnnl > 0 ? ours / dnnl : 0;
        std::string target;
        if (M == 1) {
          const double want_e = K == 256 ? 3.5 : (K == 1024 ? 3.0 : 0.0);
          if (want_e > 0) target += Check(re, want_e, "x eigen");
          target += Check(rd, 3.0, "x onednn");
          if (K == 256) target += ours >= 75.0 ? " >=75GMAC/s ok" : " >=75GMAC/s MISS";
        } else {
          target += Check(re, 2.5, "x eigen");
          target += Check(rd, 1.0, "x onednn");
        }
        char shape[48];
        std::snprintf(shape, sizeof(shape), "%s %lldx%lld", M == 1 ? "GEMV" : "GEMM100", static_cast<long long>(K),
                      static_cast<long long>(N));
        const double hd = dnnl > 0 ? host / dnnl : 0.0, ha = ours > 0 ? host / ours : 0.0;
        const double read = Get("ceiling_read", args);
        const double two = Get("ngemm_int8_" + best + "_2threads", args);
        if (two > 0 && host > 0) {
          char buf[80];
          std::snprintf(buf, sizeof(buf), " [2 threads %.1f = %.2fx 1 thread%s]", two, two / host,
                        M != 1 && K == 1024 ? (two / host >= 1.8 ? ", >=1.8x ok" : ", >=1.8x MISS") : "");
          target += buf;
        }
        if (M == 1 && read > 0) {
          char buf[96];
          std::snprintf(buf, sizeof(buf), " [read ceiling %.1f: best tier at %.0f%%, max over avx2 %.2fx]", read,
                        100.0 * host / read, ours > 0 ? read / ours : 0.0);
          target += buf;
        }
        if (best != "avx2") {
          if (M == 1 && K == 256) {
            target += " |" + best + Check(ha, 1.8, "x avx2") + Check(hd, 3.0, "x onednn");
          } else if (M != 1) {
            target += " |" + best + Check(hd, 1.0, "x onednn");
          }
        }
        std::fprintf(stderr, "%-20s %8.1f %8.1f %8.1f %8.1f %8.1f %8.2f %8.2f %8.2f %8.2f %8.2f %s\n", shape, ours, exact, host,
                     eigen, dnnl, re, rd, eigen > 0 ? host / eigen : 0.0, hd, ha, target.c_str());
      }
    }
  }

 private:
  double Get(const std::string& name, const std::string& args) const {
    auto it = gmacs_.find({stat_, name + "|" + args});
    return it == gmacs_.end() ? 0.0 : it->second;
  }
  static std::string Check(double ratio, double want, const char* what) {
    if (ratio <= 0) return std::string(" ") + what + " n/a";
    char buf[64];
    std::snprintf(buf, sizeof(buf), " >=%.1f%s %s", want, what, ratio >= want ? "ok" : "MISS");
    return buf;
  }
  benchmark::BenchmarkReporter* inner_;
  mutable std::string stat_ = "median";
  std::map<std::pair<std::string, std::string>, double> gmacs_;
};

/// One thread everywhere: Eigen explicitly; oneDNN (OpenMP build in Debian) through libgomp's
/// omp_set_num_threads, looked up at run time because OMP_NUM_THREADS is read before main().
void SingleThreaded() {
  Eigen::setNbThreads(1);
  if (auto* set_threads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"))) set_threads(1);
}

}  // namespace

int main(int argc, char** argv) {
  // Defaults that make the table meaningful on a shared, noisy machine; flags given by the user win.
  std::vector<char*> args(argv, argv + argc);
  std::string reps = "--benchmark_repetitions=9", aggregates = "--benchmark_report_aggregates_only=true";
  std::string interleave = "--benchmark_enable_random_interleaving=true", min_time = "--benchmark_min_time=0.2";
  auto given = [&](const char* flag) {
    return std::any_of(argv + 1, argv + argc, [&](const char* a) { return std::strncmp(a, flag, std::strlen(flag)) == 0; });
  };
  if (!given("--benchmark_repetitions")) args.insert(args.begin() + 1, reps.data());
  if (!given("--benchmark_enable_random_interleaving")) args.insert(args.begin() + 1, interleave.data());
  if (!given("--benchmark_min_time")) args.insert(args.begin() + 1, min_time.data());
  if (!given("--benchmark_report_aggregates_only") && !given("--benchmark_display_aggregates_only"))
    args.insert(args.begin() + 1, aggregates.data());
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;
  SingleThreaded();
  RegisterAll();
  std::unique_ptr<benchmark::BenchmarkReporter> display(benchmark::CreateDefaultDisplayReporter());
  CollectingReporter collector(display.get());
  benchmark::RunSpecifiedBenchmarks(&collector);
  collector.PrintRatioTables();
  benchmark::Shutdown();
  return 0;
}
