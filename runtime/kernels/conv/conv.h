// fp32 convolution family: the public header of runtime/kernels/conv/. FusedConv (a float Conv
// with constant weights plus the elementwise chain after it, made at load by
// runtime/fusion/conv_activation_fusion.cc), ConvTranspose with constant weights (nn_conv.cc)
// and float 1-D/2-D pooling (nn_pool.cc) run on these kernels.
//
// # Pipeline (one file per job, STYLE R10)
//   sgemm_pack.cc          weights packed once at load into panels of gemm_mr output channels.
//   sgemm_kernel_<isa>.cc  the GEMM micro-kernels (intrinsics): one panel times B, B given as
//                          row pointers (an im2col matrix, or spans of the padded input).
//   direct_impl.inc        the per-ISA direct kernels: depthwise, pooling and the epilogue,
//                          written once with GCC vector extensions and compiled by direct_ref.cc
//                          (SSE2, 4 lanes), direct_avx2.cc (8) and direct_avx512.cc (16).
//   driver.cc              the FusedConv OpKernel: shapes, the choice of algorithm, the blocked
//                          GEMM loop (PackedConvGemm); baseline flags. pool.cc: pooling's.
//   dispatch.cc            the only place that knows which implementations exist (ActiveIsaTier).
// Kernels capture their ConvKernels at load: the packed layout (gemm_mr) belongs to it.
// FusedConv splits its GEMM (column blocks x panels) and its depthwise channels over the
// session's pool (nuphar_parallel_min_workloads); ConvTranspose and pooling run on one thread.
//
// # Algorithms
//   depthwise (one input channel per group, any multiplier): direct, one padded input plane per
//     channel, output rows computed kWidth columns at a time with the taps in registers;
//   1x1, unit stride, no padding: the GEMM runs on X itself (no im2col);
//   unit stride, 1-D/2-D: implicit GEMM on the zero-padded input (driver.cc);
//   everything else (strided, 3-D and up): im2col + the GEMM.
// The GEMM walks the output in column blocks whose slice of B stays in L2, and within a block
// panel by panel; bias and epilogue run on a panel's rows of the block right after, in L1.
//
// # Why an epilogue of steps, not one activation enum
// Exporters spell activations as chains of elementwise nodes (PaddleOCR: Mul, Add, then
// HardSwish as Add/Clip/Mul/Div; TF via tf2onnx: LeakyRelu then Max). Each step below does what
// its node does, in the same order and float rounding, so a fused chain gives the unfused
// graph's result up to FMA contraction.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

namespace nuphar {

class KernelRegistry;
class ThreadPool;
/// Registers FusedConv (driver.cc); called by KernelRegistry::Get with the other families.
void RegisterFusedConvKernels(KernelRegistry& r);

/// The fused node (domain kFusedDomain, never written to a model file):
///   Y = FusedConv(X, W, B, S0, S1, ...)   Conv's attributes, plus
///   steps        ints, one ConvStep per epilogue step, in order
///   step_params  floats, 4 per step: alpha, beta, lo, hi
///   step_inputs  ints, per step the input index of its constant operand (S_i), or -1
/// W, B and every S_i are constants (the kernel copies them at load); B may be "".
inline constexpr const char* kFusedConvOp = "FusedConv";

enum class ConvStep : uint8_t {
  kMul,           ///< x * a[c]           (Mul by a constant; a per channel or one value)
  kAdd,           ///< x + a[c]
  kSub,           ///< x - a[c]
  kDiv,           ///< x / a[c]
  kMax,           ///< max(x, a[c])
  kMin,           ///< min(x, a[c])
  kClip,          ///< min(max(x, lo), hi)
  kRelu,          ///< max(x, 0)
  kLeakyRelu,     ///< x < 0 ? alpha * x : x
  kHardSigmoid,   ///< max(0, min(1, alpha * x + beta))
  kHardSwish,     ///< x * max(0, min(1, x / 6 + 1/2))  (the ONNX op)
  kSigmoid,       ///< 1 / (1 + exp(-x))  (vector_math's Sigmoid)
  kMulSigmoid,    ///< x * sigmoid(x)  (Mul(x, Sigmoid(x)), SiLU/Swish)
  kMulClipAddDiv  ///< (x * min(max(x + alpha, lo), hi)) / beta  (HardSwish as Add/Clip/Mul/Div nodes)
};

/// One step; `values` holds 1 or M (output channels) entries for the binary steps.
struct ConvEpilogueStep {
  ConvStep kind = ConvStep::kRelu;
  float alpha = 0, beta = 0, lo = 0, hi = 0;  ///< kLeakyRelu/kHardSigmoid: alpha, beta; kClip: lo, hi
  std::vector<float> values;                  ///< binary steps (1 or M entries)
};

/// The per-ISA kernels (direct_impl.inc). All pointers are float32, row-major.
struct ConvKernels {
  /// Direct 2-D depthwise for one output channel: x is one input plane [H, W], w [KH, KW], y
  /// [OH, OW]. `padded` is scratch of (H + pt + pb) * (W + pl + pr) + 16 floats.
  void (*depthwise_plane)(const float* x, int64_t H, int64_t W, const float* w, int64_t KH, int64_t KW, int64_t sh,
                          int64_t sw, int64_t dh, int64_t dw, int64_t pt, int64_t pl, int64_t pb, int64_t pr, float* y,
                          int64_t OH, int64_t OW, float* padded);
  /// y[i] = epilogue(y[i] + bias) for i < n, channel c (selects per-channel step values).
  void (*epilogue)(float* y, int64_t n, float bias, int64_t c, const ConvEpilogueStep* steps, int num_steps);
  /// C[rows, cols] = A x B for one packed weight panel A (K x gemm_mr, PackConvWeights), where
  /// row k of B is b[k] + n0 .. + cols (row pointers: an im2col matrix or spans of the padded
  /// input, see driver.cc); rows <= gemm_mr. C is overwritten.
  void (*gemm_panel)(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc, int64_t rows,
                     int64_t cols);
  int gemm_mr;  ///< output channels per packed panel
  /// 2-D MaxPool / AveragePool of one plane [H, W] -> [OH, OW], no dilation (pool.cc).
  void (*pool_plane)(const float* x, int64_t H, int64_t W, int64_t KH, int64_t KW, int64_t sh, int64_t sw, int64_t pt,
                     int64_t pl, int64_t pb, int64_t pr, float* y, int64_t OH, int64_t OW, bool is_max,
                     bool count_include_pad);
  const char* name;
  /// Optional (null where the tier has none): gemm_panel for two consecutive packed panels at
  /// once, A then A + K x gemm_mr, writing C rows [0, gemm_mr) and [gemm_mr, gemm_mr + rows2),
  /// for cols <= gemm_pair_max_cols. Same results as two gemm_panel calls, bit for bit.
  void (*gemm_panel_pair)(const float* a, int64_t K, const float* const* b, int64_t n0, float* c, int64_t ldc,
                          int64_t rows2, int64_t cols);
  int64_t gemm_pair_max_cols;
};

struct WindowGeometry;
/// Float MaxPool (without Indices) / AveragePool over 1 or 2 spatial dims without dilation, on
/// the active tier's kernels; returns false (nothing written) for any other case.
bool PoolFloat(const float* x, int64_t planes, const WindowGeometry& g, bool is_max, bool count_include_pad, float* y);

/// Called with a finished piece of one GEMM output row: `len` floats of row `m` at `row`.
using RowsDone = std::function<void(float* row, int64_t len, int64_t m)>;
/// C[M, N] = A x B with A packed by PackConvWeights for `k` (gemm_mr) and B's rows at brows
/// (see ConvKernels::gemm_panel). Blocks of columns, panel by panel; `rows_done` (if set) runs
/// on each panel's rows of a block right after they are computed, while they are in L1.
/// With a pool of several threads and at least `min_work` multiply-adds per thread, the
/// (column block, panel) pieces run as tasks: disjoint outputs, each computed as on one thread,
/// so results do not depend on the thread count.
void PackedConvGemm(const ConvKernels& k, const float* packed, int64_t M, int64_t K, const float* const* brows,
                    int64_t N, float* c, int64_t ldc, const RowsDone& rows_done, ThreadPool* pool = nullptr,
                    int64_t min_work = 0);

/// Floats of one group's packed weights for a kernel with panels of `mr` rows.
int64_t PackedConvWeightsFloats(int64_t Mg, int64_t K, int mr);
/// Packs W_g [Mg, K] (row-major) into ceil(Mg / mr) panels of [K][mr]; rows past Mg are zero.
void PackConvWeights(const float* w, int64_t Mg, int64_t K, int mr, float* out);
inline constexpr int64_t kEpilogueChunk = 256;

enum class ConvPath { kAuto, kRef, kAvx2, kAvx512 };
/// The kernels of the active ISA tier (or the forced path).
const ConvKernels& GetConvKernels();
/// Forces a path (tests); a path the CPU lacks falls back to the next lower one.
void SetConvPathForTesting(ConvPath path);

/// The implementations (direct_<isa>.cc); only dispatch.cc picks among them.
const ConvKernels& ConvKernelsRef();
const ConvKernels& ConvKernelsAvx2();
const ConvKernels& ConvKernelsAvx512();

}  // namespace nuphar
