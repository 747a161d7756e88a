// The JIT partitioner (spec runtime.md R1, §8.1): a graph rewrite that replaces each maximal
// acyclic group of nodes the code generator supports by one partition node
//   com.nuphar.internal.JitKernel(inputs...) -> outputs...   attribute body: the group's nodes
// which the JIT kernel factory (jit_kernel.cc) compiles at load time. Every node it does not
// take is recorded with its reason (nuphar_dump_partition prints them).
//
// Before:  a = Add(x, b)   s = Sigmoid(a)   y = Mul(s, h)        (all [B, H] float)
// After:   y = JitKernel(x, b, h)  body: the three nodes, value_info with every shape
// Refused: non-float values, dims without a value or a name, broadcasts other than a row,
//          a column or a scalar, ops without a generator, nodes with subgraphs.
// A reduction (reduce_ir.h: Reduce*, Softmax, LogSoftmax, Global*Pool) is a partition of its own,
// never merged: x -> JitKernel(x) body: the one node, attribute onnx_opset (jit_reduce_kernel.h);
// so is the layer-norm chain around two ReduceMeans (reduce_ir.h): x, eps -> JitKernel -> y.
// A product (product_ir.h: FusedConv, ConvTranspose, MatMul by a constant matrix,
// MatMulAddBias) is one too:
// x -> JitKernel(x) body: the node, which reads its constant inputs from the graph by name.
#pragma once

#include "runtime/core/graph_rewrite.h"

namespace nuphar::jit {

inline constexpr const char* kJitKernelOp = kPartitionOp;  // runtime/core/graph_rewrite.h
/// A Scan (opset 9+) the JIT runs: the whole loop is generated when its body allows
/// (jit_scan_kernel.cc), else the reference Scan runs it.
inline constexpr const char* kJitScanOp = "JitScan";
/// An If whose branches are only views of values it reads (if_ir.h): the partitioner appends
/// those values to its inputs and jit_if_kernel.cc runs it without a branch frame.
inline constexpr const char* kJitIfOp = kWholeIfOp;  // runtime/core/graph_rewrite.h
/// Name prefix of partition bodies: the partitioner never rewrites them again.
inline constexpr const char* kPartitionPrefix = "nuphar_jit_partition_";

// The pass itself is created by jit.h's CreateJitPartitionPass (what the session calls). It adds to
// ModelContext::counters: "jit_nodes" (model nodes taken) and "jit_partitions".

}  // namespace nuphar::jit
