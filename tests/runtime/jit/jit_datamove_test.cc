// Generated data movement against the reference executor: Transpose, Slice (negative steps,
// computed bounds), Concat, Gather (any axis, constant or computed int32/int64 indices, negative
// and out-of-range ones), constant Pad (negative pads), Shape, Size, Cast (every conversion it
// takes) and the views (Reshape to a computed shape too), for float, int64, uint8 and bool
// elements, static and symbolic dims at several sizes, on two tiers; the fallback when actual
// shapes do not fit, shared code of identical kernels and the partition dump. Compare mode
// proves each Run took the generated code (its report counts the runs it checked).
#include <gtest/gtest.h>

#include <limits>

#include <cmath>
#include <cstring>
#include <random>

#include "graph/diagnostics.h"
#include "graph/tensor_data.h"
#include "runtime/core/tensor_proto.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::Dim;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::SetAttr;

// Distinct values of `dtype` (every byte pattern differs, so a misplaced element shows).
Tensor Values(DType dtype, const std::vector<int64_t>& shape, uint32_t seed) {
  std::mt19937 rng(seed);
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  switch (dtype) {
    case DType::kInt64: {
      std::vector<int64_t> v(static_cast<size_t>(n));
      for (auto& x : v) x = static_cast<int64_t>(rng()) << 20 | rng() % 1000;
      return Tensor::FromVector<int64_t>(shape, v);
    }
    case DType::kUint8: {
      std::vector<uint8_t> v(static_cast<size_t>(n));
      for (auto& x : v) x = static_cast<uint8_t>(rng());
      return Tensor::FromVector<uint8_t>(shape, v);
    }
    case DType::kBool: {
      std::vector<bool> b(static_cast<size_t>(n));
      std::vector<uint8_t> v(static_cast<size_t>(n));
      for (auto& x : v) x = rng() % 2;
      Tensor t = Tensor::FromVector<uint8_t>(shape, v);
      Tensor out(DType::kBool, shape);
      std::memcpy(out.raw(), t.raw(), t.bytes());
      return out;
    }
    default: {
      std::uniform_real_distribution<float> dist(-4.f, 4.f);
      std::vector<float> v(static_cast<size_t>(n));
      for (auto& x : v) x = dist(rng);
      return Tensor::FromVector<float>(shape, v);
    }
  }
}

void AddInitializer(onnx::GraphProto& g, const std::string& name, const Tensor& t) {
  *g.add_initializer() = TensorToProto(t, name);
}

Tensor Ints(const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v); }

std::unique_ptr<Session> Open(const onnx::ModelProto& model, const std::string& settings) {
  SessionOptions opts;
  opts.settings = settings;
  auto s = Session::CreateFromModel(model, opts);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(*s) : nullptr;
}

// Runs every feed on the reference executor and on the JIT in compare mode: outputs identical
// byte for byte, the node taken by the JIT, and (copies) every Run checked by compare mode, so
// every Run ran the generated code rather than the fallback.
void ExpectGeneratedIdentical(const onnx::ModelProto& model, const std::vector<NamedTensors>& feeds, bool view = false,
                              const std::string& settings = "") {
  DiagnosticCapture capture;
  {
    auto ref = Open(model, "nuphar_execution_mode:reference");
    auto jit = Open(model, "nuphar_execution_mode:compare" + (settings.empty() ? "" : "," + settings));
    ASSERT_TRUE(ref && jit);
    EXPECT_EQ(jit->counter("jit_nodes"), 1);
    EXPECT_EQ(jit->counter("jit_kernels"), view ? 0 : 1);
    for (size_t f = 0; f < feeds.size(); ++f) {
      SCOPED_TRACE("feed " + std::to_string(f));
      auto a = ref->Run(feeds[f]);
      auto b = jit->Run(feeds[f]);
      ASSERT_TRUE(a.ok()) << a.message();
      ASSERT_TRUE(b.ok()) << b.message();
      ASSERT_EQ(a->size(), b->size());
      for (size_t o = 0; o < a->size(); ++o) {
        ASSERT_EQ((*a)[o].dtype(), (*b)[o].dtype());
        ASSERT_EQ((*a)[o].shape(), (*b)[o].shape());
        EXPECT_EQ(std::memcmp((*a)[o].raw(), (*b)[o].raw(), (*a)[o].bytes()), 0) << "output " << o << " differs";
      }
    }
  }
  if (view) return;
  std::string notes;
  for (const auto& line : capture.Texts(Severity::kNote)) notes += line + "\n";
  EXPECT_NE(notes.find(": " + std::to_string(feeds.size()) + " run(s), identical"), std::string::npos) << notes;
}

// One node `op` over input "x" of declared `dims` (constants as initializers) into "y".
struct OneNode {
  onnx::GraphProto g;
  onnx::NodeProto* node;
  OneNode(const std::string& op, DType dtype, const std::vector<Dim>& dims, std::vector<std::string> extra = {}) {
    g.set_name("g");
    *g.add_input() = MakeValueInfo("x", dtype, dims);
    std::vector<std::string> inputs = {"x"};
    inputs.insert(inputs.end(), extra.begin(), extra.end());
    node = &AddNode(g, op, inputs, {"y"}, op + "_node");
  }
  // The output declared as the shape inference of a model tool would (rank known).
  onnx::ModelProto Model(DType out, const std::vector<Dim>& out_dims, int opset = 13) {
    *g.add_output() = MakeValueInfo("y", out, out_dims);
    return MakeModel(g, opset);
  }
};

const std::vector<DType> kTypes = {DType::kFloat, DType::kInt64, DType::kUint8, DType::kBool};

TEST(JitDataMove, TransposeEveryTypeAndSymbolicDims) {
  for (DType t : kTypes) {
    SCOPED_TRACE(DTypeName(t));
    for (std::vector<int64_t> perm : {std::vector<int64_t>{2, 0, 1}, {1, 0, 2}, {}}) {
      OneNode m("Transpose", t, {int64_t{2}, std::string("T"), int64_t{5}});
      if (!perm.empty()) SetAttr(*m.node, "perm", perm);
      const auto model = m.Model(t, {std::string("a"), std::string("b"), std::string("c")});
      ExpectGeneratedIdentical(model, {{{"x", Values(t, {2, 3, 5}, 1)}}, {{"x", Values(t, {2, 17, 5}, 2)}}});
    }
  }
}

// Loops merge per call where the copy is contiguous (a moved unit dim, a batch of 1): the merged
// plan must move the same elements, on the static and the symbolic declaration alike.
TEST(JitDataMove, TransposeWhoseLoopsMerge) {
  for (bool symbolic : {false, true}) {
    SCOPED_TRACE(symbolic);
    OneNode m("Transpose", DType::kFloat, {symbolic ? Dim(std::string("T")) : Dim(int64_t{33}), int64_t{2}, int64_t{1}, int64_t{4}});
    SetAttr(*m.node, "perm", std::vector<int64_t>{0, 2, 1, 3});
    const auto model = m.Model(DType::kFloat, {std::string("a"), int64_t{1}, int64_t{2}, int64_t{4}});
    std::vector<NamedTensors> feeds = {{{"x", Values(DType::kFloat, {33, 2, 1, 4}, 30)}}};
    if (symbolic) feeds.push_back({{"x", Values(DType::kFloat, {1, 2, 1, 4}, 31)}});
    ExpectGeneratedIdentical(model, feeds);
  }
  OneNode m("Transpose", DType::kInt64, {std::string("B"), int64_t{3}, std::string("T")});
  SetAttr(*m.node, "perm", std::vector<int64_t>{2, 0, 1});
  ExpectGeneratedIdentical(m.Model(DType::kInt64, {std::string("a"), std::string("b"), int64_t{3}}),
                           {{{"x", Values(DType::kInt64, {1, 3, 5}, 32)}}, {{"x", Values(DType::kInt64, {2, 3, 1}, 33)}},
                            {{"x", Values(DType::kInt64, {1, 3, 1}, 34)}}});
}

TEST(JitDataMove, TransposeOnEveryTierItTargets) {
  for (const char* tier : {"avx2", "avx512"}) {
    SCOPED_TRACE(tier);
    OneNode m("Transpose", DType::kFloat, {std::string("N"), int64_t{64}});
    SetAttr(*m.node, "perm", std::vector<int64_t>{1, 0});
    const auto model = m.Model(DType::kFloat, {int64_t{64}, std::string("N")});
    ExpectGeneratedIdentical(model, {{{"x", Values(DType::kFloat, {33, 64}, 3)}}, {{"x", Values(DType::kFloat, {2, 64}, 4)}}},
                             false, std::string("nuphar_codegen_target:") + tier);
  }
}

// With N = 1 a Transpose of [N, 16384] moves only a unit dim: the kernel outputs its input under
// the new shape (TransposeKeepsOffsets) instead of running its code, with the reference's values;
// at 64 KB the main graph shares the buffer (SetOutputAlias), so the output is the input's memory.
TEST(JitDataMove, TransposeOfOnlyUnitDimsIsAView) {
  OneNode m("Transpose", DType::kFloat, {std::string("N"), int64_t{16384}});
  SetAttr(*m.node, "perm", std::vector<int64_t>{1, 0});
  const auto model = m.Model(DType::kFloat, {int64_t{16384}, std::string("N")});
  auto ref = Open(model, "nuphar_execution_mode:reference");
  auto jit = Open(model, "");
  ASSERT_TRUE(ref && jit);
  EXPECT_EQ(jit->counter("jit_nodes"), 1);
  const NamedTensors feeds = {{"x", Values(DType::kFloat, {1, 16384}, 4)}};
  auto a = ref->Run(feeds);
  auto b = jit->Run(feeds);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ((*b)[0].shape(), (std::vector<int64_t>{16384, 1}));
  ASSERT_EQ((*a)[0].shape(), (*b)[0].shape());
  EXPECT_EQ(std::memcmp((*a)[0].raw(), (*b)[0].raw(), (*a)[0].bytes()), 0);
  EXPECT_EQ((*b)[0].raw(), feeds.at(0).second.raw());
  EXPECT_EQ((*a)[0].raw(), feeds.at(0).second.raw());  // the reference kernel's rule too
}

TEST(JitDataMove, SliceStepsNegativeStepsAndClamping) {
  struct Params {
    std::vector<int64_t> starts, ends, axes, steps;
  };
  const std::vector<Params> cases = {
      {{1}, {-1}, {1}, {1}},                   // a window of the symbolic axis
      {{0, 2}, {INT64_MAX, 4}, {1, 2}, {2, 1}}, // every other row, clamped end
      {{-1}, {INT64_MIN}, {1}, {-1}},          // reversed
      {{5, 3}, {-100, 0}, {1, -1}, {-2, -1}},  // negative steps on two axes
      {{0}, {3}, {0}, {1}},                    // the static axis
  };
  for (DType t : {DType::kFloat, DType::kInt64}) {
    for (size_t c = 0; c < cases.size(); ++c) {
      SCOPED_TRACE(std::string(DTypeName(t)) + " case " + std::to_string(c));
      OneNode m("Slice", t, {int64_t{3}, std::string("T"), int64_t{6}}, {"starts", "ends", "axes", "steps"});
      AddInitializer(m.g, "starts", Ints(cases[c].starts));
      AddInitializer(m.g, "ends", Ints(cases[c].ends));
      AddInitializer(m.g, "axes", Ints(cases[c].axes));
      AddInitializer(m.g, "steps", Ints(cases[c].steps));
      const auto model = m.Model(t, {std::string("a"), std::string("b"), std::string("c")});
      ExpectGeneratedIdentical(model, {{{"x", Values(t, {3, 9, 6}, 5)}}, {{"x", Values(t, {3, 2, 6}, 6)}}});
    }
  }
}

TEST(JitDataMove, ConcatAxesAndAConstantPiece) {
  for (int64_t axis : {0, 1, -1}) {
    SCOPED_TRACE(axis);
    onnx::GraphProto g;
    g.set_name("g");
    *g.add_input() = MakeValueInfo("a", DType::kFloat, {int64_t{2}, std::string("T"), int64_t{4}});
    *g.add_input() = MakeValueInfo("b", DType::kFloat, {int64_t{2}, std::string("T"), int64_t{4}});
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {std::string("p"), std::string("q"), std::string("r")});
    SetAttr(AddNode(g, "Concat", {"a", "b", "a"}, {"y"}), "axis", axis);
    const auto model = MakeModel(g, 13);
    ExpectGeneratedIdentical(model, {{{"a", Values(DType::kFloat, {2, 3, 4}, 7)}, {"b", Values(DType::kFloat, {2, 3, 4}, 8)}},
                                     {{"a", Values(DType::kFloat, {2, 1, 4}, 9)}, {"b", Values(DType::kFloat, {2, 1, 4}, 10)}}});
  }
  // A shape being assembled: int64 [1] pieces and a constant.
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("n", DType::kInt64, {int64_t{1}});
  *g.add_output() = MakeValueInfo("y", DType::kInt64, {int64_t{3}});
  AddInitializer(g, "minus_one", Ints({-1, 64}));
  SetAttr(AddNode(g, "Concat", {"n", "minus_one"}, {"y"}), "axis", int64_t{0});
  ExpectGeneratedIdentical(MakeModel(g, 13), {{{"n", Ints({7})}}});
}

TEST(JitDataMove, GatherAxesIndexTypesAndNegativeIndices) {
  for (int64_t axis : {0, 1, -1}) {
    for (DType index_type : {DType::kInt64, DType::kInt32}) {
      SCOPED_TRACE(std::to_string(axis) + " " + DTypeName(index_type));
      // Computed indices (a graph input) of a symbolic count.
      onnx::GraphProto g;
      g.set_name("g");
      *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{4}, std::string("T"), int64_t{5}});
      *g.add_input() = MakeValueInfo("i", index_type, {std::string("K")});
      *g.add_output() = MakeValueInfo("y", DType::kFloat, {std::string("p"), std::string("q"), std::string("r")});
      SetAttr(AddNode(g, "Gather", {"x", "i"}, {"y"}), "axis", axis);
      auto idx = [&](std::vector<int64_t> v) {
        if (index_type == DType::kInt64) return Ints(v);
        std::vector<int32_t> w(v.begin(), v.end());
        return Tensor::FromVector<int32_t>({static_cast<int64_t>(w.size())}, w);
      };
      ExpectGeneratedIdentical(MakeModel(g, 13), {{{"x", Values(DType::kFloat, {4, 6, 5}, 11)}, {"i", idx({0, -1, 3, 2, -4})}},
                                                  {{"x", Values(DType::kFloat, {4, 4, 5}, 12)}, {"i", idx({1})}}});
    }
  }
  // Constant scalar index on int64 data: Gather(Shape(x), 1).
  OneNode m("Gather", DType::kInt64, {int64_t{3}}, {"k"});
  AddInitializer(m.g, "k", Tensor::Scalar<int64_t>(-2));
  ExpectGeneratedIdentical(m.Model(DType::kInt64, {}), {{{"x", Ints({5, 6, 7})}}});
}

TEST(JitDataMove, GatherOutOfRangeIsTheReferenceError) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{4}, int64_t{3}});
  *g.add_input() = MakeValueInfo("i", DType::kInt64, {int64_t{2}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {int64_t{2}, int64_t{3}});
  AddNode(g, "Gather", {"x", "i"}, {"y"});
  const auto model = MakeModel(g, 13);
  auto ref = Open(model, "nuphar_execution_mode:reference");
  auto jit = Open(model, "");
  ASSERT_TRUE(ref && jit);
  EXPECT_EQ(jit->counter("jit_nodes"), 1);
  for (int64_t bad : {4, -5}) {
    const NamedTensors feeds = {{"x", Values(DType::kFloat, {4, 3}, 13)}, {"i", Ints({0, bad})}};
    auto a = ref->Run(feeds);
    auto b = jit->Run(feeds);
    ASSERT_FALSE(a.ok());
    ASSERT_FALSE(b.ok());
    EXPECT_NE(b.message().find("out of range"), std::string::npos) << b.message();
  }
}

TEST(JitDataMove, PadConstantWithValueAndNegativePads) {
  for (DType t : {DType::kFloat, DType::kInt64, DType::kUint8}) {
    for (std::vector<int64_t> pads : {std::vector<int64_t>{0, 2, 1, 0, 3, 0}, {1, -1, 0, 0, 2, -2}}) {
      SCOPED_TRACE(DTypeName(t));
      OneNode m("Pad", t, {int64_t{2}, std::string("T"), int64_t{4}}, {"pads", "value"});
      AddInitializer(m.g, "pads", Ints(pads));
      Tensor value = Values(t, {}, 14);
      AddInitializer(m.g, "value", value);
      const auto model = m.Model(t, {std::string("a"), std::string("b"), std::string("c")});
      ExpectGeneratedIdentical(model, {{{"x", Values(t, {2, 5, 4}, 15)}}, {{"x", Values(t, {2, 3, 4}, 16)}}});
    }
  }
}

// ExpectGeneratedIdentical on every tier the host runs (`every_tier`), else on the host's.
void ExpectGeneratedIdenticalOnTiers(const onnx::ModelProto& model, const std::vector<NamedTensors>& feeds, bool every_tier) {
  if (!every_tier) return ExpectGeneratedIdentical(model, feeds);
  for (const char* tier : {"avx2", "avxvnni", "avx512", "avx512vnni"}) {
    SCOPED_TRACE(tier);
    ExpectGeneratedIdentical(model, feeds, false, std::string("nuphar_codegen_target:") + tier);
  }
}

// Reflect and edge: one piece per combination of padded regions (two axes padded: 6 pieces),
// negative strides (reflect) and stride 0 (edge), symbolic T, every tier.
TEST(JitDataMove, PadReflectAndEdgeOnEveryTier) {
  for (const char* mode : {"reflect", "edge"})
    for (DType t : {DType::kFloat, DType::kInt64, DType::kUint8})
      for (std::vector<int64_t> pads : {std::vector<int64_t>{0, 2, 1, 0, 3, 0}, {0, 0, 3, 0, 0, 2}}) {
        SCOPED_TRACE(std::string(mode) + " " + DTypeName(t) + " pads " + std::to_string(pads[1]) + std::to_string(pads[2]));
        OneNode m("Pad", t, {int64_t{2}, std::string("T"), int64_t{4}}, {"pads"});
        SetAttr(*m.node, "mode", std::string(mode));
        AddInitializer(m.g, "pads", Ints(pads));
        const auto model = m.Model(t, {std::string("a"), std::string("b"), std::string("c")});
        const std::vector<NamedTensors> feeds = {{{"x", Values(t, {2, 5, 4}, 17)}}, {{"x", Values(t, {2, 4, 4}, 18)}}};
        ExpectGeneratedIdenticalOnTiers(model, feeds, t == DType::kFloat);
      }
}

// Pads computed at run time (Silero's come from shape arithmetic folded at load): every side is a
// region of the code, empty when its pad is 0; constant mode crops with negative ones too.
TEST(JitDataMove, PadOfComputedPadsInEveryMode) {
  for (const char* mode : {"constant", "reflect", "edge"}) {
    SCOPED_TRACE(mode);
    OneNode m("Pad", DType::kFloat, {int64_t{2}, std::string("T")}, {"pads"});
    SetAttr(*m.node, "mode", std::string(mode));
    *m.g.add_input() = MakeValueInfo("pads", DType::kInt64, {int64_t{4}});
    const auto model = m.Model(DType::kFloat, {std::string("a"), std::string("b")});
    std::vector<NamedTensors> feeds = {{{"x", Values(DType::kFloat, {2, 7}, 41)}, {"pads", Ints({0, 3, 0, 2})}},
                                       {{"x", Values(DType::kFloat, {2, 5}, 42)}, {"pads", Ints({1, 0, 1, 4})}}};
    if (std::string(mode) == "constant")
      feeds.push_back({{"x", Values(DType::kFloat, {2, 5}, 43)}, {"pads", Ints({0, -2, 1, 1})}});
    ExpectGeneratedIdenticalOnTiers(model, feeds, std::string(mode) == "reflect");
  }
}

// A reflection longer than the dim (T = 2 under a pad of 3: the reference repeats the reflection)
// or an empty dim under edge padding is no plan: the reference runs and gives its result or error.
TEST(JitDataMove, PadReflectLongerThanTheDimFallsBackToTheReference) {
  for (const char* mode : {"reflect", "edge"}) {
    SCOPED_TRACE(mode);
    OneNode m("Pad", DType::kFloat, {int64_t{2}, std::string("T")}, {"pads"});
    SetAttr(*m.node, "mode", std::string(mode));
    AddInitializer(m.g, "pads", Ints({0, 3, 0, 3}));
    const auto model = m.Model(DType::kFloat, {int64_t{2}, std::string("b")});
    auto ref = Open(model, "nuphar_execution_mode:reference");
    auto jit = Open(model, "");
    ASSERT_TRUE(ref && jit);
    EXPECT_EQ(jit->counter("jit_nodes"), 1);
    for (int64_t t : {2, 0}) {
      const NamedTensors feeds = {{"x", Values(DType::kFloat, {2, t}, 19)}};
      auto a = ref->Run(feeds);
      auto b = jit->Run(feeds);
      ASSERT_EQ(a.ok(), b.ok());
      if (!a.ok()) {  // the same error, in the partition's body graph
        EXPECT_EQ(a.message().substr(a.message().find("node '")), b.message().substr(b.message().find("node '")));
        continue;
      }
      ASSERT_EQ((*a)[0].shape(), (*b)[0].shape());
      EXPECT_EQ(std::memcmp((*a)[0].raw(), (*b)[0].raw(), (*a)[0].bytes()), 0);
    }
  }
}

// ScatterND indices that form a box (a PyTorch slice assignment): a row of the first axis under a
// symbolic dim (gtcrn's cache updates), and every element of a window (its [1, 16, k, 33, 4]
// indices), on every tier.
Tensor BoxIndices(const std::vector<int64_t>& base, const std::vector<int64_t>& dims, const std::vector<int64_t>& axes) {
  std::vector<int64_t> v;
  int64_t tuples = 1;
  for (int64_t d : dims) tuples *= d;
  for (int64_t p = 0; p < tuples; ++p) {
    std::vector<int64_t> tuple = base;
    int64_t rest = p;
    for (size_t t = dims.size(); t-- > 0;) {
      if (axes[t] >= 0) tuple[static_cast<size_t>(axes[t])] += rest % dims[t];
      rest /= dims[t];
    }
    v.insert(v.end(), tuple.begin(), tuple.end());
  }
  std::vector<int64_t> shape = dims;
  shape.push_back(static_cast<int64_t>(base.size()));
  return Tensor::FromVector<int64_t>(shape, v);
}

onnx::ModelProto ScatterModel(DType t, const std::vector<Dim>& data, const Tensor& indices, const std::vector<Dim>& updates) {
  OneNode m("ScatterND", t, data, {"indices", "updates"});
  AddInitializer(m.g, "indices", indices);
  *m.g.add_input() = MakeValueInfo("updates", t, updates);
  return m.Model(t, data);
}

TEST(JitDataMove, ScatterNDOfABoxOnEveryTier) {
  for (DType t : {DType::kFloat, DType::kInt64}) {
    SCOPED_TRACE(DTypeName(t));
    const auto row = ScatterModel(t, {int64_t{3}, std::string("T"), int64_t{4}}, Ints({1}).Reshaped({1, 1}),
                                  {int64_t{1}, std::string("T"), int64_t{4}});
    ExpectGeneratedIdentical(row, {{{"x", Values(t, {3, 5, 4}, 30)}, {"updates", Values(t, {1, 5, 4}, 31)}},
                                   {{"x", Values(t, {3, 2, 4}, 32)}, {"updates", Values(t, {1, 2, 4}, 33)}}});
    const auto window = ScatterModel(t, {int64_t{2}, int64_t{5}, std::string("W")}, BoxIndices({1, 1, 0}, {1, 3, 6}, {-1, 1, 2}),
                                     {int64_t{1}, int64_t{3}, int64_t{6}});
    const std::vector<NamedTensors> feeds = {{{"x", Values(t, {2, 5, 6}, 34)}, {"updates", Values(t, {1, 3, 6}, 35)}},
                                             {{"x", Values(t, {2, 5, 6}, 36)}, {"updates", Values(t, {1, 3, 6}, 37)}}};
    ExpectGeneratedIdenticalOnTiers(window, feeds, t == DType::kFloat);
  }
}

// Indices that are not a box stay on the reference (the dump says why); updates that do not fit
// the data (a symbolic W of 4 under a window of 6) fall back to the reference, which reports them.
TEST(JitDataMove, ScatterNDOutsideABoxRunsTheReference) {
  {
    DiagnosticCapture capture;
    auto s = Open(ScatterModel(DType::kFloat, {int64_t{3}, int64_t{4}}, Ints({2, 0}).Reshaped({2, 1}), {int64_t{2}, int64_t{4}}),
                  "nuphar_dump_partition:on");
    ASSERT_TRUE(s);
    EXPECT_EQ(s->counter("jit_nodes"), 0);
    std::string err;
    for (const auto& line : capture.Texts(Severity::kNote)) err += line + "\n";
    EXPECT_NE(err.find("'ScatterND_node' (ScatterND): indices are not a box"), std::string::npos) << err;
  }
  const auto model = ScatterModel(DType::kFloat, {int64_t{2}, int64_t{5}, std::string("W")},
                                  BoxIndices({1, 1, 0}, {1, 3, 6}, {-1, 1, 2}), {int64_t{1}, int64_t{3}, int64_t{6}});
  auto ref = Open(model, "nuphar_execution_mode:reference");
  auto jit = Open(model, "");
  ASSERT_TRUE(ref && jit);
  EXPECT_EQ(jit->counter("jit_nodes"), 1);
  const NamedTensors feeds = {{"x", Values(DType::kFloat, {2, 5, 4}, 38)}, {"updates", Values(DType::kFloat, {1, 3, 6}, 39)}};
  auto a = ref->Run(feeds);
  auto b = jit->Run(feeds);
  ASSERT_FALSE(a.ok());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(a.message().substr(a.message().find("node '")), b.message().substr(b.message().find("node '")));
}

// ConstantOfShape of a computed shape (its input a graph input here: Silero's comes from shape
// arithmetic): the value's type and bytes, the default float 0, empty outputs, every tier.
TEST(JitDataMove, ConstantOfShapeFillsTheComputedShape) {
  for (DType t : {DType::kFloat, DType::kInt64, DType::kBool, DType::kUndefined}) {
    SCOPED_TRACE(DTypeName(t));
    OneNode m("ConstantOfShape", DType::kInt64, {int64_t{3}});
    const DType out = t == DType::kUndefined ? DType::kFloat : t;  // no value: float 0
    if (t != DType::kUndefined) SetAttr(*m.node, "value", TensorToProto(Values(t, {1}, 40), "value"));
    const auto model = m.Model(out, {std::string("a"), std::string("b"), std::string("c")});
    ExpectGeneratedIdenticalOnTiers(model, {{{"x", Ints({2, 3, 5})}}, {{"x", Ints({1, 0, 4})}}, {{"x", Ints({4, 1, 1})}}},
                                    t == DType::kFloat);
  }
}

// A negative dim is no plan: the reference runs and reports it.
TEST(JitDataMove, ConstantOfShapeOfANegativeDimIsTheReferenceError) {
  OneNode m("ConstantOfShape", DType::kInt64, {int64_t{2}});
  const auto model = m.Model(DType::kFloat, {std::string("a"), std::string("b")});
  auto ref = Open(model, "nuphar_execution_mode:reference");
  auto jit = Open(model, "");
  ASSERT_TRUE(ref && jit);
  EXPECT_EQ(jit->counter("jit_nodes"), 1);
  const NamedTensors feeds = {{"x", Ints({2, -1})}};
  auto a = ref->Run(feeds);
  auto b = jit->Run(feeds);
  ASSERT_FALSE(a.ok());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(a.message().substr(a.message().find("node '")), b.message().substr(b.message().find("node '")));
}

TEST(JitDataMove, ShapeAndSize) {
  OneNode shape("Shape", DType::kFloat, {std::string("N"), int64_t{3}, std::string("T")});
  SetAttr(*shape.node, "start", int64_t{1});
  ExpectGeneratedIdentical(shape.Model(DType::kInt64, {int64_t{2}}, 15),
                           {{{"x", Values(DType::kFloat, {2, 3, 7}, 17)}}, {{"x", Values(DType::kFloat, {1, 3, 1}, 18)}}});
  OneNode size("Size", DType::kUint8, {std::string("N"), int64_t{3}});
  ExpectGeneratedIdentical(size.Model(DType::kInt64, {}), {{{"x", Values(DType::kUint8, {5, 3}, 19)}}});
}

TEST(JitDataMove, ViewsShareTheInput) {
  {
    OneNode m("Reshape", DType::kFloat, {int64_t{2}, std::string("T"), int64_t{4}}, {"shape"});
    AddInitializer(m.g, "shape", Ints({0, -1}));
    ExpectGeneratedIdentical(m.Model(DType::kFloat, {int64_t{2}, std::string("u")}),
                             {{{"x", Values(DType::kFloat, {2, 3, 4}, 20)}}}, true);
  }
  {
    OneNode m("Unsqueeze", DType::kInt64, {std::string("T")}, {"axes"});
    AddInitializer(m.g, "axes", Ints({0, -1}));
    ExpectGeneratedIdentical(m.Model(DType::kInt64, {int64_t{1}, std::string("T"), int64_t{1}}),
                             {{{"x", Ints({1, 2, 3})}}}, true);
  }
  {
    OneNode m("Squeeze", DType::kFloat, {int64_t{1}, std::string("T"), int64_t{1}}, {"axes"});
    AddInitializer(m.g, "axes", Ints({0, 2}));
    ExpectGeneratedIdentical(m.Model(DType::kFloat, {std::string("T")}), {{{"x", Values(DType::kFloat, {1, 6, 1}, 21)}}}, true);
  }
  {
    OneNode m("Flatten", DType::kBool, {int64_t{2}, std::string("T"), int64_t{4}});
    SetAttr(*m.node, "axis", int64_t{2});
    ExpectGeneratedIdentical(m.Model(DType::kBool, {std::string("a"), int64_t{4}}), {{{"x", Values(DType::kBool, {2, 3, 4}, 22)}}},
                             true);
  }
}

// Parameters computed at run time (shape arithmetic feeding them): a Reshape to a fed shape (a
// view) and a Slice with fed starts and ends (all its numbers arguments).
TEST(JitDataMove, ComputedReshapeAndSliceParameters) {
  {
    OneNode m("Reshape", DType::kFloat, {int64_t{2}, std::string("T"), int64_t{4}}, {"s"});
    *m.g.add_input() = MakeValueInfo("s", DType::kInt64, {int64_t{2}});
    ExpectGeneratedIdentical(m.Model(DType::kFloat, {std::string("a"), std::string("b")}),
                             {{{"x", Values(DType::kFloat, {2, 3, 4}, 26)}, {"s", Ints({-1, 8})}},
                              {{"x", Values(DType::kFloat, {2, 5, 4}, 27)}, {"s", Ints({0, 20})}}},
                             true);
  }
  for (DType index_type : {DType::kInt64, DType::kInt32}) {
    SCOPED_TRACE(DTypeName(index_type));
    OneNode m("Slice", DType::kFloat, {int64_t{3}, std::string("T")}, {"starts", "ends", "axes"});
    *m.g.add_input() = MakeValueInfo("starts", index_type, {int64_t{1}});
    *m.g.add_input() = MakeValueInfo("ends", index_type, {int64_t{1}});
    AddInitializer(m.g, "axes", Ints({1}));
    auto v = [&](int64_t x) {
      return index_type == DType::kInt64 ? Ints({x}) : Tensor::FromVector<int32_t>({1}, {static_cast<int32_t>(x)});
    };
    ExpectGeneratedIdentical(m.Model(DType::kFloat, {int64_t{3}, std::string("u")}),
                             {{{"x", Values(DType::kFloat, {3, 10}, 28)}, {"starts", v(2)}, {"ends", v(-3)}},
                              {{"x", Values(DType::kFloat, {3, 4}, 29)}, {"starts", v(-3)}, {"ends", v(100)}}});
  }
}

// Every conversion the generator takes, with the values where conversions differ (negative
// integers, wrap-around, NaN and -0 to bool, int64 beyond float's precision); a Cast to the same
// type is a view; float to integer stays on the reference (its NaN and range rules).
TEST(JitDataMove, CastConversionsAndTheSameTypeView) {
  const std::vector<int64_t> ints = {0, 1, -1, 127, -128, 255, 256, 65537, -2147483649LL, 9007199254740993LL, INT64_MIN};
  auto make = [&](DType t) -> Tensor {
    const int64_t n = static_cast<int64_t>(ints.size());
    switch (t) {
      case DType::kInt64: return Tensor::FromVector<int64_t>({n}, ints);
      case DType::kInt32: {
        std::vector<int32_t> v;
        for (int64_t x : ints) v.push_back(static_cast<int32_t>(x));
        return Tensor::FromVector<int32_t>({n}, v);
      }
      case DType::kUint8: {
        std::vector<uint8_t> v;
        for (int64_t x : ints) v.push_back(static_cast<uint8_t>(x));
        return Tensor::FromVector<uint8_t>({n}, v);
      }
      case DType::kBool: {
        Tensor b(DType::kBool, {n});
        for (int64_t i = 0; i < n; ++i) static_cast<uint8_t*>(b.raw())[i] = ints[static_cast<size_t>(i)] & 1;
        return b;
      }
      case DType::kDouble: {
        std::vector<double> v = {0.0, -0.0, std::nan(""), 1e300, -2.5, 1.0 / 3, 16777217.0, -1e-320, 3.0, 4.0, 5.0};
        return Tensor::FromVector<double>({n}, v);
      }
      default: {
        std::vector<float> v = {0.f, -0.f, std::nanf(""), 1e30f, -2.5f, 1.f / 3, 16777216.f, -1e-40f, 3.f, 4.f, 5.f};
        return Tensor::FromVector<float>({n}, v);
      }
    }
  };
  const std::vector<std::pair<DType, DType>> casts = {
      {DType::kInt64, DType::kInt32}, {DType::kInt32, DType::kInt64}, {DType::kInt64, DType::kFloat},
      {DType::kUint8, DType::kFloat}, {DType::kUint8, DType::kInt64}, {DType::kBool, DType::kInt64},
      {DType::kInt64, DType::kBool}, {DType::kFloat, DType::kBool}, {DType::kFloat, DType::kDouble},
      {DType::kDouble, DType::kFloat}, {DType::kInt32, DType::kUint8}, {DType::kBool, DType::kFloat}};
  for (const auto& [from, to] : casts) {
    SCOPED_TRACE(std::string(DTypeName(from)) + " -> " + DTypeName(to));
    OneNode m("Cast", from, {std::string("N")});
    SetAttr(*m.node, "to", static_cast<int64_t>(to));
    ExpectGeneratedIdentical(m.Model(to, {std::string("N")}), {{{"x", make(from)}}});
  }
  OneNode same("Cast", DType::kInt64, {std::string("N")});
  SetAttr(*same.node, "to", static_cast<int64_t>(DType::kInt64));
  ExpectGeneratedIdentical(same.Model(DType::kInt64, {std::string("N")}), {{{"x", make(DType::kInt64)}}}, true);
  // Float -> integer is not a data-movement Cast: the elementwise family generates it
  // (jit_elementwise_test's CastFloatToIntegerFollowsTheReference).
  OneNode to_integer("Cast", DType::kFloat, {std::string("N")});
  SetAttr(*to_integer.node, "to", static_cast<int64_t>(DType::kInt64));
  auto s = Open(to_integer.Model(DType::kInt64, {std::string("N")}), "");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->counter("jit_nodes"), 1);
  EXPECT_EQ(s->counter("jit_kernels"), 1);
}

// x [6, 4] -> Relu -> a, declared [4, 6] (wrong) -> Transpose: the plan baked from the declared
// shape does not fit, the reference runs the Transpose.
TEST(JitDataMove, WrongDeclaredShapesFallBackToTheReference) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{6}, int64_t{4}});
  *g.add_value_info() = MakeValueInfo("a", DType::kFloat, {int64_t{4}, int64_t{6}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {std::string("p"), std::string("q")});
  AddNode(g, "Relu", {"x"}, {"a"});
  AddNode(g, "Transpose", {"a"}, {"y"});
  const auto model = MakeModel(g, 13);
  auto ref = Open(model, "nuphar_execution_mode:reference");
  auto jit = Open(model, "");
  ASSERT_TRUE(ref && jit);
  EXPECT_EQ(jit->counter("jit_nodes"), 1);  // the Transpose (the Relu's shapes disagree: refused)
  const NamedTensors feeds = {{"x", Values(DType::kFloat, {6, 4}, 23)}};
  auto a = ref->Run(feeds);
  auto b = jit->Run(feeds);
  ASSERT_TRUE(a.ok()) << a.message();
  ASSERT_TRUE(b.ok()) << b.message();
  ASSERT_EQ((*a)[0].shape(), (*b)[0].shape());
  EXPECT_EQ(std::memcmp((*a)[0].raw(), (*b)[0].raw(), (*a)[0].bytes()), 0);
}

TEST(JitDataMove, IdenticalKernelsShareOneFunction) {
  onnx::GraphProto g;
  g.set_name("g");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{3}, int64_t{5}});
  *g.add_input() = MakeValueInfo("w", DType::kFloat, {int64_t{3}, int64_t{5}});
  *g.add_output() = MakeValueInfo("a", DType::kFloat, {int64_t{5}, int64_t{3}});
  *g.add_output() = MakeValueInfo("b", DType::kFloat, {int64_t{5}, int64_t{3}});
  AddNode(g, "Transpose", {"x"}, {"a"});
  AddNode(g, "Transpose", {"w"}, {"b"});
  auto jit = Open(MakeModel(g, 13), "");
  ASSERT_TRUE(jit);
  EXPECT_EQ(jit->counter("jit_nodes"), 2);
  EXPECT_EQ(jit->counter("jit_kernels"), 2);  // every partition kernel; one code compiled
  EXPECT_EQ(jit->counter("jit_compiled"), 1);
  EXPECT_EQ(jit->counter("jit_shared_kernels"), 1);
  auto out = jit->Run({{"x", Values(DType::kFloat, {3, 5}, 24)}, {"w", Values(DType::kFloat, {3, 5}, 25)}});
  ASSERT_TRUE(out.ok()) << out.message();
}

// A declared shape no tensor can have (fuzz_session_create: a static dim of 2^63 - 1) is refused
// before the load-time plan multiplies its dims; the session still loads.
TEST(JitDataMove, ImpossibleDeclaredShapeIsRefused) {
  onnx::GraphProto g;
  g.set_name("main");
  const int64_t huge = std::numeric_limits<int64_t>::max();
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{4}, huge});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {huge, int64_t{4}});
  AddNode(g, "Transpose", {"x"}, {"y"}, "transpose");
  DiagnosticCapture capture;
  auto s = Open(MakeModel(g, 13), "nuphar_dump_partition:on");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->counter("jit_nodes"), 0);
  std::string err;
  for (const auto& line : capture.Texts(Severity::kNote)) err += line + "\n";
  EXPECT_NE(err.find("'transpose' (Transpose): input 'x' is declared with more than 2^50 elements"), std::string::npos)
      << err;
}

TEST(JitDataMove, DumpListsThePartitionAndWhatItRefuses) {
  onnx::GraphProto g;
  g.set_name("main");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {int64_t{2}, int64_t{6}});
  *g.add_output() = MakeValueInfo("y", DType::kFloat, {std::string("p"), std::string("q")});
  *g.add_value_info() = MakeValueInfo("t", DType::kFloat, {int64_t{6}, int64_t{2}});
  AddInitializer(g, "pads", Ints({1, -1, 1, 1}));
  AddNode(g, "Transpose", {"x"}, {"t"}, "transpose");
  SetAttr(AddNode(g, "Pad", {"t", "pads"}, {"y"}, "pad"), "mode", std::string("reflect"));
  DiagnosticCapture capture;
  auto s = Open(MakeModel(g, 13), "nuphar_dump_partition:on,codegen_dump_lower:on");
  ASSERT_TRUE(s);
  std::string err;
  for (const auto& line : capture.Texts(Severity::kNote)) err += line + "\n";
  EXPECT_NE(err.find("['transpose']: 1 input(s), 1 output(s): Transpose"), std::string::npos) << err;
  EXPECT_NE(err.find("reference: 'pad' (Pad): negative pads with mode reflect"), std::string::npos) << err;
  EXPECT_NE(err.find("datamove elem 4B operands 1"), std::string::npos) << err;  // codegen_dump_lower
}

}  // namespace
}  // namespace nuphar
