// LLVM IR for data-movement kernels (codegen_datamove.h).
//
// Each piece is a loop nest whose source and destination pointers are loop-carried and bumped
// by the loop's strides (no index arithmetic per element); a Gather's index loop instead
// computes its source from the index it loads, after checking it against the bound as the
// reference does (negative indices count from the end).
#include "runtime/jit/codegen_datamove.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

namespace nuphar::jit {
namespace {

using llvm::IRBuilder;
using llvm::Value;

constexpr int64_t kMemcpyMinElements = 16;

class MoveEmitter {
 public:
  MoveEmitter(const DataMoveIR& ir, llvm::Function* f)
      : ir_(ir), f_(f), b_(f->getContext()), elem_(b_.getIntNTy(static_cast<unsigned>(8 * ir.elem_bytes))) {
    src_elem_ = elem_;
    if (ir.op == MoveOp::kCast) {  // typed elements on both sides of the conversion
      elem_ = TypeOf(ir.cast_to);
      src_elem_ = TypeOf(ir.cast_from);
    }
  }

  void Emit() {
    llvm::LLVMContext& ctx = f_->getContext();
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f_));
    fail_ = llvm::BasicBlock::Create(ctx, "index_out_of_range", f_);
    auto arg = f_->arg_begin();
    // LLVM 14 pointers are typed: each i8* buffer is cast to the element type it is read as.
    for (int i = 0; i <= ir_.num_operands; ++i) raw_.push_back(&*arg++);
    for (size_t i = 0; i < raw_.size(); ++i)
      buffers_.push_back(b_.CreateBitCast(raw_[i], (i + 1 < raw_.size() ? src_elem_ : elem_)->getPointerTo()));
    numbers_ = &*arg;
    Value* out = buffers_.back();
    if (ir_.has_fill) {
      Value* fill = llvm::ConstantInt::get(elem_, ir_.fill);  // Pad: elem_ is an integer type
      Value* count = Number();
      Loop(count, out, nullptr, nullptr, nullptr, true, [&](Value* dst, Value*, Value*) { b_.CreateStore(fill, dst); });
    }
    for (const MovePiece& p : ir_.pieces) {
      Value* src = b_.CreateGEP(src_elem_, buffers_[static_cast<size_t>(p.source)], Number());
      Value* dst = b_.CreateGEP(elem_, out, Number());
      Nest(p, 0, src, dst);
    }
    for (int v = 0; v < ir_.num_values; ++v)
      b_.CreateStore(Number(), b_.CreateConstInBoundsGEP1_64(elem_, out, static_cast<uint64_t>(v)));
    b_.CreateRet(b_.getInt32(0));
    b_.SetInsertPoint(fail_);
    b_.CreateRet(b_.getInt32(1));
  }

 private:
  // The LLVM type of a Cast's element (bool is a byte holding 0 or 1).
  llvm::Type* TypeOf(DType t) {
    switch (t) {
      case DType::kFloat: return b_.getFloatTy();
      case DType::kDouble: return b_.getDoubleTy();
      default: return b_.getIntNTy(static_cast<unsigned>(8 * DTypeSize(t)));
    }
  }
  static bool IsSigned(DType t) {
    return t == DType::kInt8 || t == DType::kInt16 || t == DType::kInt32 || t == DType::kInt64;
  }

  // The reference's static_cast (bool: v != 0, NaN included; integers wrap, sign- or
  // zero-extend by the source's signedness; integers to float round to nearest).
  Value* Convert(Value* v) {
    const DType from = ir_.cast_from, to = ir_.cast_to;
    const bool float_from = from == DType::kFloat || from == DType::kDouble;
    const bool float_to = to == DType::kFloat || to == DType::kDouble;
    if (to == DType::kBool) {
      Value* nonzero = float_from ? b_.CreateFCmpUNE(v, llvm::ConstantFP::get(src_elem_, 0.0))
                                  : b_.CreateICmpNE(v, llvm::ConstantInt::get(src_elem_, 0));
      return b_.CreateZExt(nonzero, elem_);
    }
    if (float_from) return b_.CreateFPCast(v, elem_);  // float <-> double (float -> integer is refused)
    if (float_to) return IsSigned(from) ? b_.CreateSIToFP(v, elem_) : b_.CreateUIToFP(v, elem_);
    return b_.CreateIntCast(v, elem_, IsSigned(from));
  }

  // The next plan number: a constant when baked, else read from the argument array.
  Value* Number() {
    const size_t n = next_++;
    if (ir_.baked[n]) return b_.getInt64(ir_.numbers[n]);
    return b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), numbers_, n),
                         std::string("n").append(std::to_string(n)));
  }

  // Loop `level` of piece `p` and the ones inside it, from `src` / `dst`.
  void Nest(const MovePiece& p, int level, Value* src, Value* dst) {
    if (level == p.loops) {
      Value* v = b_.CreateLoad(src_elem_, src);
      if (ir_.op == MoveOp::kCast) v = Convert(v);
      b_.CreateStore(v, dst);
      return;
    }
    Value* size = Number();
    Value* src_stride = Number();
    Value* dst_stride = Number();
    if (level != p.indirect_loop) {
      if (level + 1 == p.loops && ir_.op != MoveOp::kCast) {
        ContiguousOrStrided(size, dst, dst_stride, src, src_stride);
        return;
      }
      Loop(size, dst, dst_stride, src, src_stride, level + 1 == p.loops,
           [&](Value* d, Value* s, Value*) { Nest(p, level + 1, s, d); });
      return;
    }
    Value* bound = Number();
    const bool wide = ir_.index_bytes == 8;
    llvm::Type* index_type = wide ? b_.getInt64Ty() : b_.getInt32Ty();
    Value* indices = b_.CreateBitCast(raw_[static_cast<size_t>(p.index_operand)], index_type->getPointerTo());
    Loop(size, dst, dst_stride, nullptr, nullptr, level + 1 == p.loops, [&](Value* d, Value*, Value* i) {
      Value* index = b_.CreateLoad(index_type, b_.CreateGEP(index_type, indices, i));
      if (!wide) index = b_.CreateSExt(index, b_.getInt64Ty());
      index = b_.CreateSelect(b_.CreateICmpSLT(index, b_.getInt64(0)), b_.CreateAdd(index, bound), index);
      auto* in_range = llvm::BasicBlock::Create(f_->getContext(), "index_ok", f_);
      b_.CreateCondBr(b_.CreateICmpUGE(index, bound), fail_, in_range);
      b_.SetInsertPoint(in_range);
      Nest(p, level + 1, b_.CreateGEP(src_elem_, src, b_.CreateMul(index, src_stride)), d);
    });
  }

  // The innermost copy loop: one memcpy when both strides are 1 and the run is at least
  // kMemcpyMinElements long (known at load, or tested per call when they are arguments: an
  // element-by-element loop cost 0.3 us on gtcrn's [33, 2, 1, 4] Transpose, while a memcpy call
  // per element cost as much on Silero's int64 Gathers), else the strided loop.
  void ContiguousOrStrided(Value* size, Value* dst, Value* dst_stride, Value* src, Value* src_stride) {
    auto strided = [&] {
      Loop(size, dst, dst_stride, src, src_stride, true,
           [&](Value* d, Value* s, Value*) { b_.CreateStore(b_.CreateLoad(src_elem_, s), d); });
    };
    auto contiguous = [&] {
      Value* bytes = b_.CreateMul(size, b_.getInt64(static_cast<uint64_t>(ir_.elem_bytes)));
      b_.CreateMemCpy(dst, llvm::MaybeAlign(ir_.elem_bytes), src, llvm::MaybeAlign(ir_.elem_bytes), bytes);
    };
    auto* sc = llvm::dyn_cast<llvm::ConstantInt>(src_stride);
    auto* dc = llvm::dyn_cast<llvm::ConstantInt>(dst_stride);
    auto* nc = llvm::dyn_cast<llvm::ConstantInt>(size);
    if (sc && dc && nc) {
      if (sc->isOne() && dc->isOne() && nc->getSExtValue() >= kMemcpyMinElements) contiguous();
      else strided();
      return;
    }
    llvm::LLVMContext& ctx = f_->getContext();
    auto* then = llvm::BasicBlock::Create(ctx, "contiguous", f_);
    auto* other = llvm::BasicBlock::Create(ctx, "strided", f_);
    auto* join = llvm::BasicBlock::Create(ctx, "copied", f_);
    Value* unit = b_.CreateAnd(b_.CreateAnd(b_.CreateICmpEQ(src_stride, b_.getInt64(1)), b_.CreateICmpEQ(dst_stride, b_.getInt64(1))),
                               b_.CreateICmpSGE(size, b_.getInt64(kMemcpyMinElements)));
    b_.CreateCondBr(unit, then, other);
    b_.SetInsertPoint(then);
    contiguous();
    b_.CreateBr(join);
    b_.SetInsertPoint(other);
    strided();
    b_.CreateBr(join);
    b_.SetInsertPoint(join);
  }

  // for (i = 0; i < count; ++i, dst += dst_stride, src += src_stride) body(dst, src, i); the
  // pointers are loop-carried (src may be null: not carried). Only the innermost loop may be
  // unrolled: fully unrolling a constant outer loop around a vectorized inner one made 650 KB of
  // IR for one Transpose and tens of milliseconds of compile.
  template <class Body>
  void Loop(Value* count, Value* dst, Value* dst_stride, Value* src, Value* src_stride, bool innermost, Body&& body) {
    llvm::LLVMContext& ctx = f_->getContext();
    llvm::BasicBlock* pre = b_.GetInsertBlock();
    auto* head = llvm::BasicBlock::Create(ctx, "move.head", f_);
    auto* loop = llvm::BasicBlock::Create(ctx, "move.body", f_);
    auto* exit = llvm::BasicBlock::Create(ctx, "move.exit", f_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::PHINode* i = b_.CreatePHI(b_.getInt64Ty(), 2, "i");
    llvm::PHINode* d = b_.CreatePHI(dst->getType(), 2, "dst");
    llvm::PHINode* s = src ? b_.CreatePHI(src->getType(), 2, "src") : nullptr;
    i->addIncoming(b_.getInt64(0), pre);
    d->addIncoming(dst, pre);
    if (s) s->addIncoming(src, pre);
    b_.CreateCondBr(b_.CreateICmpSLT(i, count), loop, exit);
    b_.SetInsertPoint(loop);
    body(d, s, i);
    llvm::BasicBlock* latch = b_.GetInsertBlock();
    i->addIncoming(b_.CreateAdd(i, b_.getInt64(1), "i.next", true, true), latch);
    d->addIncoming(dst_stride ? b_.CreateGEP(elem_, d, dst_stride) : b_.CreateConstGEP1_64(elem_, d, 1), latch);
    if (s) s->addIncoming(b_.CreateGEP(src_elem_, s, src_stride), latch);
    llvm::BranchInst* back = b_.CreateBr(head);
    if (!innermost) {
      llvm::Metadata* disable = llvm::MDNode::get(ctx, {llvm::MDString::get(ctx, "llvm.loop.unroll.disable")});
      auto self = llvm::MDNode::getTemporary(ctx, llvm::None);
      llvm::MDNode* id = llvm::MDNode::get(ctx, {self.get(), disable});
      id->replaceOperandWith(0, id);
      back->setMetadata(llvm::LLVMContext::MD_loop, id);
    }
    b_.SetInsertPoint(exit);
  }

  const DataMoveIR& ir_;
  llvm::Function* f_;
  IRBuilder<> b_;
  llvm::Type* elem_;      ///< the output's element
  llvm::Type* src_elem_;  ///< the operands' (differs for a Cast)
  std::vector<Value*> raw_, buffers_;
  Value* numbers_ = nullptr;
  llvm::BasicBlock* fail_ = nullptr;
  size_t next_ = 0;
};

}  // namespace

std::unique_ptr<llvm::Module> EmitDataMoveKernel(const DataMoveIR& ir, const std::string& name,
                                                 llvm::LLVMContext& context) {
  auto module = std::make_unique<llvm::Module>(name, context);
  IRBuilder<> b(context);
  llvm::Type* ptr = b.getInt8PtrTy();
  llvm::Type* numbers = b.getInt64Ty()->getPointerTo();
  const unsigned nbuf = static_cast<unsigned>(ir.num_operands + 1);
  // The body: one noalias pointer per buffer, then the numbers.
  std::vector<llvm::Type*> params(nbuf, ptr);
  params.push_back(numbers);
  auto* body = llvm::Function::Create(llvm::FunctionType::get(b.getInt32Ty(), params, false),
                                      llvm::Function::InternalLinkage, name + ".body", module.get());
  for (unsigned i = 0; i < nbuf; ++i) body->addParamAttr(i, llvm::Attribute::NoAlias);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->addFnAttr(llvm::Attribute::NoUnwind);
  MoveEmitter(ir, body).Emit();

  auto* entry = llvm::Function::Create(llvm::FunctionType::get(b.getInt32Ty(), {ptr->getPointerTo(), numbers}, false),
                                       llvm::Function::ExternalLinkage, name, module.get());
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", entry));
  std::vector<Value*> args;
  Value* buffers = &*entry->arg_begin();
  for (unsigned i = 0; i < nbuf; ++i) args.push_back(b.CreateLoad(ptr, b.CreateConstInBoundsGEP1_64(ptr, buffers, i)));
  args.push_back(&*(entry->arg_begin() + 1));
  b.CreateRet(b.CreateCall(body, args));
  return module;
}

}  // namespace nuphar::jit
