// The kernel of a product partition node (partitioner.h): one FusedConv, ConvTranspose, MatMul by a
// constant matrix or MatMulAddBias node, whose generated code calls the product's core through the
// runtime ABI (product_ir.h) with the state its reference kernel made at load.
#pragma once

#include <memory>

#include "runtime/core/op_kernel.h"

namespace nuphar::jit {

/// The kernel: its PartitionFallback compiles the body (the reference kernel packs the weights
/// once), the generated call is queued for compiling, and each call runs the code when the
/// product takes input 0's actual shape (else, and in compare mode, the fallback).
Expected<std::unique_ptr<OpKernel>> CreateJitProductKernel(const NodeInfo& node);

}  // namespace nuphar::jit
