// LLVM IR emission for the product kernel IR (product_ir.h).
//
// The entry function has the C signature
//   void <name>(const void* call, const float* x, const int64_t* x_dims, int64_t rank, float* y,
//               void* scratch, void* const* abi)
// call is a nuphar::ProductInvocation (the product kernel's ProductCall and the plan its prepare
// wrote for x), x input 0 with its actual dims, y the output (sized by prepare), scratch the bytes
// prepare asked for, aligned, and abi RuntimeAbiTable() (jit_runtime_abi.h); the body calls
// abi[kAbiProductF32] with them.
#pragma once

#include <memory>
#include <string>

#include "runtime/jit/product_ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace nuphar::jit {

/// The entry function `name` for `ir`, in a new module of `context`.
std::unique_ptr<llvm::Module> EmitProductKernel(const ProductIR& ir, const std::string& name, llvm::LLVMContext& context);

}  // namespace nuphar::jit
