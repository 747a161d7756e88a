// Kernel of the fused dynamic-quantized MatMul node (runtime/fusion/dynamic_quant_matmul_fusion.h):
// packs the constant weights once at load time (DynQuantMatMulState, shared with the fused LSTM
// cell) and runs ngemm::DynQuantMatMul per call, with the absorbed following Add (optional input
// 5) as its epilogue.
#include <algorithm>
#include <cstring>

#include "runtime/fusion/dynamic_quant_matmul_fusion.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"
#include "runtime/kernels/quant/dq_matmul_state.h"
#include "runtime/kernels/quant/quant_ngemm_tiles.h"

namespace nuphar {

using ngemm::DynQuantScheme;

namespace {

// Float vector of length n from a constant input, or an error naming it.
Expected<std::vector<float>> ColumnVector(const NodeInfo& node, size_t input, int64_t n, const char* what) {
  const Tensor* t = node.constant_input(input);
  if (!t || t->dtype() != DType::kFloat || t->size() != n)
    return node.Error(std::string(what) + " must be a float constant of " + std::to_string(n) + " values");
  return std::vector<float>(t->data<float>(), t->data<float>() + n);
}

}  // namespace

Status DynQuantMatMulState::Init(const NodeInfo& node) {
  const std::string name = node.GetString("scheme", "");
  if (name != "asymm8" && name != "symm16") return node.Error("unknown scheme '" + name + "'");
  scheme = name == "asymm8" ? DynQuantScheme::kAsymm8 : DynQuantScheme::kSymm16;
  const Tensor* w = node.constant_input(1);
  if (!w || w->rank() != 2) return node.Error("the quantized weight must be a 2-D constant");
  k = w->dim(0);
  n = w->dim(1);
  const auto type = w->dtype() == DType::kInt16 ? ngemm::WeightType::kInt16
                    : w->dtype() == DType::kUint8 ? ngemm::WeightType::kUint8
                                                  : ngemm::WeightType::kInt8;
  if ((scheme == DynQuantScheme::kSymm16) != (type == ngemm::WeightType::kInt16) ||
      (w->dtype() != DType::kInt8 && w->dtype() != DType::kUint8 && w->dtype() != DType::kInt16))
    return node.Error(std::string("weight type ") + DTypeName(w->dtype()) + " does not fit scheme " + name);
  const size_t bytes = ngemm::PackedInt8Weights::RequiredBytes(k, n, type);
  if (bytes == 0) return node.Error("weight shape is not supported by NGEMM");
  packed_storage = Tensor(DType::kUint8, {static_cast<int64_t>(bytes)});
  bool ok = false;
  void* buf = packed_storage.raw();
  if (type == ngemm::WeightType::kInt16)
    ok = ngemm::PackedInt8Weights::Pack(w->data<int16_t>(), k, n, n, buf, &packed);
  else if (type == ngemm::WeightType::kUint8)
    ok = ngemm::PackedInt8Weights::Pack(w->data<uint8_t>(), k, n, n, buf, &packed);
  else
    ok = ngemm::PackedInt8Weights::Pack(w->data<int8_t>(), k, n, n, buf, &packed);
  if (!ok) return node.Error("packing the quantized weight failed");

  NUPHAR_ASSIGN_OR_RETURN(step, ColumnVector(node, 2, n, "step"));
  weights.packed = &packed;
  weights.step = step.data();
  if (scheme == DynQuantScheme::kAsymm8) {
    NUPHAR_ASSIGN_OR_RETURN(base, ColumnVector(node, 3, n, "base"));
    NUPHAR_ASSIGN_OR_RETURN(rowsum, ColumnVector(node, 4, n, "qparam_rowsum"));
    weights.base = base.data();
    weights.qparam_rowsum = rowsum.data();
  }
  ngemm::DynQuantConstants& c = constants;
  c.inv_range = node.GetFloat("inv_range", c.inv_range);
  c.range = node.GetFloat("range", c.range);
  c.half = node.GetFloat("half", c.half);
  c.clip_min = node.GetFloat("clip_min", c.clip_min);
  c.clip_max = node.GetFloat("clip_max", c.clip_max);
  c.k_as_float = node.GetFloat("k_as_float", static_cast<float>(k));
  c.guard_zero_delta = node.GetInt("guard_zero_delta", 0) != 0;
  c.guard_value = node.GetFloat("guard_value", c.guard_value);
  NUPHAR_ASSIGN_OR_RETURN(tiles, ReadNgemmTiles(node));
  if (node.has_input(5)) {
    has_add = true;
    if (const Tensor* add = node.constant_input(5)) {  // the fusion proved it; a hand-written node may not
      if (add->dtype() != DType::kFloat) return node.Error("the absorbed Add's operand must be float");
      const auto& shape = add->shape();
      if (shape.empty() || shape.back() != n ||
          std::any_of(shape.begin(), shape.end() - 1, [](int64_t d) { return d != 1; }))
        return node.Error("the absorbed Add's constant operand " + ShapeToString(add->shape()) + " is not one row of " +
                          std::to_string(n));
    }
  }
  return Status::OK();
}

Expected<int64_t> AddOperandStride(const std::vector<int64_t>& add_shape, int64_t n, std::vector<int64_t>* y_shape) {
  const size_t ra = add_shape.size(), ry = y_shape->size();
  bool row = ra > 0 && add_shape.back() == n, same = row;
  for (size_t i = 1; i < std::max(ra, ry); ++i) {  // i-th dim from the right, the last excluded
    const int64_t a = i < ra ? add_shape[ra - 1 - i] : 1;
    const int64_t y = i < ry ? (*y_shape)[ry - 1 - i] : 1;
    row &= a == 1;
    same &= a == y;
  }
  if (!row && !same)
    return Diag::Msg("the absorbed Add's operand " + ShapeToString(add_shape) + " is neither one row of " +
                     std::to_string(n) + " nor the MatMul result's shape " + ShapeToString(*y_shape) +
                     " (the model's declared shapes are wrong)");
  if (ra > ry) y_shape->insert(y_shape->begin(), ra - ry, 1);
  return row ? 0 : n;
}

namespace {

class DynQuantMatMulKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DynQuantMatMulKernel>(new DynQuantMatMulKernel());
    NUPHAR_RETURN_IF_ERROR(k->dq_.Init(node));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const DynQuantMatMulState& d = dq_;
    const Tensor* x = ctx.input(0);
    if (!x || x->dtype() != DType::kFloat || x->rank() < 1 || x->shape().back() != d.k)
      return Diag::Msg("input must be float [..., " + std::to_string(d.k) + "], got " +
                       (x ? ShapeToString(x->shape()) : std::string("nothing")));
    std::vector<int64_t> out_shape = x->shape();
    out_shape.back() = d.n;
    const int64_t m = d.k == 0 ? 0 : x->size() / d.k;
    const float* add = nullptr;
    int64_t ld_add = 0;
    if (d.has_add) {
      const Tensor* b = ctx.input(5);
      if (!b || b->dtype() != DType::kFloat) return Diag::Msg("the absorbed Add's operand must be a float tensor");
      add = b->data<float>();
      NUPHAR_ASSIGN_OR_RETURN(ld_add, AddOperandStride(b->shape(), d.n, &out_shape));
    }
    Tensor* y = ctx.Output(0, DType::kFloat, out_shape);
    void* scratch = ctx.Scratch(ngemm::DynQuantMatMulScratchBytes(d.scheme, m, d.k, d.n));
    if (!ngemm::DynQuantMatMul(d.scheme, x->data<float>(), m, d.k, d.k, d.weights, d.constants, scratch,
                               y->data<float>(), d.n, add, ld_add, d.tiles))
      return Diag::Msg("the fused kernel rejected its arguments");
    return Status::OK();
  }
  const char* profile_path() const override { return "fused_ngemm"; }
  const DirectCall* direct_call() const override { return &direct_; }

 private:
  DynQuantMatMulKernel() { direct_ = {&CallDirect, this, &DirectScratchBytes}; }

  // The per-step product of a compiled Scan loop: the same computation as Compute on shapes that
  // Compute already accepted (the Add operand is one row of N or the result's shape).
  static void CallDirect(const void* state, const float* const* inputs, const int64_t* input_sizes,
                         float* const* outputs, int64_t rows, void* scratch) {
    const DynQuantMatMulState& d = static_cast<const DynQuantMatMulKernel*>(state)->dq_;
    const float* add = d.has_add ? inputs[5] : nullptr;
    const int64_t ld_add = add == nullptr ? 0 : d.DirectAddStride(input_sizes[5]);
    ngemm::DynQuantMatMul(d.scheme, inputs[0], rows, d.k, d.k, d.weights, d.constants, scratch, outputs[0], d.n, add,
                          ld_add, d.tiles);
  }
  static size_t DirectScratchBytes(const void* state, int64_t rows) {
    const DynQuantMatMulState& d = static_cast<const DynQuantMatMulKernel*>(state)->dq_;
    return ngemm::DynQuantMatMulScratchBytes(d.scheme, rows, d.k, d.n);
  }

  DirectCall direct_;
  DynQuantMatMulState dq_;
};

}  // namespace

void RegisterFusedKernels(KernelRegistry& r) {
  r.Add(kFusedDomain, kDynQuantMatMulOp, DynQuantMatMulKernel::Create);
  RegisterDynQuantLstmCellKernel(r);
}

}  // namespace nuphar
