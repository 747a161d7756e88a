// Kernel IR of the data-movement family: one Transpose, Slice, Concat, Gather, Pad, Shape or
// Size node as a nest of strided copy loops (codegen_datamove.cc), or one Reshape, Flatten,
// Squeeze, Unsqueeze or Identity as a view (no code: the output shares the input's buffer, as
// the reference kernels do).
//
// # Copy plans
// Every copy op is a list of pieces; a piece copies from one operand into the output through a
// fixed number of loops, each with a size, a source stride and a destination stride (elements),
// starting at a source and a destination offset:
//   Transpose, Slice  one piece, one loop per dim (Slice: strides times steps, negative too)
//   Concat            one piece per input: [outer, axis dim * inner] into the output's window
//   Gather            [outer, indices (the source offset read from the index operand), inner]
//   Pad               fill the whole output with the constant, then one piece into the interior;
//                     reflect and edge: one piece per combination of each padded axis's regions
//                     (before, interior, after): a region before or after reads the input
//                     backwards from its mirror position (reflect) or with stride 0 (edge)
//   Shape, Size       no piece: the output's int64 values
//   ConstantOfShape   no piece: the fill of an output whose dims are its computed input's values
//   Cast              one flat loop converting each element (a Cast to the same type is a view)
//   ScatterND         the data as one flat loop, then the updates into the window their constant
//                     indices address: a box (each index dim walks one data axis by 1, or is 1),
//                     which is what a PyTorch slice assignment exports
// Elements are moved as unsigned integers of their width (1, 2, 4, 8 bytes), so one kernel
// serves float, int64, int32, uint8 or bool alike.
//
// # Static numbers are baked, symbolic ones are arguments (spec runtime.md R1)
// The plan's numbers (offsets, sizes, strides, index bounds, values) are a function of the
// operand shapes. At load they are computed twice from the declared shapes, each symbolic dim
// standing for two different large values: a number equal in both does not depend on a symbol
// and becomes a constant of the code, the others are read from the per-call argument array
// (a static output under kBakeMinElements elements bakes only what no dim changes: see there). Each
// call recomputes the plan from the actual shapes (PlanDataMove) and runs the reference
// executor instead when a baked number differs (the declared shapes were wrong).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/error.h"
#include "graph/tensor_data.h"

namespace onnx {
class NodeProto;
}

namespace nuphar {
class Tensor;
}

namespace nuphar::jit {

enum class MoveOp : uint8_t { kView, kTranspose, kSlice, kConcat, kGather, kPad, kShape, kSize, kCast, kScatter, kFill };
/// What a view computes its output shape like.
enum class ViewKind : uint8_t { kSame, kFlatten, kReshape, kSqueeze, kUnsqueeze };

/// What the IR builder knows of one node input at load time.
struct MoveOperand {
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;             ///< -1: no value (a symbol, named or not)
  std::vector<std::string> dim_params;   ///< the symbol's name, "" when it has none
  const Tensor* constant = nullptr;      ///< the value, when the input is a constant
};

/// One piece of a copy plan: its source operand and loop structure (the numbers are the plan's).
struct MovePiece {
  int source = 0;          ///< node input read
  int loops = 0;
  int indirect_loop = -1;  ///< Gather: the loop whose source offset is index[i] * stride
  int index_operand = -1;  ///< Gather: the node input holding the indices
};

/// The largest plan a kernel takes (numbers on the stack per call).
inline constexpr size_t kMaxPlanNumbers = 256;
inline constexpr size_t kMaxMoveRank = 16;
/// The most operands a kernel reads (a Concat of more inputs stays on the reference).
inline constexpr int kMaxMoveOperands = 16;
/// Static outputs of fewer elements bake only the numbers no dim changes (datamove_ir.cc:
/// compile time).
inline constexpr int64_t kBakeMinElements = 1024;

struct DataMoveIR {
  MoveOp op = MoveOp::kView;
  ViewKind view = ViewKind::kSame;
  std::string onnx_op;
  int elem_bytes = 0;   ///< of the moved elements (8 for Shape and Size)
  int index_bytes = 0;  ///< Gather: 4 (int32) or 8 (int64)
  uint64_t fill = 0;    ///< Pad: the constant's bytes
  bool pad_reflect = false, pad_edge = false;  ///< Pad: mode reflect or edge (else constant)
  DType cast_from = DType::kUndefined, cast_to = DType::kUndefined;  ///< Cast: the conversion
  DType fill_type = DType::kUndefined;  ///< ConstantOfShape: the value's type (its bytes in `fill`)
  int num_operands = 0;
  int out_rank = 0;
  // The node's attributes and constant inputs, normalized (what PlanDataMove reads).
  std::vector<int64_t> perm;                       ///< Transpose
  std::vector<int64_t> starts, ends, axes, steps;  ///< Slice; axes also Squeeze/Unsqueeze
  int64_t axis = 0;                                ///< Concat, Gather, Flatten
  std::vector<int64_t> pads;                       ///< Pad: 2 * rank
  std::vector<int64_t> target;                     ///< Reshape's shape; ConstantOfShape's (computed) dims
  /// ScatterND: the box's first index (k values), and per index dim (the indices' dims but the
  /// last) its size and the data axis it walks (-1 for a dim of 1).
  std::vector<int64_t> scatter_base, scatter_dims, scatter_axes;
  bool allowzero = false;
  /// Slice (starts, ends, axes, steps) or Reshape and ConstantOfShape (shape, in slot 0) parameters that are computed:
  /// the operand each is read from per call, -1 when absent or a constant held above. Their plan
  /// numbers are all arguments.
  int param_operands[4] = {-1, -1, -1, -1};
  bool computed_params = false;
  /// The node input each operand is (data operands first, then computed parameters).
  std::vector<int> operand_node_input;
  int64_t shape_start = 0, shape_end = INT64_MAX;  ///< Shape-15
  // Structure and numbers.
  bool has_fill = false;
  std::vector<MovePiece> pieces;
  int num_values = 0;                ///< Shape, Size: int64 values stored to the output
  std::vector<int64_t> numbers;      ///< the baked value of each plan number
  std::vector<char> baked;           ///< per number: a constant of the code (else an argument)
  /// Per number: baked from the declared static dims, so each call checks it (a baked number no
  /// dim changes, a unit stride or a zero offset, needs no check).
  std::vector<char> checked;

  size_t NumberCount() const { return numbers.size(); }
  /// The kernel's identity: identical texts generate identical code (one compiled function).
  std::string ToText() const;
};

/// Whether the family has a generator for this op type (ONNX domain).
bool HasDataMoveGenerator(const std::string& op_type);
/// Whether this op type is always a view (Reshape, Flatten, Squeeze, Unsqueeze, Identity).
bool IsDataMoveView(const std::string& op_type);

/// The IR of `node` (ONNX domain, default-domain opset `opset`) with its inputs as known at
/// load; an error says why the node cannot be generated (the partition dump prints it).
Expected<DataMoveIR> BuildDataMoveIR(const onnx::NodeProto& node, int opset, std::span<const MoveOperand> inputs,
                                     DType output_dtype);

/// Pad reflect/edge: how many pieces `pads` (2 * rank, none negative) makes: the product over the
/// axes of 1 (interior) + 1 per side padded; 2^62 when that passes it.
int64_t PadRegionPieces(std::span<const int64_t> pads);

/// The values of a call's computed parameters (DataMoveIR::param_operands), defaulted as the
/// reference defaults them (Slice: axes 0..n-1, steps 1).
struct MoveParams {
  std::span<const int64_t> starts, ends, axes, steps, target;
};

/// The plan of one call: writes ir.NumberCount() numbers and the output shape (ir.out_rank dims)
/// from the operand shapes (and `computed`, when the IR has computed parameters), or returns
/// false when they do not make a plan of the IR's structure (the reference executor then runs
/// the node and reports what is wrong).
bool PlanDataMove(const DataMoveIR& ir, std::span<const std::span<const int64_t>> shapes, int64_t* numbers,
                  int64_t* out_shape, const MoveParams* computed = nullptr);

}  // namespace nuphar::jit
