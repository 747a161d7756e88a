// LLVM IR for reduction kernels (codegen_reduce.h).
//
// Loop nests, each output folded in the reference's order (reduce_ir.h, "Numerics"):
//   inner == 1:  for o { acc = identity; for r { acc = combine(acc, term(x[o, r])) } y[o] = finish(acc) }
//   inner > 1:   for o { y[o, :] = identity; for r { for i: y[o, i] = combine(y[o, i], term(x[o, r, i])) }
//                        for i: y[o, i] = finish(y[o, i]) }   (the i loop vectorizes)
//   Pools:       for plane, oh, ow { acc = identity; for kh, kw: acc = combine(acc, x[...]) } (n = H, inner = W)
//   LayerNorm:   inner == 1: for o { fold the mean; fold (x - mean)^2; y[o, :] = (x - mean) / s }
//   Softmax:     inner == 1: for o: the ABI's vector softmax on row o;
//                otherwise (and LogSoftmax): the reference's scalar slice for each (o, i).
// When `inner` is an argument both forms are emitted and chosen per call. No fast-math flags: LLVM
// never reorders a fold.
#include "runtime/jit/codegen_reduce.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <functional>
#include <limits>

#include "graph/error.h"

#include "runtime/jit/codegen_loop.h"
#include "runtime/jit/jit_runtime_abi.h"

namespace nuphar::jit {
namespace {

using llvm::IRBuilder;
using llvm::Value;

class ReduceEmitter {
 public:
  ReduceEmitter(const ReduceIR& ir, llvm::Module& m) : ir_(ir), m_(m), b_(m.getContext()) {}

  void Emit(llvm::Function* f) {
    llvm::LLVMContext& ctx = m_.getContext();
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx, "entry", f));
    auto arg = f->arg_begin();
    x_ = &*arg++;
    y_ = &*arg++;
    outer_ = Dim(ir_.outer, &*arg++);
    n_ = Dim(ir_.n, &*arg++);
    inner_ = Dim(ir_.inner, &*arg++);
    abi_ = &*arg++;
    acc_ = b_.CreateAlloca(AccType(), nullptr, "acc");
    first_ = b_.CreateAlloca(b_.getFloatTy(), nullptr, "first");
    if (IsPool(ir_.kind)) {
      EmitPool();
    } else if (ir_.inner == 1) {
      EmitRows();
    } else if (ir_.inner > 1) {
      EmitColumns();
    } else {
      auto* rows = llvm::BasicBlock::Create(ctx, "rows", f);
      auto* columns = llvm::BasicBlock::Create(ctx, "columns", f);
      auto* done = llvm::BasicBlock::Create(ctx, "done", f);
      b_.CreateCondBr(b_.CreateICmpEQ(inner_, b_.getInt64(1)), rows, columns);
      b_.SetInsertPoint(rows);
      EmitRows();
      b_.CreateBr(done);
      b_.SetInsertPoint(columns);
      EmitColumns();
      b_.CreateBr(done);
      b_.SetInsertPoint(done);
    }
    b_.CreateRetVoid();
  }

 private:
  Value* Dim(int64_t baked, Value* argument) { return baked >= 0 ? b_.getInt64(baked) : argument; }
  bool Normalizes() const { return ir_.kind == ReduceKind::kSoftmax || ir_.kind == ReduceKind::kLogSoftmax; }
  llvm::Type* AccType() { return ir_.kind == ReduceKind::kGlobalAverage ? b_.getDoubleTy() : b_.getFloatTy(); }
  Value* F(float v) { return llvm::ConstantFP::get(b_.getFloatTy(), v); }
  Value* LoadX(Value* index) { return b_.CreateLoad(b_.getFloatTy(), b_.CreateGEP(b_.getFloatTy(), x_, index)); }
  Value* YPtr(Value* index) { return b_.CreateGEP(b_.getFloatTy(), y_, index); }
  Value* Libm(const char* name, Value* v) {
    return b_.CreateCall(m_.getOrInsertFunction(name, b_.getFloatTy(), b_.getFloatTy()), {v});
  }
  // if (cond) then(); with the builder left after it.
  void If(Value* cond, const std::function<void()>& then) {
    llvm::Function* f = b_.GetInsertBlock()->getParent();
    auto* yes = llvm::BasicBlock::Create(m_.getContext(), "then", f);
    auto* after = llvm::BasicBlock::Create(m_.getContext(), "endif", f);
    b_.CreateCondBr(cond, yes, after);
    b_.SetInsertPoint(yes);
    then();
    b_.CreateBr(after);
    b_.SetInsertPoint(after);
  }

  // The fold's identity, per-element term and combination (the reference's ReduceKind rules).
  Value* Identity() {
    switch (ir_.kind) {
      case ReduceKind::kMax: return F(-std::numeric_limits<float>::infinity());
      case ReduceKind::kMin: return F(std::numeric_limits<float>::infinity());
      case ReduceKind::kGlobalAverage: return llvm::ConstantFP::get(b_.getDoubleTy(), 0.0);
      default: return F(0.0f);
    }
  }
  Value* Combine(Value* acc, Value* x) {
    switch (ir_.kind) {
      case ReduceKind::kMax:
      case ReduceKind::kGlobalMax: return b_.CreateSelect(b_.CreateFCmpOGT(x, acc), x, acc);  // v > acc ? v : acc
      case ReduceKind::kMin: return b_.CreateSelect(b_.CreateFCmpOLT(x, acc), x, acc);
      case ReduceKind::kL2:
      case ReduceKind::kSumSquare: return b_.CreateFAdd(acc, b_.CreateFMul(x, x));
      case ReduceKind::kGlobalAverage: return b_.CreateFAdd(acc, b_.CreateFPExt(x, b_.getDoubleTy()));
      default: return b_.CreateFAdd(acc, x);
    }
  }
  Value* Finish(Value* acc) {
    switch (ir_.kind) {
      case ReduceKind::kMean:  // count == 0 ? acc : acc / count
        return b_.CreateSelect(b_.CreateICmpEQ(n_, b_.getInt64(0)), acc,
                               b_.CreateFDiv(acc, b_.CreateSIToFP(n_, b_.getFloatTy())));
      case ReduceKind::kL2: {
        Value* d = b_.CreateFPExt(acc, b_.getDoubleTy());
        d = b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::sqrt, {b_.getDoubleTy()}), {d});
        return b_.CreateFPTrunc(d, b_.getFloatTy());
      }
      case ReduceKind::kGlobalAverage:  // size > 0 ? float(sum / size) : 0
        return b_.CreateSelect(b_.CreateICmpEQ(n_, b_.getInt64(0)), F(0.0f),
                               b_.CreateFPTrunc(b_.CreateFDiv(acc, b_.CreateSIToFP(n_, b_.getDoubleTy())),
                                                b_.getFloatTy()));
      default: return acc;
    }
  }

  // inner == 1: one scalar fold per output row.
  void EmitRows() {
    if (ir_.kind == ReduceKind::kSoftmax) return EmitSoftmaxRows();
    if (ir_.kind == ReduceKind::kLayerNorm) return EmitLayerNormRows();
    if (Normalizes()) return EmitSlices(b_.getInt64(1));
    EmitLoop(b_, b_.getInt64(0), outer_, "o", [&](Value* o) {
      Value* base = b_.CreateMul(o, n_);
      if (ir_.kind == ReduceKind::kGlobalMax) return EmitGlobalMaxRow(base, o);
      b_.CreateStore(Identity(), acc_);
      EmitLoop(b_, b_.getInt64(0), n_, "r", [&](Value* r) {
        b_.CreateStore(Combine(b_.CreateLoad(AccType(), acc_), LoadX(b_.CreateAdd(base, r))), acc_);
      });
      b_.CreateStore(Finish(b_.CreateLoad(AccType(), acc_)), YPtr(o));
    });
  }

  // Windows of [outer planes, H = n, W = inner], each folded row by row as the reference's plane
  // kernel does: max as acc < v ? v : acc from the lowest float, the average as a float sum / cells.
  void EmitPool() {
    const bool is_max = ir_.kind == ReduceKind::kMaxPool;
    Value* out_h = b_.CreateAdd(b_.CreateSDiv(b_.CreateSub(n_, b_.getInt64(ir_.kernel_h)), b_.getInt64(ir_.stride_h)),
                                b_.getInt64(1));
    Value* out_w = b_.CreateAdd(
        b_.CreateSDiv(b_.CreateSub(inner_, b_.getInt64(ir_.kernel_w)), b_.getInt64(ir_.stride_w)), b_.getInt64(1));
    Value* cells = F(static_cast<float>(ir_.kernel_h * ir_.kernel_w));
    EmitLoop(b_, b_.getInt64(0), outer_, "p", [&](Value* p) {
      Value* plane = b_.CreateMul(p, b_.CreateMul(n_, inner_));
      Value* out_plane = b_.CreateMul(p, b_.CreateMul(out_h, out_w));
      EmitLoop(b_, b_.getInt64(0), out_h, "oh", [&](Value* oh) {
        EmitLoop(b_, b_.getInt64(0), out_w, "ow", [&](Value* ow) {
          b_.CreateStore(F(is_max ? std::numeric_limits<float>::lowest() : 0.0f), acc_);
          Value* h0 = b_.CreateMul(oh, b_.getInt64(ir_.stride_h));
          Value* w0 = b_.CreateMul(ow, b_.getInt64(ir_.stride_w));
          EmitLoop(b_, b_.getInt64(0), b_.getInt64(ir_.kernel_h), "kh", [&](Value* kh) {
            Value* row = b_.CreateAdd(plane, b_.CreateMul(b_.CreateAdd(h0, kh), inner_));
            EmitLoop(b_, b_.getInt64(0), b_.getInt64(ir_.kernel_w), "kw", [&](Value* kw) {
              Value* v = LoadX(b_.CreateAdd(row, b_.CreateAdd(w0, kw)));
              Value* acc = b_.CreateLoad(b_.getFloatTy(), acc_);
              b_.CreateStore(is_max ? b_.CreateSelect(b_.CreateFCmpOLT(acc, v), v, acc) : b_.CreateFAdd(acc, v), acc_);
            });
          });
          Value* acc = b_.CreateLoad(b_.getFloatTy(), acc_);
          b_.CreateStore(is_max ? acc : b_.CreateFDiv(acc, cells),
                         YPtr(b_.CreateAdd(out_plane, b_.CreateAdd(b_.CreateMul(oh, out_w), ow))));
        });
      });
    });
  }

  // The layer-norm chain per row (reduce_ir.h), each value as its node computes it.
  void EmitLayerNormRows() {
    auto mean_of = [&](Value* sum) {  // ReduceMean's finish: count == 0 ? sum : sum / count
      return b_.CreateSelect(b_.CreateICmpEQ(n_, b_.getInt64(0)), sum,
                             b_.CreateFDiv(sum, b_.CreateSIToFP(n_, b_.getFloatTy())));
    };
    EmitLoop(b_, b_.getInt64(0), outer_, "o", [&](Value* o) {
      Value* base = b_.CreateMul(o, n_);
      b_.CreateStore(F(0.0f), acc_);
      EmitLoop(b_, b_.getInt64(0), n_, "r", [&](Value* r) {
        b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(b_.getFloatTy(), acc_), LoadX(b_.CreateAdd(base, r))), acc_);
      });
      Value* mean = mean_of(b_.CreateLoad(b_.getFloatTy(), acc_));
      b_.CreateStore(F(0.0f), acc_);
      EmitLoop(b_, b_.getInt64(0), n_, "r", [&](Value* r) {  // Pow(d, 2) is d * d
        Value* d = b_.CreateFSub(LoadX(b_.CreateAdd(base, r)), mean);
        b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(b_.getFloatTy(), acc_), b_.CreateFMul(d, d)), acc_);
      });
      Value* variance = mean_of(b_.CreateLoad(b_.getFloatTy(), acc_));
      Value* deviation = b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, llvm::Intrinsic::sqrt, {b_.getFloatTy()}),
                                       {b_.CreateFAdd(variance, F(ir_.epsilon))});
      EmitLoop(b_, b_.getInt64(0), n_, "r", [&](Value* r) {
        Value* index = b_.CreateAdd(base, r);
        b_.CreateStore(b_.CreateFDiv(b_.CreateFSub(LoadX(index), mean), deviation), YPtr(index));
      });
    });
  }

  // std::max_element: the first element, replaced by each later one that is greater; 0 when empty.
  void EmitGlobalMaxRow(Value* base, Value* o) {
    b_.CreateStore(F(0.0f), first_);
    If(b_.CreateICmpSGT(n_, b_.getInt64(0)), [&] {
      b_.CreateStore(LoadX(base), first_);
      EmitLoop(b_, b_.getInt64(1), n_, "r", [&](Value* r) {
        b_.CreateStore(Combine(b_.CreateLoad(b_.getFloatTy(), first_), LoadX(b_.CreateAdd(base, r))), first_);
      });
    });
    b_.CreateStore(b_.CreateLoad(b_.getFloatTy(), first_), YPtr(o));
  }

  // inner > 1: the outputs of one outer index fold side by side, row r of x after row r - 1.
  void EmitColumns() {
    if (Normalizes()) return EmitSlices(inner_);
    // Global pooling reduces every axis after the channel: its inner is a static 1.
    NUPHAR_CHECK(ir_.kind != ReduceKind::kGlobalAverage && ir_.kind != ReduceKind::kGlobalMax &&
                     ir_.kind != ReduceKind::kLayerNorm,
                 "global pooling or a layer norm with inner > 1");
    EmitLoop(b_, b_.getInt64(0), outer_, "o", [&](Value* o) {
      Value* out_base = b_.CreateMul(o, inner_);
      Value* in_base = b_.CreateMul(out_base, n_);
      EmitLoop(b_, b_.getInt64(0), inner_, "i", [&](Value* i) { b_.CreateStore(Identity(), YPtr(b_.CreateAdd(out_base, i))); });
      EmitLoop(b_, b_.getInt64(0), n_, "r", [&](Value* r) {
        Value* row = b_.CreateAdd(in_base, b_.CreateMul(r, inner_));
        EmitLoop(b_, b_.getInt64(0), inner_, "i", [&](Value* i) {
          Value* p = YPtr(b_.CreateAdd(out_base, i));
          b_.CreateStore(Combine(b_.CreateLoad(b_.getFloatTy(), p), LoadX(b_.CreateAdd(row, i))), p);
        });
      });
      EmitLoop(b_, b_.getInt64(0), inner_, "i", [&](Value* i) {
        Value* p = YPtr(b_.CreateAdd(out_base, i));
        b_.CreateStore(Finish(b_.CreateLoad(b_.getFloatTy(), p)), p);
      });
    });
  }

  // Softmax rows through the reference's vector softmax (jit_runtime_abi.h), so the bits match.
  void EmitSoftmaxRows() {
    llvm::Type* f32p = b_.getFloatTy()->getPointerTo();
    auto* type = llvm::FunctionType::get(b_.getVoidTy(), {f32p, f32p, b_.getInt64Ty()}, false);
    Value* fn = b_.CreateLoad(b_.getInt8PtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getInt8PtrTy(), abi_, kAbiSoftmaxF32));
    If(b_.CreateICmpSGT(n_, b_.getInt64(0)), [&] {
      EmitLoop(b_, b_.getInt64(0), outer_, "o", [&](Value* o) {
        Value* base = b_.CreateMul(o, n_);
        b_.CreateCall(type, b_.CreateBitCast(fn, type->getPointerTo()),
                      {b_.CreateGEP(b_.getFloatTy(), x_, base), YPtr(base), n_});
      });
    });
  }

  // The reference's SoftmaxSlice for each (o, i): n elements at stride `stride`.
  void EmitSlices(Value* stride) {
    If(b_.CreateICmpSGT(n_, b_.getInt64(0)), [&] {
      EmitLoop(b_, b_.getInt64(0), outer_, "o", [&](Value* o) {
        EmitLoop(b_, b_.getInt64(0), stride, "i", [&](Value* i) {
          Value* base = b_.CreateAdd(b_.CreateMul(b_.CreateMul(o, n_), stride), i);
          auto at = [&](Value* r) { return b_.CreateAdd(base, b_.CreateMul(r, stride)); };
          b_.CreateStore(LoadX(base), first_);  // the max, from element 0
          EmitLoop(b_, b_.getInt64(1), n_, "r", [&](Value* r) {
            Value* v = LoadX(at(r));
            Value* m = b_.CreateLoad(b_.getFloatTy(), first_);
            b_.CreateStore(b_.CreateSelect(b_.CreateFCmpOGT(v, m), v, m), first_);
          });
          Value* max = b_.CreateLoad(b_.getFloatTy(), first_);
          b_.CreateStore(F(0.0f), acc_);
          EmitLoop(b_, b_.getInt64(0), n_, "r", [&](Value* r) {
            Value* e = Libm("expf", b_.CreateFSub(LoadX(at(r)), max));
            if (ir_.kind == ReduceKind::kSoftmax) b_.CreateStore(e, YPtr(at(r)));
            b_.CreateStore(b_.CreateFAdd(b_.CreateLoad(b_.getFloatTy(), acc_), e), acc_);
          });
          Value* sum = b_.CreateLoad(b_.getFloatTy(), acc_);
          if (ir_.kind == ReduceKind::kSoftmax) {
            EmitLoop(b_, b_.getInt64(0), n_, "r", [&](Value* r) {
              Value* p = YPtr(at(r));
              b_.CreateStore(b_.CreateFDiv(b_.CreateLoad(b_.getFloatTy(), p), sum), p);
            });
          } else {
            Value* log_sum = Libm("logf", sum);
            EmitLoop(b_, b_.getInt64(0), n_, "r", [&](Value* r) {  // (x - max) - log_sum
              b_.CreateStore(b_.CreateFSub(b_.CreateFSub(LoadX(at(r)), max), log_sum), YPtr(at(r)));
            });
          }
        });
      });
    });
  }

  const ReduceIR& ir_;
  llvm::Module& m_;
  IRBuilder<> b_;
  Value *x_ = nullptr, *y_ = nullptr, *outer_ = nullptr, *n_ = nullptr, *inner_ = nullptr, *abi_ = nullptr;
  Value *acc_ = nullptr, *first_ = nullptr;
};

}  // namespace

std::unique_ptr<llvm::Module> EmitReduceKernel(const ReduceIR& ir, const std::string& name, llvm::LLVMContext& context) {
  auto module = std::make_unique<llvm::Module>(name, context);
  IRBuilder<> b(context);
  llvm::Type* f32p = b.getFloatTy()->getPointerTo();
  auto* type = llvm::FunctionType::get(
      b.getVoidTy(), {f32p, f32p, b.getInt64Ty(), b.getInt64Ty(), b.getInt64Ty(), b.getInt8PtrTy()->getPointerTo()}, false);
  auto* f = llvm::Function::Create(type, llvm::Function::ExternalLinkage, name, module.get());
  f->addParamAttr(0, llvm::Attribute::NoAlias);
  f->addParamAttr(1, llvm::Attribute::NoAlias);
  f->addFnAttr(llvm::Attribute::NoUnwind);
  ReduceEmitter(ir, *module).Emit(f);
  return module;
}

}  // namespace nuphar::jit
