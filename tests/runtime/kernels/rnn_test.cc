// LSTM/GRU/RNN kernels against a plain double-precision reference (random configurations:
// directions, ragged sequence_lens, initial states, peepholes, clip, activations, layout=1),
// the RNN math kernels on both ISA paths against naive loops, and the ONNX backend node tests.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "runtime/core/tensor_proto.h"
#include "runtime/kernels/rnn/rnn_math.h"
#include "runtime/session.h"
#include "tests/modellib/model_builder.h"

namespace nuphar::testing {

/// Runs one ONNX backend node test directory (model.onnx, test_data_set_*/{input,output}_K.pb)
/// with atol 1e-5, rtol 1e-3. Also used by control_flow_test.cc.
Status RunBackendNodeTest(const std::string& name) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path("/usr/share/libonnx-testdata/data/node") / name;
  auto session = Session::Create((dir / "model.onnx").string());
  if (!session) return session.status();
  auto read = [](const fs::path& p) -> Expected<Tensor> {
    std::ifstream f(p, std::ios::binary);
    std::stringstream ss;
    ss << f.rdbuf();
    onnx::TensorProto proto;
    if (!proto.ParseFromString(ss.str())) return Diag::File(p.string(), "not a TensorProto");
    return TensorFromProto(proto);
  };
  int sets = 0;
  for (int s = 0;; ++s) {
    const fs::path set = dir / ("test_data_set_" + std::to_string(s));
    if (!fs::exists(set)) break;
    ++sets;
    NamedTensors feeds;
    for (size_t i = 0; fs::exists(set / ("input_" + std::to_string(i) + ".pb")); ++i) {
      NUPHAR_ASSIGN_OR_RETURN(Tensor t, read(set / ("input_" + std::to_string(i) + ".pb")));
      feeds.emplace_back((*session)->inputs()[i].name, std::move(t));
    }
    NUPHAR_ASSIGN_OR_RETURN(std::vector<Tensor> outs, (*session)->Run(feeds));
    for (size_t o = 0; fs::exists(set / ("output_" + std::to_string(o) + ".pb")); ++o) {
      NUPHAR_ASSIGN_OR_RETURN(Tensor want, read(set / ("output_" + std::to_string(o) + ".pb")));
      if (o >= outs.size()) return Diag::Msg("missing output " + std::to_string(o));
      if (outs[o].shape() != want.shape())
        return Diag::Msg("output " + std::to_string(o) + " shape " + ShapeToString(outs[o].shape()) + " != " +
                         ShapeToString(want.shape()));
      auto got_v = outs[o].ToDoubleVector();
      auto want_v = want.ToDoubleVector();
      if (!got_v || !want_v) return Diag::Msg("output " + std::to_string(o) + " is not numeric");
      for (size_t i = 0; i < want_v->size(); ++i)
        if (!(std::abs((*got_v)[i] - (*want_v)[i]) <= 1e-5 + 1e-3 * std::abs((*want_v)[i])))
          return Diag::Msg("output " + std::to_string(o) + " element " + std::to_string(i) + ": " +
                           std::to_string((*got_v)[i]) + " != " + std::to_string((*want_v)[i]));
    }
  }
  if (sets == 0) return Diag::Msg("no test data sets in " + dir.string());
  return Status::OK();
}

namespace {

// ---------------------------------------------------------------------------------------------
// RNN math: both paths against naive loops.

// Forces the activation path and the matching GEMM path (gemm_eigen.h) together.
void ForcePaths(VectorMathPath path) {
  SetVectorMathPathForTesting(path);
  SetGemmPathForTesting(path == VectorMathPath::kRef ? GemmPath::kRef : path == VectorMathPath::kAvx2 ? GemmPath::kAvx2
                                                                                                 : GemmPath::kAuto);
}

class RnnMathTest : public ::testing::TestWithParam<VectorMathPath> {
 protected:
  void SetUp() override { ForcePaths(GetParam()); }
  void TearDown() override { ForcePaths(VectorMathPath::kAuto); }
};

TEST_P(RnnMathTest, GemmABtMatchesNaive) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int sizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 31, 32, 33, 63, 64, 65};
  for (int M : {1, 2, 3, 5}) {
    for (int N : sizes) {
      for (int K : {1, 3, 8, 9, 17, 33, 65}) {
        for (bool accumulate : {false, true}) {
          const int lda = K + 3, ldb = K + 1, ldc = N + 2;
          std::vector<float> A(static_cast<size_t>(M * lda)), B(size_t(N * ldb)), C(size_t(M * ldc)), want;
          for (auto& x : A) x = dist(rng);
          for (auto& x : B) x = dist(rng);
          for (auto& x : C) x = dist(rng);
          want = C;
          for (int m = 0; m < M; ++m)
            for (int n = 0; n < N; ++n) {
              double s = accumulate ? want[m * ldc + n] : 0.0;
              for (int k = 0; k < K; ++k) s += double(A[m * lda + k]) * B[n * ldb + k];
              want[m * ldc + n] = float(s);
            }
          GemmABt(M, N, K, A.data(), lda, B.data(), ldb, C.data(), ldc, accumulate);
          for (size_t i = 0; i < C.size(); ++i)
            ASSERT_NEAR(C[i], want[i], 1e-5 * (K + 1)) << "M=" << M << " N=" << N << " K=" << K << " i=" << i;
        }
      }
    }
  }
}

TEST_P(RnnMathTest, GemmABtDoubleMatchesNaive) {
  std::mt19937 rng(8);
  std::uniform_real_distribution<double> dist(-1, 1);
  for (int M : {1, 2, 3}) {
    for (int N : {1, 4, 5, 33}) {
      for (int K : {1, 4, 5, 17}) {
        std::vector<double> A(static_cast<size_t>(M * K)), B(size_t(N * K)), C(size_t(M * N));
        for (auto& x : A) x = dist(rng);
        for (auto& x : B) x = dist(rng);
        GemmABt(M, N, K, A.data(), K, B.data(), K, C.data(), N, false);
        for (int m = 0; m < M; ++m)
          for (int n = 0; n < N; ++n) {
            double s = 0;
            for (int k = 0; k < K; ++k) s += A[m * K + k] * B[n * K + k];
            ASSERT_NEAR(C[m * N + n], s, 1e-12);
          }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Paths, RnnMathTest, ::testing::Values(VectorMathPath::kRef, VectorMathPath::kAvx2),
                         [](const auto& info) { return info.param == VectorMathPath::kRef ? "ref" : "avx2"; });

// ---------------------------------------------------------------------------------------------
// A plain reference for LSTM/GRU/RNN, written straight from the ONNX equations in double, on
// seq-major (layout 0) data.

struct Act {
  std::string name;
  float alpha = 0, beta = 0;
  bool takes_alpha = false, takes_beta = false;
};

double ApplyAct(const Act& a, double x) {
  const double al = a.alpha, be = a.beta;
  if (a.name == "Sigmoid") return 1 / (1 + std::exp(-x));
  if (a.name == "Tanh") return std::tanh(x);
  if (a.name == "Relu") return std::max(0.0, x);
  if (a.name == "Affine") return al * x + be;
  if (a.name == "LeakyRelu") return x >= 0 ? x : al * x;
  if (a.name == "ThresholdedRelu") return x > al ? x : 0;
  if (a.name == "ScaledTanh") return al * std::tanh(be * x);
  if (a.name == "HardSigmoid") return std::min(1.0, std::max(0.0, al * x + be));
  if (a.name == "Elu") return x >= 0 ? x : al * (std::exp(x) - 1);
  if (a.name == "Softsign") return x / (1 + std::abs(x));
  if (a.name == "Softplus") return std::log(1 + std::exp(x));
  ADD_FAILURE() << "unknown activation " << a.name;
  return 0;
}

Act MakeAct(const std::string& name, std::mt19937& rng) {
  std::uniform_real_distribution<float> d(0.1f, 0.9f);
  Act a{name};
  a.takes_alpha = name == "Affine" || name == "LeakyRelu" || name == "ThresholdedRelu" || name == "ScaledTanh" ||
                  name == "HardSigmoid" || name == "Elu";
  a.takes_beta = name == "Affine" || name == "ScaledTanh" || name == "HardSigmoid";
  if (a.takes_alpha) a.alpha = d(rng);
  if (a.takes_beta) a.beta = d(rng);
  return a;
}

struct RnnConfig {
  std::string op;  // LSTM, GRU, RNN
  std::string direction = "forward";
  int64_t S = 5, B = 3, I = 4, H = 6;
  int layout = 0;
  bool ragged = false, initial = false, bias = true, peepholes = false, input_forget = false;
  int linear_before_reset = 0;
  float clip = 0;
  float weight_scale = 1;  ///< W, R, B, P ~ U(-scale, scale)
  std::vector<Act> acts;  // empty: defaults, not written to the node
};

int Gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

struct RnnData {
  std::vector<float> X, W, R, Bias, P, h0, c0;  // layout-0 X/h0/c0
  std::vector<int32_t> lens;
};

struct RnnResult {
  std::vector<double> Y, Yh, Yc;  // layout 0
};

RnnResult ReferenceRnn(const RnnConfig& c, const RnnData& d) {
  const int64_t S = c.S, Bt = c.B, I = c.I, H = c.H, G = Gates(c.op);
  const int64_t ND = c.direction == "bidirectional" ? 2 : 1;
  std::vector<Act> acts = c.acts;
  if (acts.empty()) {
    std::vector<std::string> def = c.op == "LSTM" ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                   : c.op == "GRU" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                   : std::vector<std::string>{"Tanh"};
    for (int64_t dd = 0; dd < ND; ++dd)
      for (auto& n : def) acts.push_back(Act{n});
  }
  const size_t per_dir = acts.size() / size_t(ND);
  RnnResult r;
  r.Y.assign(size_t(S * ND * Bt * H), 0.0);
  r.Yh.assign(size_t(ND * Bt * H), 0.0);
  r.Yc.assign(size_t(ND * Bt * H), 0.0);
  auto clip = [&](double v) { return c.clip > 0 ? std::min<double>(c.clip, std::max<double>(-c.clip, v)) : v; };
  for (int64_t dir = 0; dir < ND; ++dir) {
    const bool reverse = c.direction == "reverse" || dir == 1;
    const Act* f = &acts[dir * per_dir];
    auto W = [&](int64_t row, int64_t i) { return double(d.W[(dir * G * H + row) * I + i]); };
    auto R = [&](int64_t row, int64_t k) { return double(d.R[(dir * G * H + row) * H + k]); };
    auto Wb = [&](int64_t row) { return c.bias ? double(d.Bias[dir * 2 * G * H + row]) : 0.0; };
    auto Rb = [&](int64_t row) { return c.bias ? double(d.Bias[dir * 2 * G * H + G * H + row]) : 0.0; };
    for (int64_t b = 0; b < Bt; ++b) {
      std::vector<double> h(size_t(H), 0.0), cs(size_t(H), 0.0);
      if (c.initial)
        for (int64_t j = 0; j < H; ++j) {
          h[j] = d.h0[(dir * Bt + b) * H + j];
          if (c.op == "LSTM") cs[j] = d.c0[(dir * Bt + b) * H + j];
        }
      const int64_t len = d.lens[b];
      for (int64_t s = 0; s < len; ++s) {
        const int64_t t = reverse ? len - 1 - s : s;
        const float* x = &d.X[(t * Bt + b) * I];
        auto xw = [&](int64_t row) {
          double v = Wb(row);
          for (int64_t i = 0; i < I; ++i) v += x[i] * W(row, i);
          return v;
        };
        auto hr = [&](int64_t row, const std::vector<double>& hv) {
          double v = 0;
          for (int64_t k = 0; k < H; ++k) v += hv[k] * R(row, k);
          return v;
        };
        std::vector<double> hn(static_cast<size_t>(H)), cn(static_cast<size_t>(H));
        if (c.op == "LSTM") {  // gate blocks i, o, f, c
          for (int64_t j = 0; j < H; ++j) {
            auto P = [&](int g) { return c.peepholes ? double(d.P[dir * 3 * H + g * H + j]) : 0.0; };
            double it = ApplyAct(f[0], clip(xw(j) + hr(j, h) + Rb(j) + P(0) * cs[j]));
            double ft = c.input_forget ? 1 - it
                                       : ApplyAct(f[0], clip(xw(2 * H + j) + hr(2 * H + j, h) + Rb(2 * H + j) + P(2) * cs[j]));
            double ct = ApplyAct(f[1], clip(xw(3 * H + j) + hr(3 * H + j, h) + Rb(3 * H + j)));
            cn[j] = ft * cs[j] + it * ct;
            double ot = ApplyAct(f[0], clip(xw(H + j) + hr(H + j, h) + Rb(H + j) + P(1) * cn[j]));
            hn[j] = ot * ApplyAct(f[2], cn[j]);
          }
        } else if (c.op == "GRU") {  // z, r, h
          std::vector<double> z(static_cast<size_t>(H)), rr(static_cast<size_t>(H)), rh(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) {
            z[j] = ApplyAct(f[0], clip(xw(j) + hr(j, h) + Rb(j)));
            rr[j] = ApplyAct(f[0], clip(xw(H + j) + hr(H + j, h) + Rb(H + j)));
            rh[j] = rr[j] * h[j];
          }
          for (int64_t j = 0; j < H; ++j) {
            double pre = c.linear_before_reset ? xw(2 * H + j) + rr[j] * (hr(2 * H + j, h) + Rb(2 * H + j))
                                               : xw(2 * H + j) + hr(2 * H + j, rh) + Rb(2 * H + j);
            double ht = ApplyAct(f[1], clip(pre));
            hn[j] = (1 - z[j]) * ht + z[j] * h[j];
          }
        } else {
          for (int64_t j = 0; j < H; ++j) hn[j] = ApplyAct(f[0], clip(xw(j) + hr(j, h) + Rb(j)));
        }
        h = hn;
        if (c.op == "LSTM") cs = cn;
        for (int64_t j = 0; j < H; ++j) r.Y[((t * ND + dir) * Bt + b) * H + j] = h[j];
      }
      for (int64_t j = 0; j < H; ++j) {
        r.Yh[(dir * Bt + b) * H + j] = h[j];
        r.Yc[(dir * Bt + b) * H + j] = cs[j];
      }
    }
  }
  return r;
}

// [A, B, ...] <-> [B, A, ...] for X/Y (layout 1 is batch-major).
template <class T>
std::vector<T> SwapLeadingDims(const std::vector<T>& v, int64_t a, int64_t b, int64_t inner) {
  std::vector<T> out(v.size());
  for (int64_t i = 0; i < a; ++i)
    for (int64_t j = 0; j < b; ++j)
      for (int64_t k = 0; k < inner; ++k) out[(j * a + i) * inner + k] = v[(i * b + j) * inner + k];
  return out;
}

void RunAndCompareWithReferenceActs(const RnnConfig& c, const std::vector<Act>& reference_acts, uint32_t seed);
void RunAndCompare(const RnnConfig& c, uint32_t seed) { RunAndCompareWithReferenceActs(c, c.acts, seed); }

// Builds the node from `c` (its activations as listed) and checks it against the reference
// evaluated with `reference_acts`.
void RunAndCompareWithReferenceActs(const RnnConfig& c, const std::vector<Act>& reference_acts, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1, 1);
  auto rand_vec = [&](int64_t n) {
    std::vector<float> v(static_cast<size_t>(n));
    for (auto& x : v) x = dist(rng);
    return v;
  };
  const int64_t G = Gates(c.op), ND = c.direction == "bidirectional" ? 2 : 1;
  RnnData d;
  d.X = rand_vec(c.S * c.B * c.I);
  auto scaled = [&](std::vector<float> v) {
    for (auto& x : v) x *= c.weight_scale;
    return v;
  };
  d.W = scaled(rand_vec(ND * G * c.H * c.I));
  d.R = scaled(rand_vec(ND * G * c.H * c.H));
  d.Bias = scaled(rand_vec(ND * 2 * G * c.H));
  d.P = scaled(rand_vec(ND * 3 * c.H));
  d.h0 = rand_vec(ND * c.B * c.H);
  d.c0 = rand_vec(ND * c.B * c.H);
  d.lens.assign(size_t(c.B), int32_t(c.S));
  if (c.ragged)
    for (int64_t b = 0; b < c.B; ++b) d.lens[b] = int32_t(std::uniform_int_distribution<int64_t>(0, c.S)(rng));

  onnx::GraphProto g;
  g.set_name("rnn_test");
  const bool bm = c.layout == 1;
  auto add_input = [&](const std::string& name, DType t, std::vector<Dim> dims) {
    *g.add_input() = MakeValueInfo(name, t, dims);
    return name;
  };
  std::vector<std::string> ins = {add_input("X", DType::kFloat, bm ? std::vector<Dim>{c.B, c.S, c.I} : std::vector<Dim>{c.S, c.B, c.I}),
                                  add_input("W", DType::kFloat, {ND, G * c.H, c.I}),
                                  add_input("R", DType::kFloat, {ND, G * c.H, c.H}),
                                  c.bias ? add_input("B", DType::kFloat, {ND, 2 * G * c.H}) : "",
                                  c.ragged ? add_input("lens", DType::kInt32, {c.B}) : "",
                                  c.initial ? add_input("h0", DType::kFloat, bm ? std::vector<Dim>{c.B, ND, c.H} : std::vector<Dim>{ND, c.B, c.H}) : ""};
  if (c.op == "LSTM") {
    ins.push_back(c.initial ? add_input("c0", DType::kFloat, bm ? std::vector<Dim>{c.B, ND, c.H} : std::vector<Dim>{ND, c.B, c.H}) : "");
    ins.push_back(c.peepholes ? add_input("P", DType::kFloat, {ND, 3 * c.H}) : "");
  }
  std::vector<std::string> outs = {"Y", "Y_h"};
  if (c.op == "LSTM") outs.push_back("Y_c");
  for (auto& o : outs) g.add_output()->set_name(o);
  auto& node = AddNode(g, c.op, ins, outs);
  SetAttr(node, "hidden_size", c.H);
  SetAttr(node, "direction", c.direction);
  if (c.layout) SetAttr(node, "layout", int64_t(1));
  if (c.clip > 0) SetAttr(node, "clip", c.clip);
  if (c.input_forget) SetAttr(node, "input_forget", int64_t(1));
  if (c.linear_before_reset) SetAttr(node, "linear_before_reset", int64_t(1));
  if (!c.acts.empty()) {
    auto* names = node.add_attribute();
    names->set_name("activations");
    names->set_type(onnx::AttributeProto::STRINGS);
    auto* alphas = node.add_attribute();
    alphas->set_name("activation_alpha");
    alphas->set_type(onnx::AttributeProto::FLOATS);
    auto* betas = node.add_attribute();
    betas->set_name("activation_beta");
    betas->set_type(onnx::AttributeProto::FLOATS);
    for (const auto& a : c.acts) {
      names->add_strings(a.name);
      if (a.takes_alpha) alphas->add_floats(a.alpha);
      if (a.takes_beta) betas->add_floats(a.beta);
    }
  }
  auto session = Session::CreateFromModel(MakeModel(g, 14));
  ASSERT_TRUE(session) << session.status().message();

  auto batch_major_state = [&](const std::vector<float>& s) { return SwapLeadingDims(s, ND, c.B, c.H); };
  NamedTensors feeds = {
      {"X", bm ? Tensor::FromVector<float>({c.B, c.S, c.I}, SwapLeadingDims(d.X, c.S, c.B, c.I))
               : Tensor::FromVector<float>({c.S, c.B, c.I}, d.X)},
      {"W", Tensor::FromVector<float>({ND, G * c.H, c.I}, d.W)},
      {"R", Tensor::FromVector<float>({ND, G * c.H, c.H}, d.R)}};
  if (c.bias) feeds.emplace_back("B", Tensor::FromVector<float>({ND, 2 * G * c.H}, d.Bias));
  if (c.ragged) feeds.emplace_back("lens", Tensor::FromVector<int32_t>({c.B}, d.lens));
  std::vector<int64_t> state_shape = bm ? std::vector<int64_t>{c.B, ND, c.H} : std::vector<int64_t>{ND, c.B, c.H};
  if (c.initial) feeds.emplace_back("h0", Tensor::FromVector<float>(state_shape, bm ? batch_major_state(d.h0) : d.h0));
  if (c.op == "LSTM" && c.initial)
    feeds.emplace_back("c0", Tensor::FromVector<float>(state_shape, bm ? batch_major_state(d.c0) : d.c0));
  if (c.op == "LSTM" && c.peepholes) feeds.emplace_back("P", Tensor::FromVector<float>({ND, 3 * c.H}, d.P));
  auto got = (*session)->Run(feeds);
  ASSERT_TRUE(got) << got.status().message();

  RnnConfig reference_config = c;
  reference_config.acts = reference_acts;
  RnnResult want = ReferenceRnn(reference_config, d);
  if (bm) {  // Y [S, ND, B, H] -> [B, S, ND, H]; states [ND, B, H] -> [B, ND, H]
    want.Y = SwapLeadingDims(want.Y, c.S * ND, c.B, c.H);
    want.Yh = SwapLeadingDims(want.Yh, ND, c.B, c.H);
    want.Yc = SwapLeadingDims(want.Yc, ND, c.B, c.H);
  }
  const std::vector<double>* expected[] = {&want.Y, &want.Yh, &want.Yc};
  for (size_t o = 0; o < outs.size(); ++o) {
    const Tensor& t = (*got)[o];
    ASSERT_EQ(size_t(t.size()), expected[o]->size()) << outs[o];
    for (size_t i = 0; i < expected[o]->size(); ++i)
      ASSERT_NEAR(t.data<float>()[i], (*expected[o])[i], 2e-5 + 1e-4 * std::abs((*expected[o])[i]))
          << outs[o] << "[" << i << "]";
  }
}

struct SweepParam {
  std::string op, direction;
  int layout;
  uint32_t seed;
};

class RnnSweepTest : public ::testing::TestWithParam<SweepParam> {};

// Each seed draws the optional features, so the sweep covers their combinations.
TEST_P(RnnSweepTest, MatchesReference) {
  const SweepParam& p = GetParam();
  std::mt19937 rng(p.seed * 7919 + 13);
  auto coin = [&] { return std::uniform_int_distribution<int>(0, 1)(rng) == 1; };
  RnnConfig c;
  c.op = p.op;
  c.direction = p.direction;
  c.layout = p.layout;
  c.S = std::uniform_int_distribution<int64_t>(1, 7)(rng);
  c.B = std::uniform_int_distribution<int64_t>(1, 4)(rng);
  c.I = std::uniform_int_distribution<int64_t>(1, 10)(rng);
  c.H = std::uniform_int_distribution<int64_t>(1, 19)(rng);
  c.ragged = coin();
  c.initial = coin();
  c.bias = coin();
  c.peepholes = p.op == "LSTM" && coin();
  c.input_forget = p.op == "LSTM" && coin();
  c.linear_before_reset = p.op == "GRU" && coin();
  if (coin()) c.clip = 0.7f;
  for (auto path : {VectorMathPath::kRef, VectorMathPath::kAvx2}) {
    ForcePaths(path);
    RunAndCompare(c, p.seed);
  }
  ForcePaths(VectorMathPath::kAuto);
}

std::vector<SweepParam> SweepParams() {
  std::vector<SweepParam> v;
  for (const char* op : {"LSTM", "GRU", "RNN"})
    for (const char* dir : {"forward", "reverse", "bidirectional"})
      for (int layout : {0, 1})
        for (uint32_t seed = 0; seed < 4; ++seed) v.push_back({op, dir, layout, seed});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Random, RnnSweepTest, ::testing::ValuesIn(SweepParams()), [](const auto& info) {
  const SweepParam& p = info.param;
  return p.op + "_" + p.direction + "_layout" + std::to_string(p.layout) + "_seed" + std::to_string(p.seed);
});

// Every activation function, with alpha/beta consumed only by the functions that take them.
TEST(RnnActivations, EveryFunctionMatchesReference) {
  const std::vector<std::string> all = {"Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu",
                                        "ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"};
  std::mt19937 rng(3);
  for (size_t i = 0; i < all.size(); ++i) {
    for (const char* op : {"RNN", "GRU", "LSTM"}) {
      RnnConfig c;
      c.op = op;
      c.direction = "bidirectional";
      c.ragged = true;
      c.initial = true;
      c.weight_scale = 0.25f;  // unbounded functions (Relu, Affine, Softplus) in gates must not blow up
      const size_t per_dir = c.op == "LSTM" ? 3 : c.op == "GRU" ? 2 : 1;
      for (size_t k = 0; k < 2 * per_dir; ++k) c.acts.push_back(MakeAct(all[(i + k * 5) % all.size()], rng));
      SCOPED_TRACE(std::string(op) + " starting with " + all[i]);
      RunAndCompare(c, uint32_t(100 + i));
    }
  }
}

TEST(RnnActivations, OneSetServesBothDirections) {
  std::mt19937 rng(11);
  RnnConfig c;
  c.op = "GRU";
  c.direction = "bidirectional";
  c.weight_scale = 0.25f;
  c.acts = {MakeAct("HardSigmoid", rng), MakeAct("ScaledTanh", rng)};  // listed once
  RnnConfig reference_view = c;
  reference_view.acts.insert(reference_view.acts.end(), c.acts.begin(), c.acts.end());
  // The node gets one set; the reference applies the same set to both directions. RunAndCompare
  // writes c.acts to the node and evaluates with them, so compare through the duplicated view.
  RunAndCompareWithReferenceActs(c, reference_view.acts, 21);
}

TEST(RnnEdgeCases, ZeroLengthSequencesKeepTheInitialState) {
  RnnConfig c;
  c.op = "LSTM";
  c.direction = "bidirectional";
  c.initial = true;
  c.ragged = true;
  c.S = 3;
  c.B = 5;  // seed 5 draws several zero lengths; the reference keeps h0/c0 for those rows
  RunAndCompare(c, 5);
}

TEST(RnnEdgeCases, RefusesUnknownActivationAndBadDirection) {
  onnx::GraphProto g;
  *g.add_input() = MakeValueInfo("X", DType::kFloat, {1, 1, 1});
  *g.add_input() = MakeValueInfo("W", DType::kFloat, {1, 1, 1});
  *g.add_input() = MakeValueInfo("R", DType::kFloat, {1, 1, 1});
  g.add_output()->set_name("Y");
  auto& n = AddNode(g, "RNN", {"X", "W", "R"}, {"Y"}, "bad_rnn");
  SetAttr(n, "hidden_size", int64_t(1));
  SetAttr(n, "direction", std::string("sideways"));
  auto s = Session::CreateFromModel(MakeModel(g, 14));
  ASSERT_FALSE(s);
  EXPECT_NE(s.status().message().find("sideways"), std::string::npos) << s.status().message();
  EXPECT_NE(s.status().message().find("bad_rnn"), std::string::npos) << s.status().message();
}

// ---------------------------------------------------------------------------------------------
// ONNX backend node tests.

class RnnBackendTest : public ::testing::TestWithParam<const char*> {};

TEST_P(RnnBackendTest, Passes) {
  Status s = RunBackendNodeTest(GetParam());
  EXPECT_TRUE(s.ok()) << s.message();
}

INSTANTIATE_TEST_SUITE_P(Node, RnnBackendTest,
                         ::testing::Values("test_gru_batchwise", "test_gru_defaults", "test_gru_seq_length",
                                           "test_gru_with_initial_bias", "test_lstm_batchwise",
                                           "test_lstm_defaults", "test_lstm_with_initial_bias",
                                           "test_lstm_with_peepholes", "test_rnn_seq_length",
                                           "test_simple_rnn_batchwise", "test_simple_rnn_defaults",
                                           "test_simple_rnn_with_initial_bias"),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace nuphar::testing
