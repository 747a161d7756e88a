// Kernel IR of a reduction kernel: one node that folds a contiguous run of axes (spec
// runtime.md §8.1, a reduction anchor), which codegen_reduce.cc turns into LLVM IR.
//
// # Iteration space
// The input is seen as [outer, n, inner]: n is the product of the reduced axes [begin, end),
// outer of the axes before them, inner of those after. Each of the three is baked into the
// code when every dim in it is static, else it is an argument of each call (a symbolic dim such
// as silero's 'sequence' is resolved per Run, never baked).
//
// # Numerics: bit-identical to the reference kernels
// Every output folds its n terms one after the other in the reference's order (r = 0, 1, ...),
// with the reference's identity, comparisons and finishing step: ReduceSum/Mean/SumSquare/L2
// accumulate in float from 0 (L2's square root in double, Mean's division by n in float),
// ReduceMax/Min as `v > acc ? v : acc` from -inf/+inf, GlobalAveragePool in double,
// GlobalMaxPool as std::max_element from the first element. Nothing is reassociated, so the
// loop over `inner` (independent outputs) is what vectorizes. Softmax rows (inner = 1) call the
// reference's vector softmax through the runtime ABI; other Softmax/LogSoftmax slices follow the
// reference's scalar slice (max, expf, sum, divide or logf).
//
// # Pools
// MaxPool and AveragePool over 2-D windows without pads or dilation (floor mode) are window
// reductions: [N, C, H, W] as [outer = N*C, n = H, inner = W]; each window folds row by row,
// left to right, as the reference's plane kernel does (max as `acc < v ? v : acc` from the
// lowest float, the average's float sum divided by the window's cell count).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/error.h"

namespace onnx {
class GraphProto;
class NodeProto;
class TensorShapeProto;
}

namespace nuphar::jit {

enum class ReduceKind : uint8_t {
  kSum, kMean, kMax, kMin, kL2, kSumSquare,  // Reduce*: float accumulation
  kGlobalAverage, kGlobalMax,                // GlobalAveragePool (double sum), GlobalMaxPool
  kSoftmax, kLogSoftmax,                     // normalize along the reduced axes
  kLayerNorm,  // the fused chain below: (x - mean) / sqrt(mean((x - mean)^2) + epsilon)
  kMaxPool, kAveragePool,  // 2-D windows without padding or dilation: [planes, H, W] -> [planes, OH, OW]
};

/// The highest input rank the generator takes (the output shape of a call lives on the stack).
inline constexpr int64_t kMaxReduceRank = 8;

struct ReduceIR {
  ReduceKind kind = ReduceKind::kSum;
  int64_t rank = 0;                   ///< the input's rank
  int64_t begin = 0, end = 0;         ///< the reduced axes [begin, end)
  bool keepdims = true;               ///< Reduce*: reduced axes stay as 1 (Global*Pool always)
  int64_t outer = -1, n = -1, inner = -1;  ///< static products, -1 when an argument
  float epsilon = 0;                  ///< kLayerNorm: the constant added to the variance
  int64_t kernel_h = 0, kernel_w = 0, stride_h = 1, stride_w = 1;  ///< pools: the window (outer, n, inner = planes, H, W)
  std::string node;                   ///< the ONNX node (dumps, reports)

  /// One line, e.g. "ReduceMean [2, 3) of rank 3 keepdims 1 outer ? n 64 inner 1"; the text is
  /// the kernel's identity (and the codegen_dump_lower output).
  std::string ToText() const;
  /// Writes the output shape for an input of shape `in` (of the IR's rank) to `out` (room for
  /// kMaxReduceRank dims: no allocation per call) and returns its rank.
  size_t OutputShape(std::span<const int64_t> in, int64_t* out) const;
};

inline bool IsPool(ReduceKind k) { return k == ReduceKind::kMaxPool || k == ReduceKind::kAveragePool; }

/// Whether the reductions generator has an emitter for this ONNX op (the partitioner's filter).
bool HasReduceGenerator(const std::string& op_type);

/// The IR of `node` (an op HasReduceGenerator names) reading a float input of declared shape
/// `input` under default-domain opset `opset`; `axes_input` is the constant axes input (Reduce
/// ops whose axes are an input), null when there is none. A Diag naming the node says why the
/// generator cannot take it (unknown rank, axes that are not one contiguous run, an empty axes
/// list with noop_with_empty_axes, axes that are not a constant).
Expected<ReduceIR> BuildReduceIR(const onnx::NodeProto& node, const onnx::TensorShapeProto& input, int opset,
                                 const std::vector<int64_t>* axes_input);

/// # The layer-norm anchor (spec §8.1: a reduction anchor with the elementwise chain fused in)
///   m = ReduceMean(x)  d = Sub(x, m)  p = Pow(d, 2)  v = ReduceMean(p)  e = Add(v, eps)
///   s = Sqrt(e)  y = Div(d, s)
/// over the trailing axes (keepdims 1), eps a scalar constant, only y read outside: one kernel
/// (ReduceKind::kLayerNorm) whose rows fold x for the mean, fold (x - mean)^2 for the variance,
/// then write (x - mean) / s; every float operation is the chain's own, in its order, so the
/// result is bit-identical to the seven nodes. The seven nodes in graph order, or null.
struct LayerNormNodes {
  const onnx::NodeProto *mean = nullptr, *sub = nullptr, *pow = nullptr, *variance = nullptr, *add = nullptr,
                        *sqrt = nullptr, *div = nullptr;
};
/// The IR of the chain `nodes` reading x of declared shape `input` (its rank), with the Pow's
/// constant `exponent` and the Add's constant `epsilon`; a Diag when the chain is not the
/// pattern above (an exponent other than 2, axes not trailing or given as an input, keepdims 0,
/// the two means over different axes, operands in other places).
Expected<ReduceIR> BuildLayerNormIR(const LayerNormNodes& nodes, const onnx::TensorShapeProto& input, int opset,
                                    float exponent, float epsilon);
/// The chain's nodes when `body` (a partition body) is exactly the seven nodes, else all null.
LayerNormNodes FindLayerNormNodes(const onnx::GraphProto& body);

/// Whether input `k` of `node` is its axes, an input this generator reads at load time (the
/// partitioner copies it into the partition body as an initializer).
bool IsReduceAxesInput(const onnx::NodeProto& node, int opset, int k);

}  // namespace nuphar::jit
