// LLVM IR of whole Scan loops (codegen_scan.h).
#include "runtime/jit/codegen_scan.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include "runtime/jit/codegen_elementwise.h"

namespace nuphar::jit {

void ScanLoopLayout::AssignParams() {
  int next = 1 + 2 * static_cast<int>(scan_in.size() + scan_out.size());
  for (ScanLoopStep& s : steps) {
    s.params = next;
    next += s.elementwise ? 2 + static_cast<int>(s.elementwise->inputs.size())
                          : 3 + static_cast<int>(s.input_slots.size());
  }
  num_params = next;
}

std::unique_ptr<llvm::Module> EmitScanLoop(const ScanLoopLayout& layout, const std::string& name,
                                           llvm::LLVMContext& context) {
  auto module = std::make_unique<llvm::Module>(name, context);
  llvm::IRBuilder<> b(context);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* f32p = b.getFloatTy()->getPointerTo();
  llvm::Type* i8p = b.getInt8PtrTy();

  // Bodies of the elementwise steps first (internal, always inlined into the loop).
  std::vector<llvm::Function*> bodies(layout.steps.size(), nullptr);
  for (size_t s = 0; s < layout.steps.size(); ++s)
    if (layout.steps[s].elementwise)
      bodies[s] = EmitElementwiseBody(*layout.steps[s].elementwise, name + ".step" + std::to_string(s), *module);

  auto* fn_type = llvm::FunctionType::get(
      b.getVoidTy(), {f32p->getPointerTo(), i64->getPointerTo(), i64, i64, i8p->getPointerTo()}, false);
  auto* fn = llvm::Function::Create(fn_type, llvm::Function::ExternalLinkage, name, module.get());
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* slots = fn->getArg(0);
  llvm::Value* params = fn->getArg(1);
  llvm::Value* t0 = fn->getArg(2);
  llvm::Value* seq = fn->getArg(3);
  llvm::Value* abi = fn->getArg(4);
  auto* entry = llvm::BasicBlock::Create(context, "entry", fn);
  b.SetInsertPoint(entry);

  auto param = [&](int index) { return b.CreateLoad(i64, b.CreateConstInBoundsGEP1_64(i64, params, index)); };
  auto param_ptr = [&](int index) { return b.CreateConstInBoundsGEP1_64(i64, params, index); };
  auto slot_ptr = [&](int slot) { return b.CreateConstInBoundsGEP1_64(f32p, slots, slot); };
  auto load_slot = [&](int slot) -> llvm::Value* {
    return slot < 0 ? llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(f32p))
                    : static_cast<llvm::Value*>(b.CreateLoad(f32p, slot_ptr(slot)));
  };

  // Argument arrays of the direct calls, allocated once.
  std::vector<llvm::AllocaInst*> direct_in(layout.steps.size(), nullptr), direct_out(layout.steps.size(), nullptr);
  for (size_t s = 0; s < layout.steps.size(); ++s) {
    const ScanLoopStep& step = layout.steps[s];
    if (!step.direct) continue;
    direct_in[s] = b.CreateAlloca(f32p, b.getInt32(static_cast<uint32_t>(step.input_slots.size())), "ins");
    direct_out[s] = b.CreateAlloca(f32p, b.getInt32(static_cast<uint32_t>(step.output_slots.size())), "outs");
  }
  llvm::Value* scratch = b.CreateIntToPtr(param(0), i8p, "scratch");

  auto* header = llvm::BasicBlock::Create(context, "t.head", fn);
  auto* body = llvm::BasicBlock::Create(context, "t.body", fn);
  auto* exit = llvm::BasicBlock::Create(context, "t.exit", fn);
  b.CreateBr(header);
  b.SetInsertPoint(header);
  llvm::PHINode* t = b.CreatePHI(i64, 2, "t");
  t->addIncoming(t0, entry);
  b.CreateCondBr(b.CreateICmpSLT(t, seq), body, exit);
  b.SetInsertPoint(body);

  // Pointer bumps: slice t (or seq - 1 - t for a reverse direction) of each scan input/output.
  llvm::Value* back = b.CreateSub(b.CreateSub(seq, b.getInt64(1)), t);
  auto bump = [&](int slot, int base_index, bool reverse) {
    llvm::Value* pos = reverse ? back : t;
    llvm::Value* base = b.CreateIntToPtr(param(base_index), f32p);
    b.CreateStore(b.CreateGEP(b.getFloatTy(), base, b.CreateMul(pos, param(base_index + 1))), slot_ptr(slot));
  };
  for (size_t j = 0; j < layout.scan_in.size(); ++j)
    bump(layout.scan_in[j], layout.ScanInParams(j), layout.scan_in_reverse[j]);
  for (size_t k = 0; k < layout.scan_out.size(); ++k)
    bump(layout.scan_out[k], layout.ScanOutParams(k), layout.scan_out_reverse[k]);

  // The body, step by step.
  for (size_t s = 0; s < layout.steps.size(); ++s) {
    const ScanLoopStep& step = layout.steps[s];
    if (step.elementwise) {
      std::vector<llvm::Value*> args;
      for (int slot : step.input_slots) args.push_back(load_slot(slot));
      for (int slot : step.output_slots) args.push_back(load_slot(slot));
      args.push_back(param(step.params));
      args.push_back(param(step.params + 1));
      args.push_back(param_ptr(step.params + 2));
      args.push_back(abi);
      b.CreateCall(bodies[s], args);
      continue;
    }
    for (size_t i = 0; i < step.input_slots.size(); ++i)
      b.CreateStore(load_slot(step.input_slots[i]), b.CreateConstInBoundsGEP1_64(f32p, direct_in[s], i));
    for (size_t o = 0; o < step.output_slots.size(); ++o)
      b.CreateStore(load_slot(step.output_slots[o]), b.CreateConstInBoundsGEP1_64(f32p, direct_out[s], o));
    // The kernel and its state come through params (ScanLoopLayout::DirectFnParam): the module
    // holds no address, so its object is valid in any process (the kernel cache, kernel_cache.h).
    auto* call_type = llvm::FunctionType::get(
        b.getVoidTy(), {i8p, f32p->getPointerTo(), i64->getPointerTo(), f32p->getPointerTo(), i64, i8p}, false);
    const int fn_param = layout.DirectFnParam(step);
    llvm::Value* callee = b.CreateIntToPtr(param(fn_param), call_type->getPointerTo());
    llvm::Value* state = b.CreateIntToPtr(param(fn_param + 1), i8p);
    b.CreateCall(call_type, callee,
                 {state, direct_in[s], param_ptr(step.params + 1), direct_out[s], param(step.params), scratch});
  }

  // State ping-pong: the state just produced becomes the next step's input; its old buffer
  // takes the next output (unless that output is a scan output, whose slot moves every step).
  for (size_t k = 0; k < layout.state_in.size(); ++k) {
    llvm::Value* previous = load_slot(layout.state_in[k]);
    llvm::Value* produced = load_slot(layout.state_out[k]);
    b.CreateStore(produced, slot_ptr(layout.state_in[k]));
    if (!layout.state_out_is_scan_output[k]) b.CreateStore(previous, slot_ptr(layout.state_out[k]));
  }
  t->addIncoming(b.CreateAdd(t, b.getInt64(1)), b.GetInsertBlock());
  b.CreateBr(header);
  b.SetInsertPoint(exit);
  b.CreateRetVoid();
  return module;
}

}  // namespace nuphar::jit
