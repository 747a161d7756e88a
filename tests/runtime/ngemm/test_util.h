// Test helpers for NGEMM: guard-page buffers, aligned packing, and the plain integer reference.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/kernels/ngemm/ngemm.h"

namespace nuphar::ngemm::testing {

/// `count` elements of T that end exactly at a PROT_NONE page: reading past the end faults
/// (MLAS's MatrixGuardBuffer idea).
template <class T>
class GuardBuffer {
 public:
  explicit GuardBuffer(size_t count) : count_(count) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t bytes = count * sizeof(T);
    mapped_ = (bytes + page - 1) / page * page + page;
    void* p = mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    base_ = static_cast<uint8_t*>(p);
    mprotect(base_ + mapped_ - page, page, PROT_NONE);
    data_ = reinterpret_cast<T*>(base_ + mapped_ - page - bytes);
  }
  ~GuardBuffer() { munmap(base_, mapped_); }
  GuardBuffer(const GuardBuffer&) = delete;
  GuardBuffer& operator=(const GuardBuffer&) = delete;
  T* data() { return data_; }
  T& operator[](size_t i) { return data_[i]; }
  size_t size() const { return count_; }

 private:
  size_t count_, mapped_;
  uint8_t* base_;
  T* data_;
};

/// Packed weights with their 64-byte-aligned storage.
struct OwnedPacked {
  std::unique_ptr<uint8_t, decltype(&std::free)> storage{nullptr, &std::free};
  PackedInt8Weights weights;
};

template <class T>
OwnedPacked PackOwned(const T* B, int64_t K, int64_t N, WeightType type) {
  OwnedPacked out;
  const size_t bytes = PackedInt8Weights::RequiredBytes(K, N, type);
  out.storage.reset(static_cast<uint8_t*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64)));
  std::memset(out.storage.get(), 0xcd, bytes);  // padding must be overwritten with zeros
  EXPECT_TRUE(PackedInt8Weights::Pack(B, K, N, N, out.storage.get(), &out.weights));
  return out;
}

/// Y = sum_k (A - za)(B - zb) modulo 2^32: the meaning of MatMulInteger.
template <class TA, class TB>
std::vector<int32_t> ReferenceProduct(const TA* A, const TB* B, int64_t M, int64_t K, int64_t N,
                                      const std::vector<int32_t>& za, const std::vector<int32_t>& zb) {
  std::vector<int32_t> C(static_cast<size_t>(M * N));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      int64_t sum = 0;
      const int64_t a0 = za.empty() ? 0 : za[za.size() == 1 ? 0 : m];
      const int64_t b0 = zb.empty() ? 0 : zb[zb.size() == 1 ? 0 : n];
      for (int64_t k = 0; k < K; ++k) sum += (int64_t{A[m * K + k]} - a0) * (int64_t{B[k * N + n]} - b0);
      C[m * N + n] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(sum)));
    }
  return C;
}

template <class T>
void FillRandom(T* p, size_t n, int lo, int hi, std::mt19937& rng) {
  std::uniform_int_distribution<int> d(lo, hi);
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<T>(d(rng));
}

/// Every path, one per ISA tier: parameterized tests run on each and skip, with a message, the
/// tiers this CPU lacks (so a report shows which tiers were not exercised).
inline std::vector<NgemmPath> AllPaths() {
  return {NgemmPath::kRef, NgemmPath::kAvx2, NgemmPath::kAvxVnni, NgemmPath::kAvx512, NgemmPath::kAvx512Vnni};
}

/// The paths this CPU can run (reference always).
inline std::vector<NgemmPath> AvailablePaths() {
  std::vector<NgemmPath> paths;
  for (NgemmPath p : AllPaths())
    if (NgemmPathAvailable(p)) paths.push_back(p);
  return paths;
}

inline std::string PathName(NgemmPath p) {
  switch (p) {
    case NgemmPath::kRef: return "ref";
    case NgemmPath::kAvx2: return "avx2";
    case NgemmPath::kAvxVnni: return "avxvnni";
    case NgemmPath::kAvx512: return "avx512";
    case NgemmPath::kAvx512Vnni: return "avx512vnni";
    case NgemmPath::kAuto: return "auto";
  }
  return "unknown";
}

/// For a parameterized fixture's SetUp: skips (with the tier's name) when the CPU lacks the path.
#define NGEMM_SKIP_IF_UNAVAILABLE(path)                                                          \
  do {                                                                                           \
    if (!::nuphar::ngemm::NgemmPathAvailable(path))                                              \
      GTEST_SKIP() << "this CPU lacks the " << ::nuphar::ngemm::testing::PathName(path) << " tier"; \
  } while (0)

struct PathGuard {
  explicit PathGuard(NgemmPath p) { EXPECT_TRUE(SetNgemmPathForTesting(p)); }
  ~PathGuard() { SetNgemmPathForTesting(NgemmPath::kAuto); }
};

}  // namespace nuphar::ngemm::testing
