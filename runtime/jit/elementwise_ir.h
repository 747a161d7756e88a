// Kernel IR of a fused elementwise kernel: the level-2 unit the partitioner forms from a chain
// of elementwise nodes (spec runtime.md §8.1), which codegen_elementwise.cc turns into LLVM IR.
//
// # Iteration space
// Every computed value has the kernel's output shape, seen as [rows, cols] (cols = last dim,
// rows = the product of the others). An input is read in one of four ways, fixed at load time
// from the declared shapes and re-checked against the actual shapes on every call (a mismatch
// runs the reference executor instead): the full shape, one row broadcast over the rows
// ([1, ..., cols]), one column broadcast over the columns ([rows..., 1]), or a scalar. A fifth
// kind, "sliced", is the input of a Split along the last axis: [rows..., width], read through
// ColumnSlice ops at fixed column offsets (the split outputs are views, never copies; the parts
// this kernel reads are `cols` wide, the others may have any width).
//
// # Why activations are calls
// Sigmoid, Tanh and Log (IsActivationCall) call the reference's vector math (jit_runtime_abi.h)
// on column tiles kept in stack buffers, so generated kernels round exactly like the reference. The ops between
// activations are fused into one vectorized loop per tile ("segments", see codegen).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "graph/error.h"

namespace onnx {
class GraphProto;
class NodeProto;
class TensorShapeProto;
}

namespace nuphar::jit {

enum class Access : uint8_t { kFull, kRow, kColumn, kScalar, kSliced };

enum class OpKind : uint8_t {
  kAdd, kSub, kMul, kDiv, kMax, kMin,                                  // binary
  kNeg, kAbs, kRelu, kSqrt, kReciprocal, kFloor, kCeil, kExp, kLog,   // unary
  kLeakyRelu, kHardSigmoid, kClip, kIdentity, kPow,                   // unary with constants
  kPRelu,                                                             // binary: x < 0 ? x * slope : x
  kSigmoid, kTanh,                                                    // activations (calls)
  kColumnSlice,                                                       // a sliced input at `offset`
};

const char* OpKindName(OpKind kind);
bool IsActivationCall(OpKind kind);

struct IrOp {
  OpKind kind;
  int a = -1, b = -1;       ///< operand value ids (b only for binary ops)
  float alpha = 0, beta = 0; ///< LeakyRelu alpha; HardSigmoid alpha, beta; Clip lo, hi; Pow exponent
  int64_t offset = 0;        ///< ColumnSlice: first column of the slice in its input
  std::string node;          ///< the ONNX node it came from (dumps, compare-mode reports)
};

/// Value ids: [0, inputs.size()) are the kernel's inputs, inputs.size() + k the result of ops[k].
struct ElementwiseIR {
  std::vector<Access> inputs;
  std::vector<int64_t> input_widths;  ///< per input: the static last dim of a kSliced input, else 0
  int64_t slice_cols = 0;             ///< the static last dim of the result when an input is sliced
  std::vector<IrOp> ops;
  std::vector<int> outputs;  ///< value ids written to the output buffers, in output order

  /// One line per op, e.g. "v3 = Mul v0 v2"; the text is the kernel's identity (and the
  /// codegen_dump_lower output).
  std::string ToText() const;
};

/// Whether the elementwise generator has an emitter for this ONNX op (the partitioner's filter
/// and the IR builder read the same table).
bool HasElementwiseGenerator(const std::string& op_type);
/// Whether that emitter takes a node of `op_type` with `input_count` inputs (1 for unary ops, 1
/// to 3 for Clip, 2 for binary ones, 1 or more for Sum/Max/Min); a node outside its schema's
/// counts stays with the reference kernel, which reports it.
bool ElementwiseGeneratorTakes(const std::string& op_type, int input_count);

/// Whether input `k` of `node` is a scalar constant the generator reads at load time (Clip's
/// bounds, Pow's exponent): the partitioner copies it into the body as a float initializer.
bool IsScalarConstantOperand(const onnx::NodeProto& node, int k);

/// How an input of declared shape `in` is read in the iteration space of declared shape `out`, or
/// "" with the reason in *why when no Access fits (a dim unknown, or another broadcast).
/// Dims are equal when both have the same value or the same non-empty name.
bool ClassifyAccess(const onnx::TensorShapeProto& in, const onnx::TensorShapeProto& out, Access* access,
                    std::string* why);
/// Sizes of a Split along the last axis of a value of rank `rank` and static last dim `width`:
/// from its 'split' attribute, its input 1 (`constant_sizes`, when given), or equal parts (also
/// Split-18's num_outputs). Empty when the node does not split the last axis into known sizes.
std::vector<int64_t> LastAxisSplitSizes(const onnx::NodeProto& split, int64_t rank, int64_t width,
                                        const std::vector<int64_t>* constant_sizes);
/// Whether two declared shapes are provably equal (same rank, every dim equal as above).
bool SameDeclaredShape(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b);

/// Builds the IR of a partition body (runtime/jit/partitioner.h): float32 elementwise nodes whose
/// outputs all have the body's output shape, inputs classified by Access against it. Returns a
/// Diag naming the node when a node or an input cannot be expressed.
Expected<ElementwiseIR> BuildElementwiseIR(const onnx::GraphProto& body);

}  // namespace nuphar::jit
