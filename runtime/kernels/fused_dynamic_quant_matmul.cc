// Kernel of the fused dynamic-quantized MatMul node (runtime/fusion/dynamic_quant_matmul_fusion.h):
// packs the constant weights once at load time and runs ngemm::DynQuantMatMul per call.
#include <cstring>

#include "runtime/fusion/dynamic_quant_matmul_fusion.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"

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

// The session's nuphar_igemm_* settings (already merged with the environment by Settings).
Status ReadTiles(const NodeInfo& node, ngemm::NgemmTiles* tiles) {
  std::string error;
  const std::pair<const char*, int*> keys[] = {
      {"nuphar_igemm_tile_m", &tiles->m}, {"nuphar_igemm_tile_n", &tiles->n}, {"nuphar_igemm_tile_k", &tiles->k}};
  for (const auto& [key, field] : keys)
    if (!ngemm::ParseTileValue(node.setting(key), field, &error)) return node.Error(std::string(key) + ": " + error);
  if (!ngemm::ParsePermute(node.setting("nuphar_igemm_permute"), &tiles->permute, &error))
    return node.Error("nuphar_igemm_permute: " + error);
  return Status::OK();
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
    NUPHAR_RETURN_IF_ERROR(ReadTiles(node, &k->tiles_));
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
    Tensor* y = ctx.Output(0, DType::kFloat, out_shape);
    void* scratch = ctx.Scratch(ngemm::DynQuantMatMulScratchBytes(scheme_, m, k_, n_));
    if (!ngemm::DynQuantMatMul(scheme_, x->data<float>(), m, k_, k_, weights_, constants_, scratch,
                               y->data<float>(), n_, nullptr, 0, tiles_))
      return Diag::Msg("the fused kernel rejected its arguments");
    return Status::OK();
  }

 private:
  DynQuantMatMulKernel() = default;
  DynQuantScheme scheme_ = DynQuantScheme::kAsymm8;
  int64_t k_ = 0, n_ = 0;
  Tensor packed_storage_;
  ngemm::PackedInt8Weights packed_;
  std::vector<float> step_, base_, rowsum_;
  ngemm::DynQuantWeights weights_;
  ngemm::DynQuantConstants constants_;
  ngemm::NgemmTiles tiles_;
};

}  // namespace

void RegisterFusedKernels(KernelRegistry& r) {
  r.Add(kFusedDomain, kDynQuantMatMulOp, DynQuantMatMulKernel::Create);
}

}  // namespace nuphar
