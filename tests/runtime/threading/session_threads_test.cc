// Sessions on more than one thread (R6): a bidirectional LSTM converted to Scans runs its two
// directions side by side, the int8 products split across the pool, and every output equals
// the one-thread session's bit for bit; one session also serves concurrent Runs.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <array>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>

#include "editor/editor.h"
#include "quantizer/quantizer.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::SetAttr;

onnx::TensorProto RandomInitializer(const std::string& name, const std::vector<int64_t>& dims, float scale,
                                    uint32_t seed) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  int64_t n = 1;
  for (int64_t d : dims) {
    t.add_dims(d);
    n *= d;
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < n; ++i) t.add_float_data(u(rng));
  return t;
}

/// Stacked bidirectional LSTM layers (input [seq, 1, 16], hidden 32 by default), as to_scan sees them.
onnx::ModelProto BidirectionalLstm(int64_t kHidden = 32, int layers = 2) {
  constexpr int64_t kInput = 16;
  onnx::GraphProto g;
  g.set_name("bilstm");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, {"seq", int64_t{1}, kInput});
  std::string in = "x";
  int64_t in_dim = kInput;
  for (int layer = 0; layer < layers; ++layer) {
    const std::string l = std::to_string(layer);
    *g.add_initializer() = RandomInitializer("W" + l, {2, 4 * kHidden, in_dim}, 0.3f, 10 + layer);
    *g.add_initializer() = RandomInitializer("R" + l, {2, 4 * kHidden, kHidden}, 0.3f, 20 + layer);
    *g.add_initializer() = RandomInitializer("B" + l, {2, 8 * kHidden}, 0.1f, 30 + layer);
    auto& lstm = AddNode(g, "LSTM", {in, "W" + l, "R" + l, "B" + l}, {"Y" + l}, "lstm" + l);
    SetAttr(lstm, "hidden_size", kHidden);
    SetAttr(lstm, "direction", std::string("bidirectional"));
    // Y [seq, 2, 1, H] -> [seq, 1, 2H]
    AddNode(g, "Transpose", {"Y" + l}, {"T" + l}, "transpose" + l);
    SetAttr(g.mutable_node(g.node_size() - 1)[0], "perm", std::vector<int64_t>{0, 2, 1, 3});
    onnx::TensorProto shape;
    shape.set_name("shape" + l);
    shape.set_data_type(onnx::TensorProto::INT64);
    shape.add_dims(3);
    for (int64_t v : {int64_t{0}, int64_t{0}, int64_t{-1}}) shape.add_int64_data(v);
    *g.add_initializer() = shape;
    AddNode(g, "Reshape", {"T" + l, "shape" + l}, {"H" + l}, "reshape" + l);
    in = "H" + l;
    in_dim = 2 * kHidden;
  }
  *g.add_output() = MakeValueInfo(in, DType::kFloat, {"seq", int64_t{1}, 2 * kHidden});
  return MakeModel(g, 11);
}

std::unique_ptr<Session> MakeSession(const onnx::ModelProto& model, const std::string& settings) {
  SessionOptions options;
  options.settings = settings;
  auto s = Session::CreateFromModel(model, options);
  EXPECT_TRUE(s.ok()) << s.message();
  return s.ok() ? std::move(*s) : nullptr;
}

Tensor RandomInput(int64_t seq, uint32_t seed) {
  Tensor t(DType::kFloat, {seq, 1, 16});
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.size(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

void ExpectBitIdentical(const std::vector<Tensor>& a, const std::vector<Tensor>& b, const std::string& what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t k = 0; k < a.size(); ++k) {
    ASSERT_EQ(a[k].shape(), b[k].shape()) << what;
    EXPECT_EQ(std::memcmp(a[k].raw(), b[k].raw(), a[k].bytes()), 0) << what << ": output " << k << " differs";
  }
}

// `model` after to_scan, and with `quantize` after model_quantizer --only_for_scan.
void ConvertForRuntime(onnx::ModelProto* model, bool quantize) {
  ASSERT_TRUE(editor::RunEditor("to_scan", model, {}).ok());
  if (!quantize) return;
  quant::QuantizeOptions q;
  q.only_for_scan = true;
  auto report = quant::Quantize(model, q);
  ASSERT_TRUE(report.ok()) << report.message();
}

// The bidirectional LSTM after to_scan, and with GetParam() after model_quantizer --only_for_scan.
class SessionThreadsTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    model_ = BidirectionalLstm();
    ConvertForRuntime(&model_, GetParam());
  }
  onnx::ModelProto model_;
};

TEST_P(SessionThreadsTest, TwoThreadsEqualOneThreadBitForBit) {
  const onnx::ModelProto& model = model_;
  auto one = MakeSession(model, "nuphar_num_threads:1");
  auto two = MakeSession(model, "nuphar_num_threads:2");
  auto split = MakeSession(model, "nuphar_num_threads:2, nuphar_parallel_min_workloads:1");
  ASSERT_TRUE(one && two && split);
  EXPECT_EQ(one->num_threads(), 1);
  EXPECT_EQ(two->num_threads(), 2);
  EXPECT_EQ(one->concurrent_node_pairs(), 0);
  // Each layer's forward and reverse Scans run side by side.
  EXPECT_EQ(two->concurrent_node_pairs(), 2);
  for (int64_t seq : {1, 5, 23}) {
    const Tensor x = RandomInput(seq, static_cast<uint32_t>(seq));
    auto want = one->Run({{"x", x}});
    ASSERT_TRUE(want.ok()) << want.message();
    for (Session* s : {two.get(), split.get()}) {
      auto got = s->Run({{"x", x}});
      ASSERT_TRUE(got.ok()) << got.message();
      ExpectBitIdentical(*want, *got, "seq " + std::to_string(seq));
    }
  }
}

TEST_P(SessionThreadsTest, ConcurrentRunsOnOneThreadedSession) {
  const onnx::ModelProto& model = model_;
  auto serial = MakeSession(model, "nuphar_num_threads:1");
  auto shared = MakeSession(model, "nuphar_num_threads:2, nuphar_parallel_min_workloads:1");
  ASSERT_TRUE(serial && shared);
  std::vector<std::vector<Tensor>> expected;
  for (int64_t seq = 1; seq <= 4; ++seq) {
    auto r = serial->Run({{"x", RandomInput(seq, 100 + static_cast<uint32_t>(seq))}});
    ASSERT_TRUE(r.ok()) << r.message();
    expected.push_back(*r);
  }
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0}, failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        const int64_t seq = 1 + (t + i) % 4;
        auto r = shared->Run({{"x", RandomInput(seq, 100 + static_cast<uint32_t>(seq))}});
        if (!r.ok()) {
          failures.fetch_add(1);
          continue;
        }
        const auto& want = expected[static_cast<size_t>(seq - 1)];
        for (size_t k = 0; k < want.size(); ++k)
          if (std::memcmp((*r)[k].raw(), want[k].raw(), want[k].bytes()) != 0) mismatches.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

// Issue 14: one session, 8 threads, 1,000 Runs each with mixed input shapes; every output equals
// the serial result bit for bit. The model is small (one bidirectional layer, hidden 8) so the
// 8,000 Runs stay within seconds under ThreadSanitizer (scripts/test.sh runs threading_test
// there). The session has 2 threads and splits every product, so 8 callers also contend for
// its worker pool (the losers of its try-lock run their regions inline).
TEST_P(SessionThreadsTest, EightThreadsThousandRunsMixedShapesEqualSerial) {
  onnx::ModelProto model = BidirectionalLstm(/*hidden=*/8, /*layers=*/1);
  ConvertForRuntime(&model, GetParam());
  auto session = MakeSession(model, "nuphar_num_threads:2, nuphar_parallel_min_workloads:1");
  ASSERT_TRUE(session);
  const std::vector<int64_t> seqs = {1, 2, 3, 5, 8, 13};
  std::vector<Tensor> inputs;
  std::vector<std::vector<Tensor>> serial;
  for (size_t k = 0; k < seqs.size(); ++k) {
    inputs.push_back(RandomInput(seqs[k], 500 + static_cast<uint32_t>(k)));
    auto r = session->Run({{"x", inputs.back()}});
    ASSERT_TRUE(r.ok()) << r.message();
    serial.push_back(std::move(*r));
  }
  constexpr int kThreads = 8, kRuns = 1000;
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kRuns; ++i) {
        // Each thread walks the shapes in its own order, so neighbours run different shapes.
        const size_t k = static_cast<size_t>(t * 5 + i * (t + 1)) % seqs.size();
        auto r = session->Run({{"x", inputs[k]}});
        if (!r.ok()) {
          failures.fetch_add(1);
          continue;
        }
        const auto& want = serial[k];
        if (r->size() != want.size()) {
          mismatches.fetch_add(1);
          continue;
        }
        for (size_t o = 0; o < want.size(); ++o)
          if ((*r)[o].shape() != want[o].shape() || std::memcmp((*r)[o].raw(), want[o].raw(), want[o].bytes()) != 0)
            mismatches.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Models, SessionThreadsTest, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? std::string("int8") : std::string("float"); });

TEST(SessionThreadsSettingsTest, BadThreadCountsFailCreation) {
  onnx::ModelProto model = BidirectionalLstm();
  for (const char* bad : {"nuphar_num_threads:-1", "nuphar_num_threads:two", "nuphar_num_threads:5000"}) {
    SessionOptions options;
    options.settings = bad;
    auto s = Session::CreateFromModel(model, options);
    ASSERT_FALSE(s.ok()) << bad;
    EXPECT_NE(s.message().find("nuphar_num_threads"), std::string::npos) << s.message();
  }
}

}  // namespace
}  // namespace nuphar

namespace nuphar {
namespace {

// fp32 MatMul split by column chunks: equal to one thread for shapes around the chunk size and
// Eigen's register widths (the hoisted input projection of a Scan LSTM is [seq, K] x [K, 4H]).
TEST(SessionThreadsMatMulTest, SplitFloatMatMulEqualsOneThreadBitForBit) {
  for (const auto& [M, K, N] : std::vector<std::array<int64_t, 3>>{
           {1, 7, 64}, {3, 5, 129}, {7, 64, 97}, {100, 80, 512}, {37, 300, 1000}, {100, 512, 4099}, {100, 1024, 4096}}) {
    onnx::GraphProto g;
    g.set_name("matmul");
    *g.add_input() = MakeValueInfo("a", DType::kFloat, {M, K});
    *g.add_initializer() = RandomInitializer("b", {K, N}, 1.0f, 5);
    AddNode(g, "MatMul", {"a", "b"}, {"y"}, "matmul");
    *g.add_output() = MakeValueInfo("y", DType::kFloat, {M, N});
    const onnx::ModelProto model = MakeModel(g, 13);
    auto one = MakeSession(model, "nuphar_num_threads:1");
    auto two = MakeSession(model, "nuphar_num_threads:2, nuphar_parallel_min_workloads:1");
    ASSERT_TRUE(one && two);
    Tensor a(DType::kFloat, {M, K});
    std::mt19937 rng(static_cast<uint32_t>(M * N));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int64_t i = 0; i < a.size(); ++i) a.data<float>()[i] = u(rng);
    auto want = one->Run({{"a", a}});
    auto got = two->Run({{"a", a}});
    ASSERT_TRUE(want.ok() && got.ok());
    ExpectBitIdentical(*want, *got, "M " + std::to_string(M) + " K " + std::to_string(K) + " N " + std::to_string(N));
  }
}

}  // namespace
}  // namespace nuphar
