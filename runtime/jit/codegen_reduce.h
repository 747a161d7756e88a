// LLVM IR emission for the reduction kernel IR (reduce_ir.h).
//
// The entry function has the C signature
//   void <name>(const float* x, float* y, int64_t outer, int64_t n, int64_t inner, void* const* abi)
// x is the input seen as [outer, n, inner], y the output ([outer, inner] for a reduction, x's
// shape for Softmax); the IR's static products override the arguments; abi is
// RuntimeAbiTable() (jit_runtime_abi.h). x and y never alias (the executor's rule).
#pragma once

#include <memory>
#include <string>

#include "runtime/jit/reduce_ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace nuphar::jit {

/// The entry function `name` for `ir`, in a new module of `context`.
std::unique_ptr<llvm::Module> EmitReduceKernel(const ReduceIR& ir, const std::string& name, llvm::LLVMContext& context);

}  // namespace nuphar::jit
