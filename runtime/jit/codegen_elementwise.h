// LLVM IR emission for the elementwise kernel IR (elementwise_ir.h).
//
// The entry function has the C signature
//   void <name>(float* const* buffers, int64_t rows, int64_t cols, const int64_t* input_cols,
//               void* const* abi)
// with the inputs' buffers first, then the outputs'; input_cols[i] is input i's last dim (the
// row stride of a sliced input), followed by the strided inputs' geometry
// (ElementwiseIR::StridedGeometrySize); abi is RuntimeAbiTable() (jit_runtime_abi.h). It forwards to an internal function whose
// buffer parameters are noalias (the executor never aliases an output with an input), so
// LLVM vectorizes without run-time overlap checks.
#pragma once

#include <memory>
#include <string>

#include "runtime/jit/elementwise_ir.h"

namespace llvm {
class Function;
class LLVMContext;
class Module;
}  // namespace llvm

namespace nuphar::jit {

/// Column tile of the activation calls, in floats (4 KB per staged value: stays in L1).
inline constexpr int64_t kActivationTile = 1024;

/// The kernel's internal, always-inlined body `name` in `module`:
///   void (float* noalias buffers..., int64_t rows, int64_t cols, const int64_t* input_cols,
///         void* const* abi)
/// (the entry function and the whole-Scan loop both call it).
llvm::Function* EmitElementwiseBody(const ElementwiseIR& ir, const std::string& name, llvm::Module& module);

/// The entry function `name` for `ir`, in a new module of `context`.
std::unique_ptr<llvm::Module> EmitElementwiseKernel(const ElementwiseIR& ir, const std::string& name,
                                                    llvm::LLVMContext& context);

}  // namespace nuphar::jit
