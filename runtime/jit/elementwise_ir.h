// Kernel IR of a fused elementwise kernel: the level-2 unit the partitioner forms from a chain
// of elementwise nodes (spec runtime.md §8.1), which codegen_elementwise.cc turns into LLVM IR.
//
// # Iteration space
// Every computed value has the kernel's output shape, seen as [rows, cols] (cols = last dim,
// rows = the product of the others). An input is read in one of four ways, fixed at load time
// from the declared shapes and re-checked against the actual shapes on every call (a mismatch
// runs the reference executor instead): the full shape, one row broadcast over the rows
// ([1, ..., cols]), one column broadcast over the columns ([rows..., 1]), a scalar, or "strided":
// any other broadcast (each dim equal to the result's or 1: gtcrn's [C, F] weights over
// [B, T, C, F], per-channel [C, 1, 1] over [N, C, H, W]), addressed per row through per-dim
// strides of the actual shapes (arguments of each call; the last dim is read contiguously, or
// repeated for kStridedColumn, as declared). BatchNormalization's per-channel parameters [C] are
// kChannel: strided inputs viewed as [C, 1, ..., 1] at the result's dim 1. A further kind, "sliced", is the input of a Split along the last axis: [rows..., width], read through
// ColumnSlice ops at fixed column offsets (the split outputs are views, never copies; the parts
// this kernel reads are `cols` wide, the others may have any width).
//
// # Element types
// Every value has one element type: float32, int32, int64 or bool (the runtime's bool storage:
// one byte, 0 or 1). Arithmetic keeps its operands' type (shape computations in int64), the
// comparisons and the logic ops give bool, Where selects, and Cast is the only op that changes a
// number's type; ElementwiseResultType is the one table of which op takes which types (the
// partitioner's filter and the IR builder both read it). Integer ops follow the reference
// kernels exactly: wrapping arithmetic, division truncating toward zero with x / 0 = 0.
//
// # Why activations are calls
// Sigmoid, Tanh and Log (IsActivationCall) call the reference's vector math (jit_runtime_abi.h)
// on column tiles kept in stack buffers, so generated kernels round exactly like the reference. The ops between
// activations are fused into one vectorized loop per tile ("segments", see codegen).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "graph/error.h"
#include "graph/tensor_data.h"

namespace onnx {
class GraphProto;
class NodeProto;
class TensorShapeProto;
}

namespace nuphar::jit {

enum class Access : uint8_t { kFull, kRow, kColumn, kScalar, kSliced, kStrided, kStridedColumn, kChannel };
/// Whether inputs of this access are read through the per-call strided geometry.
inline bool IsStrided(Access a) { return a == Access::kStrided || a == Access::kStridedColumn || a == Access::kChannel; }

enum class OpKind : uint8_t {
  kAdd, kSub, kMul, kDiv, kMax, kMin,                                  // binary
  kNeg, kAbs, kRelu, kSqrt, kReciprocal, kFloor, kCeil, kExp, kLog,   // unary
  kLeakyRelu, kHardSigmoid, kIdentity, kPow,                          // unary with constants
  kPRelu,                                                             // binary: x < 0 ? x * slope : x
  kSigmoid, kTanh,                                                    // activations (calls)
  kColumnSlice,                                                       // a sliced input at `offset`
  kModFloor, kModTrunc,                                               // integer Mod, fmod=0 / fmod=1
  kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual,            // comparisons -> bool
  kNot, kAnd, kOr, kXor,                                              // logic on bool
  kWhere,                                                             // c ? a : b (condition in `c`)
  kCast,                                                              // a converted to `type`
  kConstant,                                                          // the float `alpha` (no operand)
  kClipBelow, kClipAbove,  // Clip's two halves, bound in b (a value or a Constant): (a < b) ? b : a, (b < a) ? b : a
  kClip,  // Clip: the builder lowers it to ClipBelow and ClipAbove, never in the IR
  kBatchNorm,  // BatchNormalization: the builder expands it into the reference's ops, never in the IR
};

const char* OpKindName(OpKind kind);
bool IsActivationCall(OpKind kind);

struct IrOp {
  OpKind kind;
  int a = -1, b = -1;       ///< operand value ids (b only for binary ops)
  int c = -1;                ///< Where's condition
  DType type = DType::kFloat;  ///< the element type of the result
  float alpha = 0, beta = 0; ///< LeakyRelu alpha; HardSigmoid alpha, beta; Pow exponent; Constant value
  int64_t offset = 0;        ///< ColumnSlice: first column of the slice in its input
  std::string node;          ///< the ONNX node it came from (dumps, compare-mode reports)
};

/// Value ids: [0, inputs.size()) are the kernel's inputs, inputs.size() + k the result of ops[k].
struct ElementwiseIR {
  std::vector<Access> inputs;
  std::vector<DType> input_types;     ///< per input: its element type
  std::vector<int64_t> input_widths;  ///< per input: the static last dim of a kSliced input, else 0
  int64_t slice_cols = 0;             ///< the static last dim of the result when an input is sliced
  int64_t rank = 0;                   ///< the result's rank when an input is strided, else 0
  /// The strided geometry (FillStridedGeometry) when the declared shapes fix it: baked into the
  /// code as constants, and a call whose actual geometry differs runs the reference. Empty when
  /// a dim it depends on is symbolic (then it is the call's argument only).
  std::vector<int64_t> static_geometry;
  std::vector<IrOp> ops;
  std::vector<int> outputs;  ///< value ids written to the output buffers, in output order

  /// Inputs read through strides (kStrided, kStridedColumn).
  int StridedInputs() const;
  /// The int64s a call passes after each input's last dim when inputs are strided: the result's
  /// dims but the last (rank - 1), then each strided input's stride per such dim (0 where it
  /// repeats), in input order.
  size_t StridedGeometrySize() const;
  /// Writes that geometry (StridedGeometrySize values) for a result of shape `result` (rank
  /// `rank`) and inputs of shapes `input_shape(i)`, which broadcast to it.
  void FillStridedGeometry(std::span<const int64_t> result,
                           const std::function<std::span<const int64_t>(size_t)>& input_shape, int64_t* out) const;

  /// The element type of value `v`.
  DType TypeOf(int v) const;
  /// Whether every value is float32 (the whole-Scan loop takes only such kernels).
  bool AllFloat() const;

  /// One line per op, e.g. "v3 = Mul v0 v2" (a value of another type than float names it:
  /// "v3 = Mul v0 v2 : int64"); the codegen_dump_lower output.
  std::string ToText() const;
};

/// Whether the elementwise generator has an emitter for this ONNX op (the partitioner's filter
/// and the IR builder read the same table).
bool HasElementwiseGenerator(const std::string& op_type);
/// Whether that emitter takes a node of `op_type` with `input_count` inputs (1 for unary ops, 1
/// to 3 for Clip, 2 for binary ones, 1 or more for Sum/Max/Min); a node outside its schema's
/// counts stays with the reference kernel, which reports it.
bool ElementwiseGeneratorTakes(const std::string& op_type, int input_count);

/// The element types the generator takes: float32, int32, int64 and bool.
bool IsGeneratedElementType(DType type);
/// The element type of `node`'s output when its operands have `input_types` (one per input; an
/// empty input is kUndefined), or kUndefined with the reason in *why when the generator does
/// not take these types (most ops take float only; see "Element types" above).
DType ElementwiseResultType(const onnx::NodeProto& node, const std::vector<DType>& input_types, std::string* why);

/// The opset from which the generator takes `op_type` (0 when it has no generator).
int ElementwiseMinOpset(const std::string& op_type);

/// Whether input `k` of `node` is a scalar the generator reads at load time when it is a constant
/// (Clip's bounds, Pow's exponent): the partitioner copies such a constant into the body as a float
/// initializer. Pow's exponent must be one; a Clip bound that is not is a float scalar value of the
/// kernel (Access::kScalar), read per call.
bool IsScalarConstantOperand(const onnx::NodeProto& node, int k);

/// How an input of declared shape `in` is read in the iteration space of declared shape `out`, or
/// false with the reason in *why when no Access fits (a dim unknown, or dims that do not broadcast).
/// Dims are equal when both have the same value or the same non-empty name; an input dim and the
/// result's are also taken as equal when neither is 1 and one is symbolic (inference may name one
/// size twice; each call checks the actual shapes and runs the reference when they differ).
bool ClassifyAccess(const onnx::TensorShapeProto& in, const onnx::TensorShapeProto& out, Access* access,
                    std::string* why);
/// How BatchNormalization's parameter input (scale, B, mean or var) of declared shape `param` is
/// read over its X of declared shape `x`: per channel, [C] with C X's dim 1 (a row when X is
/// [N, C], else kChannel). False with the reason in *why otherwise (spatial=0's per-activation
/// parameters among them).
bool ClassifyChannelParam(const onnx::TensorShapeProto& param, const onnx::TensorShapeProto& x, Access* access,
                          std::string* why);
/// Whether a BatchNormalization node is the inference form the generator expands (one output,
/// training_mode 0, spatial 1), with the reason in *why when not.
bool IsInferenceBatchNorm(const onnx::NodeProto& node, int opset, std::string* why);

/// Whether two declared shapes are provably equal (same rank, every dim equal as above).
bool SameDeclaredShape(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b);

/// Builds the IR of a partition body (runtime/jit/partitioner.h): elementwise nodes whose
/// outputs all have the body's output shape, inputs classified by Access against it. Returns a
/// Diag naming the node when a node or an input cannot be expressed. `opset`: the graph's ONNX
/// opset (which form of a Split's sizes counts, graph/split_sizes.h).
Expected<ElementwiseIR> BuildElementwiseIR(const onnx::GraphProto& body, int opset);

}  // namespace nuphar::jit
