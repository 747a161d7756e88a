// LLVM IR emission for the product kernel IR (codegen_product.h).
#include "runtime/jit/codegen_product.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "runtime/jit/jit_runtime_abi.h"

namespace nuphar::jit {

std::unique_ptr<llvm::Module> EmitProductKernel(const ProductIR& ir, const std::string& name, llvm::LLVMContext& context) {
  (void)ir;  // every product's code is the same call: the product is an argument
  auto module = std::make_unique<llvm::Module>(name, context);
  llvm::IRBuilder<> b(context);
  llvm::Type* i8p = b.getInt8PtrTy();
  llvm::Type* f32p = b.getFloatTy()->getPointerTo();
  llvm::Type* i64p = b.getInt64Ty()->getPointerTo();
  // (call, x, x_dims, rank, y, scratch): the entry's parameters and the ABI slot's, in one order.
  std::vector<llvm::Type*> product_params = {i8p, f32p, i64p, b.getInt64Ty(), f32p, i8p};
  auto* slot_type = llvm::FunctionType::get(b.getVoidTy(), product_params, false);
  std::vector<llvm::Type*> entry_params = product_params;
  entry_params.push_back(i8p->getPointerTo());
  auto* type = llvm::FunctionType::get(b.getVoidTy(), entry_params, false);
  auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module.get());
  f->addParamAttr(1, llvm::Attribute::NoAlias);
  f->addParamAttr(4, llvm::Attribute::NoAlias);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", f));
  std::vector<llvm::Value*> args;
  for (auto& a : f->args()) args.push_back(&a);
  llvm::Value* abi = args.back();
  args.pop_back();
  llvm::Value* fn = b.CreateLoad(i8p, b.CreateConstInBoundsGEP1_64(i8p, abi, kAbiProductF32));
  b.CreateCall(slot_type, b.CreateBitCast(fn, slot_type->getPointerTo()), args);
  b.CreateRetVoid();
  return module;
}

}  // namespace nuphar::jit
