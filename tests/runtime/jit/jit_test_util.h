// Helpers of the JIT tests: random inputs, sessions, and the bit-identity check of a model on the
// JIT against the reference executor.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "graph/diagnostics.h"
#include "runtime/session.h"

namespace nuphar::testing {

inline Tensor Random(const std::vector<int64_t>& shape, uint32_t seed, float lo = -4.f, float hi = 4.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(rng);
  return Tensor::FromVector<float>(shape, v);
}

inline std::unique_ptr<Session> Open(const onnx::ModelProto& model, const std::string& settings) {
  SessionOptions opts;
  opts.settings = settings;
  auto s = Session::CreateFromModel(model, opts);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(*s) : nullptr;
}

// Runs `model` on the reference executor and on the JIT (with `settings`, e.g. a forced
// nuphar_codegen_target); outputs must be bit-identical (the generated code performs the
// reference's float operations in the same order, and integers and bools exactly).
inline void ExpectBitIdentical(const onnx::ModelProto& model, const NamedTensors& feeds, int64_t expect_jit_nodes,
                               const std::string& settings = "") {
  auto ref = Open(model, "nuphar_execution_mode:reference");
  auto jit = Open(model, settings);
  ASSERT_TRUE(ref && jit);
  EXPECT_EQ(jit->counter("jit_nodes"), expect_jit_nodes);
  EXPECT_GT(jit->counter("jit_kernels"), 0);
  EXPECT_EQ(ref->counter("jit_kernels"), 0);
  auto a = ref->Run(feeds);
  auto b = jit->Run(feeds);
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  ASSERT_EQ(a->size(), b->size());
  for (size_t o = 0; o < a->size(); ++o) {
    ASSERT_EQ((*a)[o].dtype(), (*b)[o].dtype()) << "output " << o;
    ASSERT_EQ((*a)[o].shape(), (*b)[o].shape()) << "output " << o;
    ASSERT_EQ((*a)[o].bytes(), (*b)[o].bytes());
    EXPECT_EQ(std::memcmp((*a)[o].raw(), (*b)[o].raw(), (*a)[o].bytes()), 0) << "output " << o << " differs";
  }
}

// Every codegen tier (nuphar_codegen_target), each forced in turn by the tests that sweep them.
inline constexpr const char* kCodegenTiers[] = {"avx2", "avxvnni", "avx512", "avx512vnni"};
inline std::string TierSettings(const char* tier) { return std::string("nuphar_codegen_target:") + tier; }

// The notes a capture holds, one per line (partition dumps, compare reports).
inline std::string NoteText(const DiagnosticCapture& capture) {
  std::string notes;
  for (const auto& line : capture.Texts(Severity::kNote)) notes += line + "\n";
  return notes;
}

}  // namespace nuphar::testing
