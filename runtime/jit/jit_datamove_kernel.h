// The kernel of a data-movement partition node (partitioner.h: one Transpose, Slice, Concat,
// Gather, Pad, Shape, Size or view node): plans each call from the actual shapes, runs the
// generated copy (or makes the view), and falls back to the reference executor when the call
// does not fit the code or an index is out of range.
#pragma once

#include <memory>

#include "graph/error.h"
#include "runtime/core/op_kernel.h"

namespace nuphar::jit {

/// The partition node attribute that marks a data-movement partition (its value: the opset of
/// the default domain, which the body's node follows).
inline constexpr const char* kDataMoveOpsetAttr = "datamove_opset";

/// Creates the kernel of a partition node carrying kDataMoveOpsetAttr.
Expected<std::unique_ptr<OpKernel>> CreateJitDataMoveKernel(const NodeInfo& node);

}  // namespace nuphar::jit
