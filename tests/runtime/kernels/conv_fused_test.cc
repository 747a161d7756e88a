// The conv family (runtime/kernels/conv/) against plain loops, on every ISA tier this CPU has:
// odd shapes, strides, dilations, groups (depthwise with and without a multiplier), asymmetric
// padding, 1-D to 3-D; and the Conv + epilogue fusion (runtime/fusion/conv_activation_fusion)
// against the unfused graph on the reference executor; the two-panel GEMM kernel against two
// one-panel calls.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "runtime/core/tensor_proto.h"
#include "runtime/kernels/conv/conv.h"
#include "runtime/fusion/conv_activation_fusion.h"
#include "runtime/platform/cpu_features.h"
#include "tests/runtime/kernels/single_node_model.h"

namespace nuphar {
namespace {

using testing::AddNode;
using testing::Dim;
using testing::MakeModel;
using testing::MakeValueInfo;
using testing::RandomFloats;
using testing::RunSingleNode;
using testing::SingleNode;
using testing::Values;
using Shape = std::vector<int64_t>;

int64_t Count(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
Tensor RandomTensor(const Shape& shape, uint32_t seed) {
  return Tensor::FromVector<float>(shape, RandomFloats(static_cast<size_t>(Count(shape)), seed));
}

// Every tier the host supports, restored to the default at scope exit.
std::vector<IsaTier> HostTiers() {
  std::vector<IsaTier> tiers;
  for (int t = 0; t < kIsaTierCount; ++t)
    if (HostCpu().Supports(static_cast<IsaTier>(t))) tiers.push_back(static_cast<IsaTier>(t));
  return tiers;
}
struct TierGuard {
  ~TierGuard() { ForceIsaTierForTesting(std::nullopt); }
};

struct Case {
  Shape x, w;
  Shape strides, dilations, pads;
  int64_t group;
  bool bias;
};

// Direct convolution over 1-3 spatial dims (missing dims are size 1), in double.
std::vector<float> NaiveConv(const Tensor& x, const Tensor& w, const Tensor* b, const Case& c) {
  const size_t r = c.x.size() - 2;
  int64_t in[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1}, p[3] = {0, 0, 0}, o[3] = {1, 1, 1};
  for (size_t i = 0; i < r; ++i) {
    in[i] = c.x[i + 2], k[i] = c.w[i + 2], s[i] = c.strides[i], d[i] = c.dilations[i], p[i] = c.pads[i];
    o[i] = (in[i] + c.pads[i] + c.pads[i + r] - (k[i] - 1) * d[i] - 1) / s[i] + 1;
  }
  const int64_t C = c.x[1], M = c.w[0], Cg = C / c.group, Mg = M / c.group;
  std::vector<float> y;
  for (int64_t n = 0; n < c.x[0]; ++n)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t o0 = 0; o0 < o[0]; ++o0)
        for (int64_t o1 = 0; o1 < o[1]; ++o1)
          for (int64_t o2 = 0; o2 < o[2]; ++o2) {
            double acc = b ? b->data<float>()[m] : 0.0;
            for (int64_t ci = 0; ci < Cg; ++ci)
              for (int64_t k0 = 0; k0 < k[0]; ++k0)
                for (int64_t k1 = 0; k1 < k[1]; ++k1)
                  for (int64_t k2 = 0; k2 < k[2]; ++k2) {
                    const int64_t i0 = o0 * s[0] - p[0] + k0 * d[0], i1 = o1 * s[1] - p[1] + k1 * d[1],
                                  i2 = o2 * s[2] - p[2] + k2 * d[2];
                    if (i0 < 0 || i0 >= in[0] || i1 < 0 || i1 >= in[1] || i2 < 0 || i2 >= in[2]) continue;
                    const int64_t cx = (m / Mg) * Cg + ci;
                    acc +=
                        static_cast<double>(x.data<float>()[(((n * C + cx) * in[0] + i0) * in[1] + i1) * in[2] + i2]) *
                        w.data<float>()[(((m * Cg + ci) * k[0] + k0) * k[1] + k1) * k[2] + k2];
                  }
            y.push_back(static_cast<float>(acc));
          }
  return y;
}

TEST(FusedConvTest, OddShapesStridesDilationsGroupsPaddingMatchPlainLoopsOnEveryTier) {
  const std::vector<Case> cases = {
      // depthwise, the PaddleOCR shapes and odd ones: unit stride (vector rows), strided, dilated
      {{1, 6, 7, 37}, {6, 1, 5, 5}, {1, 1}, {1, 1}, {2, 2, 2, 2}, 6, true},
      {{2, 5, 9, 33}, {5, 1, 3, 3}, {2, 1}, {1, 1}, {1, 1, 1, 1}, 5, true},
      {{1, 4, 8, 19}, {4, 1, 3, 3}, {1, 2}, {1, 1}, {1, 0, 1, 2}, 4, false},
      {{1, 3, 11, 17}, {3, 1, 3, 2}, {1, 1}, {2, 3}, {2, 0, 1, 3}, 3, true},
      {{1, 3, 9, 40}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 3, true},  // multiplier 2
      {{1, 4, 23}, {4, 1, 5}, {1}, {2}, {3, 1}, 4, true},                    // 1-D depthwise
      // dense and grouped through im2col + GEMM
      {{2, 4, 9, 8}, {6, 2, 3, 2}, {2, 1}, {2, 1}, {1, 0, 2, 1}, 2, true},
      {{1, 3, 10}, {4, 3, 3}, {3}, {1}, {2, 1}, 1, false},
      {{1, 3, 6, 13}, {4, 3, 3, 4}, {2, 3}, {1, 2}, {2, 3, 1, 5}, 1, true},  // strided + dilated rows, both pads
      {{1, 2, 7}, {3, 2, 5}, {2}, {3}, {6, 6}, 1, false},                    // windows wholly in the padding
      {{1, 2, 4, 5, 3}, {2, 2, 2, 3, 1}, {1, 2, 1}, {1, 1, 2}, {0, 1, 0, 1, 0, 0}, 1, true},
      {{1, 24, 19, 7}, {17, 24, 3, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true},
      {{1, 7, 5, 31}, {9, 7, 1, 3}, {1, 1}, {1, 1}, {0, 1, 0, 1}, 1, true},
      {{1, 1, 1280}, {33, 1, 64}, {16}, {1}, {0, 0}, 1, false},              // STFT as Conv (melspectrogram)
      // filter banks (one channel, AVX-512: the packed GEMM over windows): Silero's, padded, N = 2
      {{1, 1, 1792}, {258, 1, 256}, {64}, {1}, {0, 0}, 1, true},
      {{2, 1, 301}, {40, 1, 32}, {7}, {1}, {5, 3}, 1, true},
      {{1, 2, 100}, {30, 2, 64}, {16}, {1}, {0, 0}, 1, true},                // 3 output columns
      {{1, 5, 3, 2}, {13, 5, 3, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true},  // 2 output columns
      // 1x1: the GEMM reads X directly
      {{1, 13, 3, 11}, {17, 13, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, true},
      {{2, 12, 5, 5}, {9, 4, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 3, true},
  };
  TierGuard guard;
  for (IsaTier tier : HostTiers()) {
    ASSERT_TRUE(ForceIsaTierForTesting(tier));
    for (size_t i = 0; i < cases.size(); ++i) {
      const Case& c = cases[i];
      const Tensor x = RandomTensor(c.x, 11 + static_cast<uint32_t>(i)), w = RandomTensor(c.w, 12);
      const Tensor b = RandomTensor({c.w[0]}, 13);
      SingleNode node{.op = "Conv",
                      .opset = 11,
                      .inputs = {x, w},
                      .constant_inputs = {1, 2},
                      .attributes = [&c](onnx::NodeProto& n) {
                        testing::SetAttr(n, "strides", c.strides);
                        testing::SetAttr(n, "dilations", c.dilations);
                        testing::SetAttr(n, "pads", c.pads);
                        testing::SetAttr(n, "group", c.group);
                      }};
      if (c.bias) node.inputs.push_back(b);
      auto out = RunSingleNode(node);
      ASSERT_TRUE(out.ok()) << out.message();
      const auto want = NaiveConv(x, w, c.bias ? &b : nullptr, c);
      const auto got = Values<float>((*out)[0]);
      ASSERT_EQ(got.size(), want.size()) << "case " << i;
      for (size_t j = 0; j < got.size(); ++j)
        ASSERT_NEAR(got[j], want[j], 1e-5f * (1 + std::fabs(want[j])))
            << IsaTierName(tier) << " case " << i << " at " << j;
    }
  }
}

// A tier's two-panel kernel (ConvKernels::gemm_panel_pair, the few-column case) writes what two
// gemm_panel calls write, bit for bit, for every column count it takes, odd and even K, a full
// and a partial second panel, and a column offset n0.
TEST(FusedConvTest, PanelPairWritesTwoPanelsBitForBit) {
  TierGuard guard;
  int tiers_with_pairs = 0;
  for (IsaTier tier : HostTiers()) {
    ASSERT_TRUE(ForceIsaTierForTesting(tier));
    const ConvKernels& k = GetConvKernels();
    if (!k.gemm_panel_pair) continue;
    ++tiers_with_pairs;
    const int64_t mr = k.gemm_mr, n0 = 3;
    for (int64_t K : {1, 2, 7, 64, 387}) {
      for (int64_t rows2 : {int64_t{1}, int64_t{5}, mr}) {
        const int64_t M = mr + rows2;
        const std::vector<float> w = RandomFloats(static_cast<size_t>(M * K), 21);
        std::vector<float> packed(static_cast<size_t>(PackedConvWeightsFloats(M, K, static_cast<int>(mr))));
        PackConvWeights(w.data(), M, K, static_cast<int>(mr), packed.data());
        const int64_t ldb = n0 + k.gemm_pair_max_cols;
        const std::vector<float> b = RandomFloats(static_cast<size_t>(K * ldb), 22);
        std::vector<const float*> brows;
        for (int64_t r = 0; r < K; ++r) brows.push_back(b.data() + r * ldb);
        for (int64_t cols = 1; cols <= k.gemm_pair_max_cols; ++cols) {
          const int64_t ldc = cols + 2;
          std::vector<float> two(static_cast<size_t>(M * ldc), -1.0f), pair(two);
          k.gemm_panel(packed.data(), K, brows.data(), n0, two.data(), ldc, mr, cols);
          k.gemm_panel(packed.data() + mr * K, K, brows.data(), n0, two.data() + mr * ldc, ldc, rows2, cols);
          k.gemm_panel_pair(packed.data(), K, brows.data(), n0, pair.data(), ldc, rows2, cols);
          EXPECT_EQ(0, std::memcmp(two.data(), pair.data(), two.size() * sizeof(float)))
              << IsaTierName(tier) << " K " << K << " rows2 " << rows2 << " cols " << cols;
        }
      }
    }
  }
  if (tiers_with_pairs == 0) GTEST_SKIP() << "no tier of this CPU has a two-panel kernel";
}

// ConvTranspose with a constant W (packed at load for the conv GEMM) equals the same node with W
// as a graph input (the reference GEMM + col2im), on every tier.
TEST(FusedConvTest, ConvTransposeWithPackedWeightsMatchesTheReferenceOnEveryTier) {
  struct TCase {
    Shape x, w, strides, pads, output_padding, dilations;
    int64_t group;
  };
  const std::vector<TCase> cases = {
      {{1, 4, 3, 5}, {4, 3, 3, 2}, {2, 1}, {1, 0, 0, 1}, {1, 0}, {1, 1}, 2},
      {{2, 6, 4, 7}, {6, 5, 1, 3}, {1, 2}, {0, 1, 0, 1}, {0, 1}, {1, 1}, 1},      // gtcrn-like (1, 3) stride (1, 2)
      {{1, 16, 5, 9}, {16, 8, 2, 3}, {1, 1}, {0, 0, 0, 0}, {0, 0}, {2, 1}, 4},    // dilated
      {{1, 13, 3, 11}, {13, 17, 1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0}, {1, 1}, 1},  // 1x1: GEMM straight into Y
      {{1, 3, 10}, {3, 2, 4}, {3}, {1, 2}, {2}, {1}, 1},                          // 1-D
  };
  TierGuard guard;
  for (IsaTier tier : HostTiers()) {
    ASSERT_TRUE(ForceIsaTierForTesting(tier));
    for (size_t i = 0; i < cases.size(); ++i) {
      const TCase& c = cases[i];
      const Tensor x = RandomTensor(c.x, 41 + static_cast<uint32_t>(i)), w = RandomTensor(c.w, 42);
      const Tensor b = RandomTensor({c.w[1] * c.group}, 43);
      SingleNode node{.op = "ConvTranspose", .opset = 11, .inputs = {x, w, b}, .attributes = [&c](onnx::NodeProto& n) {
                        testing::SetAttr(n, "strides", c.strides);
                        testing::SetAttr(n, "pads", c.pads);
                        testing::SetAttr(n, "output_padding", c.output_padding);
                        testing::SetAttr(n, "dilations", c.dilations);
                        testing::SetAttr(n, "group", c.group);
                      }};
      auto want = RunSingleNode(node);
      ASSERT_TRUE(want.ok()) << want.message();
      node.constant_inputs = {1, 2};
      auto got = RunSingleNode(node);
      ASSERT_TRUE(got.ok()) << got.message();
      const auto a = Values<float>((*got)[0]), e = Values<float>((*want)[0]);
      ASSERT_EQ((*got)[0].shape(), (*want)[0].shape()) << "case " << i;
      for (size_t j = 0; j < a.size(); ++j)
        ASSERT_NEAR(a[j], e[j], 1e-5f * (1 + std::fabs(e[j]))) << IsaTierName(tier) << " case " << i << " at " << j;
    }
  }
}

struct PoolCase {
  const char* op;
  Shape x, kernel, strides, pads;
  bool ceil_mode, count_include_pad;
};

// Max/average over each window, in double; windows clamped to the input (ONNX semantics).
std::vector<float> NaivePool(const Tensor& x, const PoolCase& c) {
  const bool two = c.x.size() == 4;
  const int64_t H = two ? c.x[2] : 1, W = c.x.back(), KH = two ? c.kernel[0] : 1, KW = c.kernel.back();
  const int64_t sh = two ? c.strides[0] : 1, sw = c.strides.back();
  const size_t r = c.x.size() - 2;
  const int64_t pt = two ? c.pads[0] : 0, pl = c.pads[r - 1], pb = two ? c.pads[r] : 0, pr = c.pads[2 * r - 1];
  auto out = [&](int64_t in, int64_t k, int64_t s, int64_t p0, int64_t p1) {
    const int64_t span = in + p0 + p1 - k;
    int64_t o = (c.ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (c.ceil_mode && (o - 1) * s >= in + p0) --o;  // the last window must start inside the input or left pad
    return o;
  };
  const int64_t OH = out(H, KH, sh, pt, pb), OW = out(W, KW, sw, pl, pr);
  const bool is_max = std::string(c.op) == "MaxPool";
  std::vector<float> y;
  for (int64_t p = 0; p < c.x[0] * c.x[1]; ++p)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -1e300, sum = 0;
        int64_t cells = 0, padded_cells = 0;
        for (int64_t kh = 0; kh < KH; ++kh)
          for (int64_t kw = 0; kw < KW; ++kw) {
            const int64_t h = oh * sh - pt + kh, w = ow * sw - pl + kw;
            if (h < H + pb && w < W + pr) ++padded_cells;
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            const double v = x.data<float>()[(p * H + h) * W + w];
            best = std::max(best, v);
            sum += v;
            ++cells;
          }
        const int64_t div = c.count_include_pad ? padded_cells : cells;
        y.push_back(static_cast<float>(is_max ? best : sum / static_cast<double>(div)));
      }
  return y;
}

TEST(FusedConvTest, PoolingMatchesPlainLoopsOnEveryTier) {
  const std::vector<PoolCase> cases = {
      {"MaxPool", {1, 3, 72, 32}, {2, 2}, {2, 2}, {0, 0, 0, 0}, false, false},
      {"MaxPool", {2, 5, 9, 11}, {3, 2}, {2, 3}, {1, 0, 1, 1}, true, false},
      {"MaxPool", {1, 4, 10, 4}, {1, 2}, {1, 2}, {0, 0, 0, 0}, false, false},
      {"AveragePool", {1, 6, 3, 80}, {3, 2}, {3, 2}, {0, 0, 0, 0}, false, false},
      {"AveragePool", {1, 3, 7, 9}, {3, 3}, {2, 2}, {1, 1, 1, 1}, true, true},
      {"AveragePool", {1, 3, 7, 9}, {3, 3}, {2, 1}, {1, 2, 0, 1}, false, false},
      {"MaxPool", {1, 2, 17}, {3}, {2}, {1, 1}, false, false},
      {"MaxPool", {1, 2, 5, 70}, {2, 2}, {2, 2}, {0, 0, 1, 1}, false, false},  // column pairs, end pads
      {"AveragePool", {1, 2, 7, 75}, {2, 2}, {2, 2}, {0, 0, 1, 0}, true, true},
      {"MaxPool", {1, 3, 4, 66}, {1, 2}, {1, 2}, {0, 0, 0, 0}, true, false},
  };
  TierGuard guard;
  for (IsaTier tier : HostTiers()) {
    ASSERT_TRUE(ForceIsaTierForTesting(tier));
    for (size_t i = 0; i < cases.size(); ++i) {
      const PoolCase& c = cases[i];
      const Tensor x = RandomTensor(c.x, 31 + static_cast<uint32_t>(i));
      SingleNode node{.op = c.op, .opset = 11, .inputs = {x}, .attributes = [&c](onnx::NodeProto& n) {
                        testing::SetAttr(n, "kernel_shape", c.kernel);
                        testing::SetAttr(n, "strides", c.strides);
                        testing::SetAttr(n, "pads", c.pads);
                        testing::SetAttr(n, "ceil_mode", int64_t{c.ceil_mode});
                        if (std::string(c.op) == "AveragePool")
                          testing::SetAttr(n, "count_include_pad", int64_t{c.count_include_pad});
                      }};
      auto got = RunSingleNode(node);
      ASSERT_TRUE(got.ok()) << got.message();
      const auto want = NaivePool(x, c);
      const auto a = Values<float>((*got)[0]);
      ASSERT_EQ(a.size(), want.size()) << "case " << i;
      for (size_t j = 0; j < a.size(); ++j)
        ASSERT_NEAR(a[j], want[j], 1e-5f * (1 + std::fabs(want[j])))
            << IsaTierName(tier) << " case " << i << " at " << j;
    }
  }
}

// Conv followed by `chain(g, conv_output) -> final output name`, W and every operand constant.
using ChainBuilder = std::function<std::string(onnx::GraphProto&, const std::string&)>;

onnx::ModelProto ConvChainModel(const Shape& xs, const Shape& ws, int64_t group, const ChainBuilder& chain) {
  onnx::GraphProto g;
  g.set_name("conv_chain");
  *g.add_input() = MakeValueInfo("x", DType::kFloat, std::vector<Dim>(xs.begin(), xs.end()));
  *g.add_initializer() = TensorToProto(RandomTensor(ws, 21), "w");
  *g.add_initializer() = TensorToProto(RandomTensor({ws[0]}, 22), "b");
  onnx::NodeProto& conv = AddNode(g, "Conv", {"x", "w", "b"}, {"y0"}, "conv");
  const int64_t pad = (ws[2] - 1) / 2;
  testing::SetAttr(conv, "pads", Shape{pad, pad, pad, pad});
  testing::SetAttr(conv, "group", group);
  const std::string out = chain(g, "y0");
  onnx::ValueInfoProto vi;
  vi.set_name(out);
  *g.add_output() = vi;
  return MakeModel(g, 14);  // HardSwish
}

std::string Const(onnx::GraphProto& g, const std::string& name, const Shape& shape, std::vector<float> v) {
  *g.add_initializer() = TensorToProto(Tensor::FromVector<float>(shape, std::move(v)), name);
  return name;
}

struct ChainCase {
  const char* what;
  ChainBuilder chain;
  int absorbed;  // nodes the pass must take into the FusedConv
};

std::vector<ChainCase> ChainCases() {
  return {
      {"paddle hardswish: Mul, Add, Add/Clip/Mul/Div, Mul, Add",
       [](onnx::GraphProto& g, const std::string& y) {
         AddNode(g, "Mul", {Const(g, "s", {1}, {2.1f}), y}, {"m"});
         AddNode(g, "Add", {"m", Const(g, "t", {1}, {0.3f})}, {"a"});
         AddNode(g, "Add", {"a", Const(g, "three", {}, {3.0f})}, {"a3"});
         AddNode(g, "Clip", {"a3", Const(g, "lo", {}, {0.0f}), Const(g, "hi", {}, {6.0f})}, {"c"});
         AddNode(g, "Mul", {"a", "c"}, {"mc"});
         AddNode(g, "Div", {"mc", Const(g, "six", {}, {6.0f})}, {"hs"});
         AddNode(g, "Mul", {Const(g, "s2", {1}, {0.5f}), "hs"}, {"m2"});
         AddNode(g, "Add", {"m2", Const(g, "t2", {1, 6, 1, 1}, {0.1f, 0.2f, -0.3f, 0.4f, 0.5f, -0.6f})}, {"out"});
         return std::string("out");
       },
       8},
      {"tf2onnx: LeakyRelu then Max",
       [](onnx::GraphProto& g, const std::string& y) {
         auto& lr = AddNode(g, "LeakyRelu", {y}, {"l"});
         testing::SetAttr(lr, "alpha", 0.2f);
         AddNode(g, "Max", {"l", Const(g, "floor", {1, 1, 1, 1}, {-0.4f})}, {"out"});
         return std::string("out");
       },
       2},
      {"BatchNormalization, Relu",
       [](onnx::GraphProto& g, const std::string& y) {
         AddNode(g, "BatchNormalization",
                 {y, Const(g, "sc", {6}, RandomFloats(6, 1)), Const(g, "bb", {6}, RandomFloats(6, 2)),
                  Const(g, "mu", {6}, RandomFloats(6, 3)), Const(g, "var", {6}, {0.5f, 1, 2, 0.1f, 3, 0.7f})},
                 {"bn"});
         AddNode(g, "Relu", {"bn"}, {"out"});
         return std::string("out");
       },
       2},
      {"SiLU, HardSigmoid, HardSwish, Clip attrs-free, Sub, Div, Min",
       [](onnx::GraphProto& g, const std::string& y) {
         AddNode(g, "Sigmoid", {y}, {"sg"});
         AddNode(g, "Mul", {"sg", y}, {"silu"});
         auto& hs = AddNode(g, "HardSigmoid", {"silu"}, {"h"});
         testing::SetAttr(hs, "alpha", 0.3f);
         AddNode(g, "HardSwish", {"h"}, {"hw"});
         AddNode(g, "Sub", {"hw", Const(g, "sub", {6, 1, 1}, {1, 2, 3, 4, 5, 6})}, {"sb"});
         AddNode(g, "Div", {"sb", Const(g, "div", {}, {3.0f})}, {"dv"});
         AddNode(g, "Clip", {"dv", Const(g, "clo", {}, {-1.5f})}, {"cl"});
         AddNode(g, "Min", {Const(g, "cap", {1}, {0.25f}), "cl"}, {"mn"});
         AddNode(g, "Sigmoid", {"mn"}, {"out"});
         return std::string("out");
       },
       9},
      {"stops at a second reader and at a broadcasting constant",
       [](onnx::GraphProto& g, const std::string& y) {
         AddNode(g, "Relu", {y}, {"r"});
         AddNode(g, "Add", {"r", Const(g, "wide", {2, 1, 1, 1}, {1, 2})}, {"wide_sum"});  // would grow N to 2
         AddNode(g, "Mul", {"r", "r"}, {"sq"});
         AddNode(g, "Concat", {"wide_sum", "sq"}, {"out"}).add_attribute()->CopyFrom([] {
           onnx::AttributeProto a;
           a.set_name("axis");
           a.set_type(onnx::AttributeProto::INT);
           a.set_i(0);
           return a;
         }());
         return std::string("out");
       },
       1},  // the Relu
  };
}

TEST(ConvActivationFusionTest, FusedChainsMatchTheUnfusedGraphOnEveryTier) {
  TierGuard guard;
  for (const auto& depthwise : {false, true}) {
    for (const ChainCase& cc : ChainCases()) {
      const Shape xs{1, 6, 7, 13};
      const Shape ws = depthwise ? Shape{6, 1, 3, 3} : Shape{6, 6, 3, 3};
      const onnx::ModelProto model = ConvChainModel(xs, ws, depthwise ? 6 : 1, cc.chain);
      // The pass alone: how much it absorbed.
      onnx::ModelProto fused_model = model;
      std::unordered_map<std::string, Tensor> cache;
      const onnx::GraphProto& g = fused_model.graph();
      ConstantLookup lookup = [&](const std::string& name) -> const Tensor* {
        if (auto it = cache.find(name); it != cache.end()) return &it->second;
        for (const auto& init : g.initializer())
          if (init.name() == name) {
            auto t = TensorFromProto(init);
            return t ? &cache.emplace(name, std::move(*t)).first->second : nullptr;
          }
        return nullptr;
      };
      ConvFusionReport report;
      EXPECT_EQ(FuseConvActivation(fused_model.mutable_graph(), lookup, &report), 1) << cc.what;
      EXPECT_EQ(report.absorbed_nodes, cc.absorbed) << cc.what;
      EXPECT_EQ(fused_model.graph().node_size(), model.graph().node_size() - cc.absorbed) << cc.what;

      SessionOptions ref_opts;
      ref_opts.settings = "nuphar_execution_mode:reference";
      auto reference = Session::CreateFromModel(model, ref_opts);
      ASSERT_TRUE(reference.ok()) << reference.message();
      const Tensor x = RandomTensor(xs, 5);
      auto want = (*reference)->Run({{"x", x}});
      ASSERT_TRUE(want.ok()) << want.message();
      for (IsaTier tier : HostTiers()) {
        ASSERT_TRUE(ForceIsaTierForTesting(tier));
        auto session = Session::CreateFromModel(model);
        ASSERT_TRUE(session.ok()) << session.message();
        auto got = (*session)->Run({{"x", x}});
        ASSERT_TRUE(got.ok()) << got.message();
        const auto a = Values<float>((*got)[0]), b = Values<float>((*want)[0]);
        ASSERT_EQ(a.size(), b.size());
        for (size_t j = 0; j < a.size(); ++j)
          ASSERT_NEAR(a[j], b[j], 1e-5f * (1 + std::fabs(b[j])))
              << cc.what << (depthwise ? " (depthwise) " : " ") << IsaTierName(tier) << " at " << j;
      }
    }
  }
}

}  // namespace
}  // namespace nuphar
