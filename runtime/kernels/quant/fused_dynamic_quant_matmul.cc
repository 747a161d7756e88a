// Kernel of the fused dynamic-quantized MatMul node (runtime/fusion/dynamic_quant_matmul_fusion.h):
// packs the constant weights once at load time and runs ngemm::DynQuantMatMul per call, with the
// absorbed following Add (optional input 5) as its epilogue.
#include <algorithm>
#include <cstring>

#include "runtime/fusion/dynamic_quant_matmul_fusion.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"
#include "runtime/kernels/quant/quant_ngemm_tiles.h"

namespace nuphar {
namespace {

using ngemm::DynQuantScheme;

// Float vector of length n from a constant input, or an error naming it.
Expected<std::vector<float>> ColumnVector(const NodeInfo& node, size_t input, int64_t n, const char* what) {
  const Tensor* t = node.constant_input(input);
  if (!t || t->dtype() != DType::kFloat || t->size() != n)
    return node.Error(std::string(what) + " must be a float constant of " + std::to_string(n) + " values");
  return std::vector<float>(t->data<float>(), t->data<float>() + n);
}

// Row stride of the Add operand for ngemm::DynQuantMatMul (0: one row of N added to every row
// of Y; N: one value per element of Y), widening *y_shape to the broadcast result's rank when the
// operand has leading 1s. The fusion only absorbs Adds whose operand it proved to be one of
// these; a model whose declared shapes were wrong gets an error instead of a wrong result.
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

class DynQuantMatMulKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DynQuantMatMulKernel>(new DynQuantMatMulKernel());
    const std::string scheme = node.GetString("scheme", "");
    if (scheme != "asymm8" && scheme != "symm16") return node.Error("unknown scheme '" + scheme + "'");
    k->scheme_ = scheme == "asymm8" ? DynQuantScheme::kAsymm8 : DynQuantScheme::kSymm16;
    const Tensor* w = node.constant_input(1);
    if (!w || w->rank() != 2) return node.Error("the quantized weight must be a 2-D constant");
    k->k_ = w->dim(0);
    k->n_ = w->dim(1);
    const auto type = w->dtype() == DType::kInt16 ? ngemm::WeightType::kInt16
                      : w->dtype() == DType::kUint8 ? ngemm::WeightType::kUint8
                                                    : ngemm::WeightType::kInt8;
    if ((k->scheme_ == DynQuantScheme::kSymm16) != (type == ngemm::WeightType::kInt16) ||
        (w->dtype() != DType::kInt8 && w->dtype() != DType::kUint8 && w->dtype() != DType::kInt16))
      return node.Error(std::string("weight type ") + DTypeName(w->dtype()) + " does not fit scheme " + scheme);
    const size_t bytes = ngemm::PackedInt8Weights::RequiredBytes(k->k_, k->n_, type);
    if (bytes == 0) return node.Error("weight shape is not supported by NGEMM");
    k->packed_storage_ = Tensor(DType::kUint8, {static_cast<int64_t>(bytes)});
    bool ok = false;
    void* buf = k->packed_storage_.raw();
    if (type == ngemm::WeightType::kInt16)
      ok = ngemm::PackedInt8Weights::Pack(w->data<int16_t>(), k->k_, k->n_, k->n_, buf, &k->packed_);
    else if (type == ngemm::WeightType::kUint8)
      ok = ngemm::PackedInt8Weights::Pack(w->data<uint8_t>(), k->k_, k->n_, k->n_, buf, &k->packed_);
    else
      ok = ngemm::PackedInt8Weights::Pack(w->data<int8_t>(), k->k_, k->n_, k->n_, buf, &k->packed_);
    if (!ok) return node.Error("packing the quantized weight failed");

    NUPHAR_ASSIGN_OR_RETURN(k->step_, ColumnVector(node, 2, k->n_, "step"));
    k->weights_.packed = &k->packed_;
    k->weights_.step = k->step_.data();
    if (k->scheme_ == DynQuantScheme::kAsymm8) {
      NUPHAR_ASSIGN_OR_RETURN(k->base_, ColumnVector(node, 3, k->n_, "base"));
      NUPHAR_ASSIGN_OR_RETURN(k->rowsum_, ColumnVector(node, 4, k->n_, "qparam_rowsum"));
      k->weights_.base = k->base_.data();
      k->weights_.qparam_rowsum = k->rowsum_.data();
    }
    ngemm::DynQuantConstants& c = k->constants_;
    c.inv_range = node.GetFloat("inv_range", c.inv_range);
    c.range = node.GetFloat("range", c.range);
    c.half = node.GetFloat("half", c.half);
    c.clip_min = node.GetFloat("clip_min", c.clip_min);
    c.clip_max = node.GetFloat("clip_max", c.clip_max);
    c.k_as_float = node.GetFloat("k_as_float", static_cast<float>(k->k_));
    c.guard_zero_delta = node.GetInt("guard_zero_delta", 0) != 0;
    c.guard_value = node.GetFloat("guard_value", c.guard_value);
    NUPHAR_ASSIGN_OR_RETURN(k->tiles_, ReadNgemmTiles(node));
    if (node.has_input(5)) {
      k->has_add_ = true;
      if (const Tensor* add = node.constant_input(5)) {  // the fusion proved it; a hand-written node may not
        if (add->dtype() != DType::kFloat) return node.Error("the absorbed Add's operand must be float");
        const auto& shape = add->shape();
        if (shape.empty() || shape.back() != k->n_ ||
            std::any_of(shape.begin(), shape.end() - 1, [](int64_t d) { return d != 1; }))
          return node.Error("the absorbed Add's constant operand " + ShapeToString(add->shape()) + " is not one row of " +
                            std::to_string(k->n_));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x || x->dtype() != DType::kFloat || x->rank() < 1 || x->shape().back() != k_)
      return Diag::Msg("input must be float [..., " + std::to_string(k_) + "], got " +
                       (x ? ShapeToString(x->shape()) : std::string("nothing")));
    std::vector<int64_t> out_shape = x->shape();
    out_shape.back() = n_;
    const int64_t m = k_ == 0 ? 0 : x->size() / k_;
    const float* add = nullptr;
    int64_t ld_add = 0;
    if (has_add_) {
      const Tensor* b = ctx.input(5);
      if (!b || b->dtype() != DType::kFloat) return Diag::Msg("the absorbed Add's operand must be a float tensor");
      add = b->data<float>();
      NUPHAR_ASSIGN_OR_RETURN(ld_add, AddOperandStride(b->shape(), n_, &out_shape));
    }
    Tensor* y = ctx.Output(0, DType::kFloat, out_shape);
    void* scratch = ctx.Scratch(ngemm::DynQuantMatMulScratchBytes(scheme_, m, k_, n_));
    if (!ngemm::DynQuantMatMul(scheme_, x->data<float>(), m, k_, k_, weights_, constants_, scratch,
                               y->data<float>(), n_, add, ld_add, tiles_))
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
    const auto* k = static_cast<const DynQuantMatMulKernel*>(state);
    const float* add = k->has_add_ ? inputs[5] : nullptr;
    const int64_t ld_add = add == nullptr || input_sizes[5] == k->n_ ? 0 : k->n_;
    ngemm::DynQuantMatMul(k->scheme_, inputs[0], rows, k->k_, k->k_, k->weights_, k->constants_, scratch, outputs[0],
                          k->n_, add, ld_add, k->tiles_);
  }
  static size_t DirectScratchBytes(const void* state, int64_t rows) {
    const auto* k = static_cast<const DynQuantMatMulKernel*>(state);
    return ngemm::DynQuantMatMulScratchBytes(k->scheme_, rows, k->k_, k->n_);
  }

  DirectCall direct_;
  DynQuantScheme scheme_ = DynQuantScheme::kAsymm8;
  int64_t k_ = 0, n_ = 0;
  Tensor packed_storage_;
  ngemm::PackedInt8Weights packed_;
  std::vector<float> step_, base_, rowsum_;
  ngemm::DynQuantWeights weights_;
  ngemm::DynQuantConstants constants_;
  ngemm::NgemmTiles tiles_;
  bool has_add_ = false;  ///< input 5: the absorbed following Add's operand
};

}  // namespace

void RegisterFusedKernels(KernelRegistry& r) {
  r.Add(kFusedDomain, kDynQuantMatMulOp, DynQuantMatMulKernel::Create);
}

}  // namespace nuphar
