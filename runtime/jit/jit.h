// The JIT path of the runtime (spec runtime.md R1): what the session hands to the executor.
//   runtime/jit/partitioner.h       level-1 partitions as a graph rewrite
//   runtime/jit/elementwise_ir.h    level-2 kernel IR of a partition
//   runtime/jit/codegen_*.cc        LLVM IR per op family
//   runtime/jit/jit_engine.h        LLVM 14 ORC (LLJIT), the only place LLVM is linked
//   runtime/jit/jit_kernel.cc       the OpKernel that runs generated code (and compare mode)
//   runtime/jit/jit_runtime_abi.h   C functions generated code calls
#pragma once

#include <memory>
#include <string>

#include "runtime/core/graph_rewrite.h"
#include "runtime/core/kernel_registry.h"

namespace nuphar::jit {

/// Registers the kernels of partition nodes (com.nuphar.internal.JitKernel) and of Scans the JIT
/// runs (com.nuphar.internal.JitScan).
void RegisterJitKernels(KernelRegistry& registry);
void RegisterJitScanKernel(KernelRegistry& registry);

/// The rewrites of the JIT path, to run after the fusion passes.
std::unique_ptr<GraphPass> CreateJitPartitionPass();

/// md5 hex of a model's bytes: the checksum the kernel cache checks its AOT library against
/// (kernel_cache.h, spec runtime.md R4).
std::string ModelChecksum(const std::string& model_bytes);

}  // namespace nuphar::jit
