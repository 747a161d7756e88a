// The counted loop every code generator of runtime/jit emits (elementwise, reductions).
#pragma once

#include <functional>

#include <llvm/IR/IRBuilder.h>

namespace nuphar::jit {

/// for (i = begin; i < end; ++i) body(i); as int64 with the builder left after the loop. Values a
/// loop carries live in allocas of the entry block (promoted to registers by the pass pipeline).
void EmitLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const char* name,
              const std::function<void(llvm::Value*)>& body);

}  // namespace nuphar::jit
