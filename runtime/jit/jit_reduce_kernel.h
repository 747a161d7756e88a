// The kernel of a reduction partition node (partitioner.h): one Reduce*, Softmax, LogSoftmax or
// Global*Pool node, or a layer-norm chain anchored on its ReduceMeans, compiled from its
// reduction IR (reduce_ir.h).
#pragma once

#include <memory>

#include "runtime/core/op_kernel.h"

namespace onnx {
class GraphProto;
}

namespace nuphar::jit {

/// Attribute of a reduction partition node: the model's default-domain opset, which decides
/// where the axes come from and Softmax's axis semantics (the node itself is in the fused domain).
inline constexpr const char* kOnnxOpsetAttr = "onnx_opset";

/// Whether a partition body is a reduction kernel's (one node with a reduction generator, or the
/// seven nodes of a layer norm).
bool IsReducePartition(const onnx::GraphProto& body);

/// The kernel: builds the IR, queues its compile, and runs the generated code when the input's
/// actual shape fits it (else, and in compare mode, its PartitionFallback).
Expected<std::unique_ptr<OpKernel>> CreateJitReduceKernel(const NodeInfo& node);

}  // namespace nuphar::jit
