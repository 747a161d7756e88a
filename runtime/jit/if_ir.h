// Kernel IR of a whole If (spec runtime.md R1): the branches of an If whose every node is a view
// (Squeeze, Unsqueeze, Reshape, Flatten, Identity: datamove_ir.h) of values the If reads from
// the enclosing graph, with axes and shapes held by the branch's own constants. PyTorch exports
// one for every squeeze of a dim it cannot prove is 1:
//
//   c = Equal(Gather(Shape(x), 0), 1)          (a symbolic batch: not foldable at load)
//   y = If(c) then: Squeeze(x, axes)  else: Identity(x)
//
// Such an If needs no code: its kernel (jit_if_kernel.h) reads the condition, computes the
// chosen branch's output shapes from the actual input shapes (PlanDataMove, the data-movement
// family's view rule) and shares the input's buffer, as the reference view kernels do, with no
// branch frame and no dispatch of the branch's nodes.
//
// # Values
// Value v < operands.size() is operand v (the If's input 1 + v, a value of the enclosing graph);
// value operands.size() + s is the result of step s.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/error.h"
#include "graph/tensor_data.h"
#include "runtime/jit/datamove_ir.h"

namespace onnx {
class GraphProto;
}

namespace nuphar::jit {

/// What the IR builder knows of a value the If reads from the enclosing graph.
struct IfOperand {
  std::string name;
  DType dtype = DType::kUndefined;
  int rank = -1;  ///< -1: unknown (refused)
};

/// The most values (operands plus steps) of one branch a kernel plans on the stack.
inline constexpr size_t kMaxIfValues = 32;

struct IfBranchIR {
  struct Step {
    DataMoveIR view;  ///< op kView without computed parameters
    int source = 0;   ///< the value it views
    int in_rank = 0;  ///< the source's rank the view was built for
  };
  std::vector<Step> steps;   ///< in the branch's order
  std::vector<int> outputs;  ///< per If output: the value it is
  std::vector<int> output_operands;  ///< per If output: the operand whose buffer it shares
};

/// The values a branch reads from the enclosing graph as views' data or as its outputs, each once,
/// in order of first use (the If's operands: the partitioner appends them to the If's inputs).
std::vector<std::string> IfBranchOuterValues(const onnx::GraphProto& branch);

/// The IR of one branch, whose enclosing reads are `operands` (default-domain opset `opset`); an
/// error names the first branch node that is not a view of them (the partition dump prints it).
Expected<IfBranchIR> BuildIfBranchIR(const onnx::GraphProto& branch, int opset, std::span<const IfOperand> operands);

/// The shape of every value of `ir` for the operands' actual shapes: writes `ranks[v]` and the
/// dims of value v at `dims + v * kMaxMoveRank`; false when a view does not fit them (the
/// reference If then runs and reports what is wrong).
bool PlanIfBranch(const IfBranchIR& ir, std::span<const std::span<const int64_t>> operand_shapes, int* ranks,
                  int64_t* dims);

}  // namespace nuphar::jit
