// LLVM IR emission for the data-movement kernel IR (datamove_ir.h).
//
// The entry function has the C signature
//   int32_t <name>(void* const* buffers, const int64_t* numbers)
// with the node's operands' buffers first, then the output's; `numbers` is the call's plan
// (PlanDataMove; the baked numbers are constants of the code and are not read). It returns 0, or
// 1 when a Gather index is out of range (nothing is reported: the kernel then runs the
// reference executor, which names the index). It forwards to an internal function whose buffer
// parameters are noalias (an output never aliases an operand), so LLVM vectorizes the
// innermost loops and turns contiguous ones into memcpy without run-time overlap checks.
#pragma once

#include <memory>
#include <string>

#include "runtime/jit/datamove_ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace nuphar::jit {

/// The entry function `name` for `ir` (not a view: views have no code), in a new module of
/// `context`.
std::unique_ptr<llvm::Module> EmitDataMoveKernel(const DataMoveIR& ir, const std::string& name,
                                                 llvm::LLVMContext& context);

}  // namespace nuphar::jit
