// The kernel of com.nuphar.internal.JitIf: an If whose branches are only views of the values it
// reads from the enclosing graph (if_ir.h). It reads the condition, plans the chosen branch's
// output shapes from the actual input shapes and shares their buffers, with no branch frame; a
// call whose shapes do not fit a view, or a condition that is not one bool, runs the reference If
// (same branches), which also checks every run in nuphar_execution_mode:compare.
#pragma once

#include <memory>

#include "graph/error.h"
#include "runtime/core/op_kernel.h"

namespace nuphar::jit {

/// The JitIf attribute holding the rank of each operand (the If's inputs after the condition),
/// from the declared shapes: the branch views are built for those ranks.
inline constexpr const char* kIfOperandRanksAttr = "operand_ranks";

Expected<std::unique_ptr<OpKernel>> CreateJitIfKernel(const NodeInfo& node);

}  // namespace nuphar::jit
