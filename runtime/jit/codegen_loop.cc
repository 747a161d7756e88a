// The counted loop of the code generators (codegen_loop.h).
#include "runtime/jit/codegen_loop.h"

#include <string>

namespace nuphar::jit {

void EmitLoop(llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const char* name,
              const std::function<void(llvm::Value*)>& body) {
  llvm::Function* f = b.GetInsertBlock()->getParent();
  llvm::LLVMContext& ctx = b.getContext();
  llvm::BasicBlock* pre = b.GetInsertBlock();
  auto* header = llvm::BasicBlock::Create(ctx, std::string(name) + ".head", f);
  auto* loop = llvm::BasicBlock::Create(ctx, std::string(name) + ".body", f);
  auto* exit = llvm::BasicBlock::Create(ctx, std::string(name) + ".exit", f);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* i = b.CreatePHI(b.getInt64Ty(), 2, name);
  i->addIncoming(begin, pre);
  b.CreateCondBr(b.CreateICmpSLT(i, end), loop, exit);
  b.SetInsertPoint(loop);
  body(i);
  llvm::Value* next = b.CreateAdd(i, b.getInt64(1), std::string(name) + ".next", /*HasNUW=*/true, /*HasNSW=*/true);
  i->addIncoming(next, b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
}

}  // namespace nuphar::jit
