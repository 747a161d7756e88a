// LLVM IR for fused elementwise kernels (codegen_elementwise.h).
//
// Loop nest: rows -> column tiles of kActivationTile -> segments -> columns. A segment is the
// run of ops between two rounds of activation calls: its column loop computes every op of the
// segment for one element in registers, stores the values a later segment or an activation
// needs into stack tiles, and stores the kernel outputs. After the loop, the activations whose
// operands are complete run as calls on whole tiles.
//
// Rounding follows the reference kernels op for op: no fast-math flags, no FMA (the engine allows
// fusion only for llvm.fmuladd, which is never emitted), Max/Min/Clip/Relu as the reference's
// comparisons (NaN handling included).
#include "runtime/jit/codegen_elementwise.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>

#include <algorithm>
#include <functional>
#include <map>

#include "runtime/jit/codegen_loop.h"
#include "runtime/jit/jit_runtime_abi.h"

namespace nuphar::jit {
namespace {

using llvm::IRBuilder;
using llvm::Value;

// When each value becomes readable and where it is kept (see the file comment).
struct Schedule {
  std::vector<int> avail;       // segment from which the value is readable
  std::vector<char> in_tile;    // kept in a stack tile (activation results, values read later)
  std::vector<char> activation; // produced by an activation call
  int segments = 1;
};

Schedule MakeSchedule(const ElementwiseIR& ir) {
  const size_t ni = ir.inputs.size(), nv = ni + ir.ops.size();
  Schedule s;
  s.avail.assign(nv, 0);
  s.in_tile.assign(nv, 0);
  s.activation.assign(nv, 0);
  for (size_t k = 0; k < ir.ops.size(); ++k) {
    const IrOp& op = ir.ops[k];
    const size_t v = ni + k;
    if (IsActivationCall(op.kind)) {
      s.activation[v] = s.in_tile[v] = 1;
      s.in_tile[static_cast<size_t>(op.a)] = 1;  // the call reads a whole tile
      s.avail[v] = s.avail[static_cast<size_t>(op.a)] + 1;
    } else {
      int seg = op.a >= 0 ? s.avail[static_cast<size_t>(op.a)] : 0;  // a constant is readable anywhere
      if (op.b >= 0) seg = std::max(seg, s.avail[static_cast<size_t>(op.b)]);
      if (op.c >= 0) seg = std::max(seg, s.avail[static_cast<size_t>(op.c)]);
      s.avail[v] = seg;
    }
  }
  // A value computed in one segment and read in a later one is kept in a tile. Inputs are read
  // from their buffers in any segment (unless an activation needs them whole).
  for (size_t k = 0; k < ir.ops.size(); ++k) {
    const IrOp& op = ir.ops[k];
    const int seg = s.avail[ni + k];
    for (int operand : {op.a, op.b, op.c})
      if (operand >= static_cast<int>(ni) && s.avail[static_cast<size_t>(operand)] < seg)
        s.in_tile[static_cast<size_t>(operand)] = 1;
  }
  for (size_t v = 0; v < nv; ++v) s.segments = std::max(s.segments, s.avail[v] + 1);
  return s;
}

class Emitter {
 public:
  Emitter(const ElementwiseIR& ir, llvm::Module& m) : ir_(ir), m_(m), b_(m.getContext()), sched_(MakeSchedule(ir)) {}

  void EmitBody(llvm::Function* f) {
    llvm::LLVMContext& ctx = m_.getContext();
    auto* entry = llvm::BasicBlock::Create(ctx, "entry", f);
    b_.SetInsertPoint(entry);
    const size_t ni = ir_.inputs.size(), nv = ni + ir_.ops.size();
    auto arg = f->arg_begin();
    for (size_t i = 0; i < ni + ir_.outputs.size(); ++i) buffers_.push_back(&*arg++);
    rows_ = &*arg++;
    cols_ = &*arg++;
    input_cols_ = &*arg++;
    abi_ = &*arg++;
    tiles_.assign(nv, nullptr);
    for (size_t v = 0; v < nv; ++v) {
      if (!sched_.in_tile[v]) continue;
      auto* tile_type = llvm::ArrayType::get(Storage(ir_.TypeOf(static_cast<int>(v))), kActivationTile);
      auto* a = b_.CreateAlloca(tile_type, nullptr, "tile" + std::to_string(v));
      a->setAlignment(llvm::Align(64));
      tiles_[v] = b_.CreateConstInBoundsGEP2_64(tile_type, a, 0, 0);
    }
    EmitLoop(b_, b_.getInt64(0), rows_, "r", [&](Value* r) {
      EmitStridedRowOffsets(r);
      EmitLoop(b_, b_.getInt64(0), b_.CreateUDiv(b_.CreateAdd(cols_, b_.getInt64(kActivationTile - 1)),
                                                 b_.getInt64(kActivationTile)),
               "t", [&](Value* t) {
                 Value* c0 = b_.CreateMul(t, b_.getInt64(kActivationTile));
                 Value* rest = b_.CreateSub(cols_, c0);
                 Value* len = b_.CreateSelect(b_.CreateICmpSLT(rest, b_.getInt64(kActivationTile)), rest,
                                              b_.getInt64(kActivationTile));
                 for (int seg = 0; seg < sched_.segments; ++seg) {
                   EmitLoop(b_, b_.getInt64(0), len, "c", [&](Value* c) { EmitSegmentElement(seg, r, c0, c); });
                   EmitActivationCalls(seg, len);
                 }
               });
    });
    b_.CreateRetVoid();
  }

 private:
  // Where row `r` starts in each strided input: r split into the result's outer indices (its dims
  // but the last are the call's geometry after the inputs' last dims), each times the input's
  // stride of that dim (0 where it repeats). Once per row, so the column loop stays a plain one.
  void EmitStridedRowOffsets(Value* r) {
    row_offsets_.assign(ir_.inputs.size(), nullptr);
    if (ir_.StridedInputs() == 0) return;
    const int64_t ni = static_cast<int64_t>(ir_.inputs.size()), outer = ir_.rank - 1;
    auto geometry = [&](int64_t k) -> Value* {  // baked when the declared shapes fix it
      if (!ir_.static_geometry.empty()) return b_.getInt64(ir_.static_geometry[static_cast<size_t>(k)]);
      return b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), input_cols_, static_cast<uint64_t>(ni + k)));
    };
    std::vector<Value*> index(static_cast<size_t>(outer));
    Value* rest = r;
    for (int64_t d = outer - 1; d >= 0; --d) {
      Value* dim = geometry(d);
      index[static_cast<size_t>(d)] = b_.CreateURem(rest, dim);
      rest = b_.CreateUDiv(rest, dim);
    }
    int64_t strided = 0;
    for (size_t i = 0; i < ir_.inputs.size(); ++i) {
      if (!IsStrided(ir_.inputs[i])) continue;
      Value* offset = b_.getInt64(0);
      for (int64_t d = 0; d < outer; ++d)
        offset = b_.CreateAdd(offset, b_.CreateMul(index[static_cast<size_t>(d)], geometry(outer * (1 + strided) + d)));
      row_offsets_[i] = offset;
      ++strided;
    }
  }

  void EmitSegmentElement(int seg, Value* r, Value* c0, Value* c) {
    const size_t ni = ir_.inputs.size();
    std::map<int, Value*> ssa;
    Value* col = b_.CreateAdd(c0, c);
    Value* full_index = b_.CreateAdd(b_.CreateMul(r, cols_), col);
    std::function<Value*(int)> get = [&](int v) -> Value* {
      if (auto it = ssa.find(v); it != ssa.end()) return it->second;
      Value* x = nullptr;
      const size_t uv = static_cast<size_t>(v);
      const DType type = ir_.TypeOf(v);
      if (sched_.activation[uv] || (v >= static_cast<int>(ni) && sched_.avail[uv] < seg)) {
        x = Load(type, tiles_[uv], c);
      } else if (v < static_cast<int>(ni)) {
        Value* index = nullptr;
        switch (ir_.inputs[uv]) {
          case Access::kFull: index = full_index; break;
          case Access::kRow: index = col; break;
          case Access::kColumn: index = r; break;
          case Access::kScalar: index = b_.getInt64(0); break;
          case Access::kSliced: NUPHAR_CHECK(false, "a sliced input is read through ColumnSlice only"); break;
          case Access::kStrided: index = b_.CreateAdd(row_offsets_[uv], col); break;
          case Access::kStridedColumn:
          case Access::kChannel: index = row_offsets_[uv]; break;
        }
        x = Load(type, buffers_[uv], index);
      } else if (ir_.ops[uv - ni].kind == OpKind::kColumnSlice) {
        const IrOp& op = ir_.ops[uv - ni];
        Value* in_cols = b_.CreateLoad(b_.getInt64Ty(), b_.CreateConstInBoundsGEP1_64(b_.getInt64Ty(), input_cols_, op.a));
        Value* index = b_.CreateAdd(b_.CreateMul(r, in_cols), b_.CreateAdd(b_.getInt64(op.offset), col));
        x = b_.CreateLoad(b_.getFloatTy(), b_.CreateGEP(b_.getFloatTy(), buffers_[static_cast<size_t>(op.a)], index));
      } else {
        x = Compute(ir_.ops[uv - ni], get);
      }
      ssa[v] = x;
      return x;
    };
    // Values of this segment that must outlive it, and the outputs readable in it.
    for (size_t v = 0; v < sched_.avail.size(); ++v) {
      if (sched_.avail[v] != seg || !sched_.in_tile[v] || sched_.activation[v]) continue;
      Store(ir_.TypeOf(static_cast<int>(v)), get(static_cast<int>(v)), tiles_[v], c);
    }
    for (size_t o = 0; o < ir_.outputs.size(); ++o) {
      const int v = ir_.outputs[o];
      if (sched_.avail[static_cast<size_t>(v)] != seg) continue;
      Store(ir_.TypeOf(v), get(v), buffers_[ni + o], full_index);
    }
  }

  void EmitActivationCalls(int seg, Value* len) {
    const size_t ni = ir_.inputs.size();
    for (size_t k = 0; k < ir_.ops.size(); ++k) {
      const IrOp& op = ir_.ops[k];
      if (!IsActivationCall(op.kind) || sched_.avail[ni + k] != seg + 1) continue;
      // Through the ABI table (jit_runtime_abi.h), never by symbol: the code refers to nothing
      // of the runtime by name, so a cached object or an AOT library links anywhere.
      auto* type = llvm::FunctionType::get(
          b_.getVoidTy(), {b_.getFloatTy()->getPointerTo(), b_.getFloatTy()->getPointerTo(), b_.getInt64Ty()}, false);
      const int slot = op.kind == OpKind::kSigmoid ? kAbiSigmoidF32 : op.kind == OpKind::kTanh ? kAbiTanhF32 : kAbiLogF32;
      Value* fn = b_.CreateLoad(b_.getInt8PtrTy(), b_.CreateConstInBoundsGEP1_64(b_.getInt8PtrTy(), abi_, slot));
      b_.CreateCall(type, b_.CreateBitCast(fn, type->getPointerTo()), {tiles_[static_cast<size_t>(op.a)], tiles_[ni + k], len});
    }
  }

  // Element storage: bool is one byte (0 or 1) in memory and an i1 in registers.
  llvm::Type* Storage(DType type) {
    switch (type) {
      case DType::kInt32: return b_.getInt32Ty();
      case DType::kInt64: return b_.getInt64Ty();
      case DType::kBool: return b_.getInt8Ty();
      default: return b_.getFloatTy();
    }
  }
  // Buffers and tiles are float pointers in the signature; other types read through a cast.
  Value* Element(DType type, Value* base, Value* index) {
    llvm::Type* t = Storage(type);
    Value* typed = t->isFloatTy() ? base : b_.CreateBitCast(base, t->getPointerTo());
    return b_.CreateGEP(t, typed, index);
  }
  Value* Load(DType type, Value* base, Value* index) {
    Value* x = b_.CreateLoad(Storage(type), Element(type, base, index));
    return type == DType::kBool ? b_.CreateICmpNE(x, b_.getInt8(0)) : x;
  }
  void Store(DType type, Value* x, Value* base, Value* index) {
    if (type == DType::kBool) x = b_.CreateZExt(x, b_.getInt8Ty());
    b_.CreateStore(x, Element(type, base, index));
  }

  Value* Unary(llvm::Intrinsic::ID id, Value* x) {
    return b_.CreateCall(llvm::Intrinsic::getDeclaration(&m_, id, {b_.getFloatTy()}), {x});
  }
  Value* Libm(const char* name, Value* x) {
    llvm::FunctionCallee fn = m_.getOrInsertFunction(name, b_.getFloatTy(), b_.getFloatTy());
    return b_.CreateCall(fn, {x});
  }
  Value* F(float v) { return llvm::ConstantFP::get(b_.getFloatTy(), v); }

  // Cast as the reference's ConvertValue: float -> integer truncates toward zero when the value
  // is within int64 (then wraps to int32), NaN, infinities and values beyond int64 give 0; any ->
  // bool is "!= 0" (NaN is true); bool -> number is 0 or 1.
  Value* Convert(Value* x, DType from, DType to) {
    if (from == to) return x;
    llvm::Type* target = Storage(to);
    if (to == DType::kBool)
      return from == DType::kFloat ? b_.CreateFCmpUNE(x, F(0)) : b_.CreateICmpNE(x, llvm::ConstantInt::get(x->getType(), 0));
    if (from == DType::kBool) return to == DType::kFloat ? b_.CreateUIToFP(x, target) : b_.CreateZExt(x, target);
    if (from == DType::kFloat) {
      Value* in_range = b_.CreateAnd(b_.CreateFCmpOGE(x, F(-9223372036854775808.0f)),
                                     b_.CreateFCmpOLT(x, F(9223372036854775808.0f)));
      Value* wide = b_.CreateSelect(in_range, b_.CreateFPToSI(x, b_.getInt64Ty()), b_.getInt64(0));
      return b_.CreateTrunc(wide, target);  // a no-op for int64
    }
    return to == DType::kFloat ? b_.CreateSIToFP(x, target) : b_.CreateSExtOrTrunc(x, target);
  }

  // Integer and bool ops, as the reference kernels compute them: wrapping arithmetic (no nsw), and
  // division and modulo by 0 (and by -1, whose INT_MIN case traps in hardware) handled first.
  Value* ComputeInteger(const IrOp& op, Value* a, Value* bv) {
    llvm::Type* t = a->getType();
    auto k = [&](int64_t v) { return llvm::ConstantInt::get(t, static_cast<uint64_t>(v), /*isSigned=*/true); };
    auto guarded = [&](auto&& divide, Value* by_minus_one) {  // b == 0 -> 0, b == -1 -> by_minus_one
      Value* zero = b_.CreateICmpEQ(bv, k(0));
      Value* minus_one = b_.CreateICmpEQ(bv, k(-1));
      Value* r = divide(b_.CreateSelect(b_.CreateOr(zero, minus_one), k(1), bv));
      return b_.CreateSelect(zero, k(0), b_.CreateSelect(minus_one, by_minus_one, r));
    };
    switch (op.kind) {
      case OpKind::kAdd: return b_.CreateAdd(a, bv);
      case OpKind::kSub: return b_.CreateSub(a, bv);
      case OpKind::kMul: return b_.CreateMul(a, bv);
      case OpKind::kDiv: return guarded([&](Value* d) { return b_.CreateSDiv(a, d); }, b_.CreateSub(k(0), a));
      case OpKind::kModTrunc: return guarded([&](Value* d) { return b_.CreateSRem(a, d); }, k(0));
      case OpKind::kModFloor:  // the remainder takes the divisor's sign
        return guarded([&](Value* d) {
          Value* r = b_.CreateSRem(a, d);
          Value* fix = b_.CreateAnd(b_.CreateICmpNE(r, k(0)),
                                    b_.CreateICmpNE(b_.CreateICmpSLT(r, k(0)), b_.CreateICmpSLT(d, k(0))));
          return b_.CreateSelect(fix, b_.CreateAdd(r, d), r);
        }, k(0));
      case OpKind::kMax: return b_.CreateSelect(b_.CreateICmpSGT(a, bv), a, bv);
      case OpKind::kMin: return b_.CreateSelect(b_.CreateICmpSLT(a, bv), a, bv);
      case OpKind::kNeg: return b_.CreateSub(k(0), a);
      case OpKind::kAbs: return b_.CreateSelect(b_.CreateICmpSLT(a, k(0)), b_.CreateSub(k(0), a), a);
      case OpKind::kEqual: return b_.CreateICmpEQ(a, bv);
      case OpKind::kLess: return b_.CreateICmpSLT(a, bv);
      case OpKind::kGreater: return b_.CreateICmpSGT(a, bv);
      case OpKind::kLessOrEqual: return b_.CreateICmpSLE(a, bv);
      case OpKind::kGreaterOrEqual: return b_.CreateICmpSGE(a, bv);
      case OpKind::kNot: return b_.CreateNot(a);
      case OpKind::kAnd: return b_.CreateAnd(a, bv);
      case OpKind::kOr: return b_.CreateOr(a, bv);
      case OpKind::kXor: return b_.CreateXor(a, bv);
      case OpKind::kIdentity: return a;
      default: break;
    }
    NUPHAR_CHECK(false, "elementwise codegen: integer op kind without an emitter");
    return nullptr;
  }

  Value* Compute(const IrOp& op, const std::function<Value*(int)>& get) {
    if (op.kind == OpKind::kConstant) return F(op.alpha);
    Value* a = get(op.a);
    Value* bv = op.b >= 0 ? get(op.b) : nullptr;
    if (op.kind == OpKind::kWhere) return b_.CreateSelect(get(op.c), a, bv);
    if (op.kind == OpKind::kCast) return Convert(a, ir_.TypeOf(op.a), op.type);
    if (ir_.TypeOf(op.a) != DType::kFloat) return ComputeInteger(op, a, bv);
    switch (op.kind) {
      case OpKind::kEqual: return b_.CreateFCmpOEQ(a, bv);
      case OpKind::kLess: return b_.CreateFCmpOLT(a, bv);
      case OpKind::kGreater: return b_.CreateFCmpOGT(a, bv);
      case OpKind::kLessOrEqual: return b_.CreateFCmpOLE(a, bv);
      case OpKind::kGreaterOrEqual: return b_.CreateFCmpOGE(a, bv);
      case OpKind::kAdd: return b_.CreateFAdd(a, bv);
      case OpKind::kSub: return b_.CreateFSub(a, bv);
      case OpKind::kMul: return b_.CreateFMul(a, bv);
      case OpKind::kDiv: return b_.CreateFDiv(a, bv);
      case OpKind::kMax:  // (a > b || a != a) ? a : b
        return b_.CreateSelect(b_.CreateOr(b_.CreateFCmpOGT(a, bv), b_.CreateFCmpUNO(a, a)), a, bv);
      case OpKind::kMin:  // (a < b || a != a) ? a : b
        return b_.CreateSelect(b_.CreateOr(b_.CreateFCmpOLT(a, bv), b_.CreateFCmpUNO(a, a)), a, bv);
      case OpKind::kNeg: return b_.CreateFNeg(a);
      case OpKind::kAbs: return Unary(llvm::Intrinsic::fabs, a);
      case OpKind::kRelu: return b_.CreateSelect(b_.CreateFCmpOGT(a, F(0)), a, F(0));  // x > 0 ? x : 0
      case OpKind::kSqrt: return Unary(llvm::Intrinsic::sqrt, a);
      case OpKind::kReciprocal: return b_.CreateFDiv(F(1), a);
      case OpKind::kFloor: return Unary(llvm::Intrinsic::floor, a);
      case OpKind::kCeil: return Unary(llvm::Intrinsic::ceil, a);
      case OpKind::kExp: return Libm("expf", a);
      case OpKind::kLeakyRelu:  // x < 0 ? alpha * x : x
        return b_.CreateSelect(b_.CreateFCmpOLT(a, F(0)), b_.CreateFMul(F(op.alpha), a), a);
      case OpKind::kHardSigmoid: {  // max(0, min(1, alpha * x + beta)) as std::max/std::min
        Value* y = b_.CreateFAdd(b_.CreateFMul(F(op.alpha), a), F(op.beta));
        Value* m = b_.CreateSelect(b_.CreateFCmpOLT(y, F(1)), y, F(1));
        return b_.CreateSelect(b_.CreateFCmpOLT(F(0), m), m, F(0));
      }
      case OpKind::kClipBelow:  // std::max(x, lo): (x < lo) ? lo : x
        return b_.CreateSelect(b_.CreateFCmpOLT(a, bv), bv, a);
      case OpKind::kClipAbove:  // std::min(m, hi): (hi < m) ? hi : m
        return b_.CreateSelect(b_.CreateFCmpOLT(bv, a), bv, a);
      case OpKind::kIdentity: return a;
      case OpKind::kPow:  // the reference's PowOp on float: e == 2 ? x * x : powf(x, e)
        if (op.alpha == 2.0f) return b_.CreateFMul(a, a);
        return b_.CreateCall(m_.getOrInsertFunction("powf", b_.getFloatTy(), b_.getFloatTy(), b_.getFloatTy()),
                             {a, F(op.alpha)});
      case OpKind::kPRelu:  // x < 0 ? x * slope : x
        return b_.CreateSelect(b_.CreateFCmpOLT(a, F(0)), b_.CreateFMul(a, bv), a);
      case OpKind::kSigmoid:
      case OpKind::kTanh:
      case OpKind::kLog:           // calls on tiles, never computed per element
      case OpKind::kColumnSlice:   // a load (EmitSegmentElement)
      default:                     // integer and bool ops (ComputeInteger), Where and Cast above
        break;
    }
    NUPHAR_CHECK(false, "elementwise codegen: op kind without an emitter");
    return nullptr;
  }

  const ElementwiseIR& ir_;
  llvm::Module& m_;
  IRBuilder<> b_;
  Schedule sched_;
  std::vector<Value*> buffers_;
  std::vector<Value*> tiles_;
  std::vector<Value*> row_offsets_;  ///< per input: where the current row starts (strided inputs)
  Value* rows_ = nullptr;
  Value* cols_ = nullptr;
  Value* input_cols_ = nullptr;
  Value* abi_ = nullptr;
};

}  // namespace

llvm::Function* EmitElementwiseBody(const ElementwiseIR& ir, const std::string& name, llvm::Module& module) {
  llvm::LLVMContext& context = module.getContext();
  IRBuilder<> b(context);
  llvm::Type* f32p = b.getFloatTy()->getPointerTo();
  const size_t nbuf = ir.inputs.size() + ir.outputs.size();
  // One noalias pointer per buffer, then rows, cols, input_cols, the ABI table.
  std::vector<llvm::Type*> params(nbuf, f32p);
  params.push_back(b.getInt64Ty());
  params.push_back(b.getInt64Ty());
  params.push_back(b.getInt64Ty()->getPointerTo());
  params.push_back(b.getInt8PtrTy()->getPointerTo());
  auto* body_type = llvm::FunctionType::get(b.getVoidTy(), params, false);
  auto* body = llvm::Function::Create(body_type, llvm::Function::InternalLinkage, name, &module);
  for (size_t i = 0; i < nbuf; ++i) body->addParamAttr(static_cast<unsigned>(i), llvm::Attribute::NoAlias);
  body->addFnAttr(llvm::Attribute::AlwaysInline);
  body->addFnAttr(llvm::Attribute::NoUnwind);
  Emitter(ir, module).EmitBody(body);
  return body;
}

std::unique_ptr<llvm::Module> EmitElementwiseKernel(const ElementwiseIR& ir, const std::string& name,
                                                    llvm::LLVMContext& context) {
  auto module = std::make_unique<llvm::Module>(name, context);
  IRBuilder<> b(context);
  llvm::Type* f32p = b.getFloatTy()->getPointerTo();
  const size_t nbuf = ir.inputs.size() + ir.outputs.size();
  llvm::Function* body = EmitElementwiseBody(ir, name + ".body", *module);

  // Entry: unpacks the buffer array.
  auto* entry_type = llvm::FunctionType::get(b.getVoidTy(),
                                             {f32p->getPointerTo(), b.getInt64Ty(), b.getInt64Ty(),
                                              b.getInt64Ty()->getPointerTo(), b.getInt8PtrTy()->getPointerTo()},
                                             false);
  auto* entry = llvm::Function::Create(entry_type, llvm::Function::ExternalLinkage, name, module.get());
  entry->addFnAttr(llvm::Attribute::NoUnwind);
  b.SetInsertPoint(llvm::BasicBlock::Create(context, "entry", entry));
  std::vector<Value*> args;
  Value* buffers = &*entry->arg_begin();
  for (size_t i = 0; i < nbuf; ++i)
    args.push_back(b.CreateLoad(f32p, b.CreateConstInBoundsGEP1_64(f32p, buffers, i)));
  args.push_back(&*(entry->arg_begin() + 1));
  args.push_back(&*(entry->arg_begin() + 2));
  args.push_back(&*(entry->arg_begin() + 3));
  args.push_back(&*(entry->arg_begin() + 4));
  b.CreateCall(body, args);
  b.CreateRetVoid();
  return module;
}

}  // namespace nuphar::jit
