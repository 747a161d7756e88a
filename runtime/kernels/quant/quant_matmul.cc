// MatMulInteger (u8/s8 operands in any combination; zero points per tensor, per row of A, per
// column of B, or per batch row/column; constant B runs on the NGEMM int8 kernels),
// com.microsoft MatMulInteger16 (s16/u16 -> int32; constant int16 B with int16 A runs on NGEMM's
// s16 x s16 kernel) and QLinearMatMul (requantized uint8/int8 output). All use numpy.matmul
// batch broadcasting. The NGEMM paths take the session's nuphar_igemm_* tiles.
#include <cmath>
#include <string>

#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/nn/nn_matmul_shape.h"
#include "runtime/kernels/nn/nn_scratch.h"
#include "runtime/kernels/quant/quant_igemm.h"
#include "runtime/kernels/quant/quant_kernels.h"
#include "runtime/kernels/quant/quant_ngemm_tiles.h"
#include "runtime/kernels/quant/quant_util.h"

namespace nuphar {
namespace {

// A zero point of MatMulInteger widened to int32 into per-thread scratch. For operand A
// (`rows` = M, `vec` = K) it is a scalar, [M], [M,1] or A's shape with the last dim 1; for B
// (`rows` = N) a scalar, [N], [1,N] or B's shape with the second-to-last dim 1. `batched` means
// the values differ per batch matrix (index with the operand's batch offset).
struct WideZeroPoint {
  const int32_t* values = nullptr;
  bool per_line = false;
  bool batched = false;
};

Expected<WideZeroPoint> WidenZeroPoint(const Tensor* zp, const Tensor& operand, bool is_a, int slot) {
  WideZeroPoint w;
  if (!zp || zp->size() == 0) return w;
  if (zp->dtype() != operand.dtype()) return Diag::Msg("zero point element type differs from its operand");
  const int64_t r = operand.rank();
  const int64_t lines = is_a ? (r >= 2 ? operand.dim(r - 2) : 1) : (r >= 1 ? operand.dim(r - 1) : 1);
  // Shape of a full per-line zero point: the operand's shape with the reduced dim set to 1.
  std::vector<int64_t> full = operand.shape();
  if (!full.empty()) full[static_cast<size_t>(is_a ? r - 1 : std::max<int64_t>(r - 2, 0))] = 1;
  if (zp->size() == 1) {
  } else if (zp->size() == lines && (zp->rank() == 1 || zp->rank() == 2)) {
    w.per_line = true;
  } else if (zp->shape() == full) {
    w.per_line = true;
    w.batched = r > 2;
  } else {
    return Diag::Msg(std::string(is_a ? "a" : "b") + "_zero_point shape " + ShapeToString(zp->shape()) +
                     " does not fit operand " + ShapeToString(operand.shape()));
  }
  int32_t* buf = ScratchBuffer<int32_t>(static_cast<size_t>(zp->size()), slot);
  if (zp->dtype() == DType::kUint8) {
    for (int64_t i = 0; i < zp->size(); ++i) buf[i] = zp->data<uint8_t>()[i];
  } else if (zp->dtype() == DType::kInt8) {
    for (int64_t i = 0; i < zp->size(); ++i) buf[i] = zp->data<int8_t>()[i];
  } else {
    return Diag::Msg(std::string("zero point of type ") + DTypeName(zp->dtype()) + " is not supported");
  }
  w.values = buf;
  return w;
}

// Runs the integer product of every batch. a_zp/b_zp as from WidenZeroPoint.
template <class TA, class TB>
void BatchedIntegerGemm(const MatMulShape& s, const TA* a, const TB* b, const WideZeroPoint& za,
                        const WideZeroPoint& zb, int32_t* y) {
  for (int64_t i = 0; i < s.batch_count; ++i) {
    const int64_t ao = s.a_offset(i), bo = s.b_offset(i);
    IntegerZeroPoints zp;
    zp.a = za.values ? za.values + (za.batched && s.K > 0 ? ao / s.K : 0) : nullptr;
    zp.a_per_row = za.per_line;
    zp.b = zb.values ? zb.values + (zb.batched && s.K > 0 ? bo / s.K : 0) : nullptr;
    zp.b_per_col = zb.per_line;
    IntegerGemm<TA, TB>(s.M, s.N, s.K, a + ao, s.K, b + bo, s.N, zp, y + i * s.M * s.N, s.N);
  }
}

// Calls body.template operator()<TA, TB>() for the (u8|s8) x (u8|s8) operand types.
template <class F>
Status DispatchInt8Pair(DType a, DType b, F&& body) {
  const bool a_u8 = a == DType::kUint8, b_u8 = b == DType::kUint8;
  if ((!a_u8 && a != DType::kInt8) || (!b_u8 && b != DType::kInt8))
    return Diag::Msg(std::string("integer product of ") + DTypeName(a) + " x " + DTypeName(b) + " is not supported");
  if (a_u8) return b_u8 ? body.template operator()<uint8_t, uint8_t>() : body.template operator()<uint8_t, int8_t>();
  return b_u8 ? body.template operator()<int8_t, uint8_t>() : body.template operator()<int8_t, int8_t>();
}

// Constant 2-D u8/s8 (MatMulInteger) or int16 (MatMulInteger16) weights, with a constant
// per-tensor or per-column zero point for MatMulInteger, are packed once at load time for the
// NGEMM kernels (runtime/kernels/ngemm/ngemm.h); everything else (computed B, batched B,
// batched zero points, uint16 operands) takes the plain integer kernel.
struct PackedMatMulWeights {
  Tensor buffer;  ///< 64-byte-aligned storage of the packed panels (owned here)
  ngemm::PackedInt8Weights weights;
  std::vector<int32_t> b_zero_point;  ///< empty, one value, or one per column
  ngemm::NgemmTiles tiles;            ///< the session's blocking settings
};

// Packs the constant 2-D B of type T into `packed` (its zero point already read); false when
// NGEMM does not take this shape.
template <class T>
bool PackInto(const Tensor& b, ngemm::WeightType type, PackedMatMulWeights* packed) {
  const int64_t K = b.dim(0), N = b.dim(1);
  const size_t bytes = ngemm::PackedInt8Weights::RequiredBytes(K, N, type);
  if (bytes == 0) return false;
  packed->buffer = Tensor(DType::kUint8, {static_cast<int64_t>(bytes)});
  return ngemm::PackedInt8Weights::Pack(b.data<T>(), K, N, N, packed->buffer.raw(), &packed->weights);
}

class MatMulIntegerKernel final : public OpKernel {
 public:
  explicit MatMulIntegerKernel(std::unique_ptr<PackedMatMulWeights> packed) : packed_(std::move(packed)) {}
  const char* profile_path() const override { return packed_ ? "ngemm" : "reference"; }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return Diag::Msg("MatMulInteger needs A and B");
    NUPHAR_ASSIGN_OR_RETURN(const MatMulShape s, MatMulShape::Compute(a->shape(), b->shape()));
    NUPHAR_ASSIGN_OR_RETURN(const WideZeroPoint za, WidenZeroPoint(ctx.input(2), *a, true, 1));
    int32_t* y = ctx.Output(0, DType::kInt32, s.output_shape())->data<int32_t>();
    // With a 2-D B, A's batches are contiguous rows: one [batch*M, K] product. A per-row zero
    // point of a 2-D shape would have to repeat per batch, so that case uses the plain kernel.
    const bool a_int8 = a->dtype() == DType::kUint8 || a->dtype() == DType::kInt8;
    if (packed_ && a_int8 && s.b_shared_and_a_contiguous() && (!za.per_line || za.batched || s.batch_count == 1)) {
      ngemm::NgemmParams params;
      params.a_type = a->dtype() == DType::kInt8 ? ngemm::ActivationType::kInt8 : ngemm::ActivationType::kUint8;
      params.a_zero_point = za.values;
      params.a_zero_point_per_row = za.per_line;
      params.b_zero_point = packed_->b_zero_point.empty() ? nullptr : packed_->b_zero_point.data();
      params.b_zero_point_per_column = packed_->b_zero_point.size() > 1;
      params.tiles = packed_->tiles;
      ngemm::NgemmU8S8(static_cast<const uint8_t*>(a->raw()), s.batch_count * s.M, s.K, s.K, packed_->weights, y, s.N,
                       params);
      return Status::OK();
    }
    NUPHAR_ASSIGN_OR_RETURN(const WideZeroPoint zb, WidenZeroPoint(ctx.input(3), *b, false, 2));
    return DispatchInt8Pair(a->dtype(), b->dtype(), [&]<class TA, class TB>() {
      BatchedIntegerGemm<TA, TB>(s, a->data<TA>(), b->data<TB>(), za, zb, y);
      return Status::OK();
    });
  }

 private:
  std::unique_ptr<PackedMatMulWeights> packed_;
};

// Packs B for NGEMM when it and its zero point are constants of a supported form, else null.
std::unique_ptr<PackedMatMulWeights> PackConstantWeights(const NodeInfo& node, const ngemm::NgemmTiles& tiles) {
  const Tensor* b = node.constant_input(1);
  if (!b || b->rank() != 2 || (b->dtype() != DType::kUint8 && b->dtype() != DType::kInt8)) return nullptr;
  const int64_t N = b->dim(1);
  auto packed = std::make_unique<PackedMatMulWeights>();
  packed->tiles = tiles;
  if (node.has_input(3)) {
    const Tensor* zb = node.constant_input(3);
    if (!zb || zb->dtype() != b->dtype()) return nullptr;
    if (zb->size() != 1 && !(zb->rank() == 1 && zb->size() == N) && !(zb->rank() == 2 && zb->dim(0) == 1 && zb->dim(1) == N))
      return nullptr;
    for (int64_t i = 0; i < zb->size(); ++i)
      packed->b_zero_point.push_back(zb->dtype() == DType::kUint8 ? zb->data<uint8_t>()[i] : zb->data<int8_t>()[i]);
  }
  const bool ok = b->dtype() == DType::kUint8 ? PackInto<uint8_t>(*b, ngemm::WeightType::kUint8, packed.get())
                                              : PackInto<int8_t>(*b, ngemm::WeightType::kInt8, packed.get());
  return ok ? std::move(packed) : nullptr;
}

Expected<std::unique_ptr<OpKernel>> CreateMatMulInteger(const NodeInfo& node) {
  for (size_t i = 0; i < 4; ++i)
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kUint8, DType::kInt8))
      return node.Error(std::string("MatMulInteger on ") + DTypeName(node.input_type(i)) + " is not supported");
  NUPHAR_ASSIGN_OR_RETURN(const ngemm::NgemmTiles tiles, ReadNgemmTiles(node));
  return MakeKernel<MatMulIntegerKernel>(PackConstantWeights(node, tiles));
}

// com.microsoft MatMulInteger16: int16/uint16 operands, int32 result, no zero points.
// NGEMM multiplies s16 x s16 only (vpmaddwd), so the packed path needs int16 A and a constant
// 2-D int16 B. It is exact modulo 2^32 like the plain loop: vpmaddwd's one overflowing pair
// (-32768 * -32768 * 2 = 2^31) yields 0x80000000, which is 2^31 modulo 2^32. uint16 operands
// (up to 65535, outside s16) take the plain loop.
class MatMulInteger16Kernel final : public OpKernel {
 public:
  explicit MatMulInteger16Kernel(std::unique_ptr<PackedMatMulWeights> packed) : packed_(std::move(packed)) {}
  const char* profile_path() const override { return packed_ ? "ngemm" : "reference"; }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return Diag::Msg("MatMulInteger16 needs A and B");
    NUPHAR_ASSIGN_OR_RETURN(const MatMulShape s, MatMulShape::Compute(a->shape(), b->shape()));
    int32_t* y = ctx.Output(0, DType::kInt32, s.output_shape())->data<int32_t>();
    // With a 2-D B, A's batches are contiguous rows: one [batch*M, K] product.
    if (packed_ && a->dtype() == DType::kInt16 && s.b_shared_and_a_contiguous()) {
      ngemm::NgemmS16S16(a->data<int16_t>(), s.batch_count * s.M, s.K, s.K, packed_->weights, y, s.N, packed_->tiles);
      return Status::OK();
    }
    auto run = [&]<class TA, class TB>() {
      BatchedIntegerGemm<TA, TB>(s, a->data<TA>(), b->data<TB>(), {}, {}, y);
      return Status::OK();
    };
    const bool a16 = a->dtype() == DType::kInt16, b16 = b->dtype() == DType::kInt16;
    if ((!a16 && a->dtype() != DType::kUint16) || (!b16 && b->dtype() != DType::kUint16))
      return Diag::Msg("MatMulInteger16 needs int16 or uint16 operands");
    if (a16) return b16 ? run.template operator()<int16_t, int16_t>() : run.template operator()<int16_t, uint16_t>();
    return b16 ? run.template operator()<uint16_t, int16_t>() : run.template operator()<uint16_t, uint16_t>();
  }

 private:
  std::unique_ptr<PackedMatMulWeights> packed_;
};

Expected<std::unique_ptr<OpKernel>> CreateMatMulInteger16(const NodeInfo& node) {
  for (size_t i = 0; i < 2; ++i)
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kInt16, DType::kUint16))
      return node.Error(std::string("MatMulInteger16 on ") + DTypeName(node.input_type(i)) + " is not supported");
  NUPHAR_ASSIGN_OR_RETURN(const ngemm::NgemmTiles tiles, ReadNgemmTiles(node));
  std::unique_ptr<PackedMatMulWeights> packed;
  const Tensor* b = node.constant_input(1);
  // A uint16 A never runs on NGEMM, but its type is known only when declared: pack for any A
  // that may be int16, and let Compute choose per call.
  if (b && b->rank() == 2 && b->dtype() == DType::kInt16 && node.input_type(0) != DType::kUint16) {
    packed = std::make_unique<PackedMatMulWeights>();
    packed->tiles = tiles;
    if (!PackInto<int16_t>(*b, ngemm::WeightType::kInt16, packed.get())) packed.reset();
  }
  return MakeKernel<MatMulInteger16Kernel>(std::move(packed));
}

// QLinearMatMul: y = saturate(round(((a - za)(b - zb)) * a_scale * b_scale / y_scale) + y_zp).
// a_scale/a_zero_point may be per row of a, b_scale/b_zero_point per column of b.
class QLinearMatMulKernel final : public OpKernel {
 public:
  Status Compute(KernelContext& ctx) const override {
    for (size_t i = 0; i < 8; ++i)
      if (!ctx.input(i)) return Diag::Msg("QLinearMatMul needs all 8 inputs");
    const Tensor& a = *ctx.input(0);
    const Tensor& b = *ctx.input(3);
    const Tensor *a_scale = ctx.input(1), *b_scale = ctx.input(4), *y_scale = ctx.input(6), *y_zp = ctx.input(7);
    NUPHAR_ASSIGN_OR_RETURN(const MatMulShape s, MatMulShape::Compute(a.shape(), b.shape()));
    NUPHAR_ASSIGN_OR_RETURN(const WideZeroPoint za, WidenZeroPoint(ctx.input(2), a, true, 1));
    NUPHAR_ASSIGN_OR_RETURN(const WideZeroPoint zb, WidenZeroPoint(ctx.input(5), b, false, 2));
    if (za.batched || zb.batched) return Diag::Msg("QLinearMatMul supports per-tensor or per-row/column zero points");
    for (const Tensor* sc : {a_scale, b_scale, y_scale})
      if (sc->dtype() != DType::kFloat) return Diag::Msg("QLinearMatMul scales must be float");
    NUPHAR_ASSIGN_OR_RETURN(const PerAxisParam as, ReadPerAxisParam(a_scale, s.M, "a_scale"));
    NUPHAR_ASSIGN_OR_RETURN(const PerAxisParam bs, ReadPerAxisParam(b_scale, s.N, "b_scale"));
    if (y_scale->size() != 1 || y_zp->size() != 1) return Diag::Msg("QLinearMatMul y_scale/y_zero_point must be scalars");
    const DType y_type = y_zp->dtype();
    Tensor* y = ctx.Output(0, y_type, s.output_shape());
    int32_t* acc = ScratchBuffer<int32_t>(static_cast<size_t>(s.batch_count * s.M * s.N), 0);
    NUPHAR_RETURN_IF_ERROR(DispatchInt8Pair(a.dtype(), b.dtype(), [&]<class TA, class TB>() {
      BatchedIntegerGemm<TA, TB>(s, a.data<TA>(), b.data<TB>(), za, zb, acc);
      return Status::OK();
    }));
    const float ys = y_scale->data<float>()[0];
    auto requantize = [&]<class Q>() {
      const float zero = static_cast<float>(y_zp->data<Q>()[0]);
      Q* py = y->data<Q>();
      for (int64_t i = 0; i < s.batch_count * s.M; ++i) {
        const float sa = a_scale->data<float>()[as.count == 1 ? 0 : i % s.M];
        for (int64_t n = 0; n < s.N; ++n) {
          const float multiplier = sa * b_scale->data<float>()[bs.count == 1 ? 0 : n] / ys;
          py[i * s.N + n] = SaturateRound<Q>(std::nearbyint(static_cast<float>(acc[i * s.N + n]) * multiplier) + zero);
        }
      }
      return Status::OK();
    };
    if (y_type == DType::kUint8) return requantize.template operator()<uint8_t>();
    if (y_type == DType::kInt8) return requantize.template operator()<int8_t>();
    return UnsupportedDType(y_type);
  }
};

Expected<std::unique_ptr<OpKernel>> CreateQLinearMatMul(const NodeInfo& node) {
  for (size_t i : {0, 2, 3, 5, 7})
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kUint8, DType::kInt8))
      return node.Error(std::string("QLinearMatMul on ") + DTypeName(node.input_type(i)) + " is not supported");
  return MakeKernel<QLinearMatMulKernel>();
}

}  // namespace

void RegisterQuantMatMulKernels(KernelRegistry& r) {
  r.Add("", "MatMulInteger", CreateMatMulInteger);
  r.Add("com.microsoft", "MatMulInteger16", CreateMatMulInteger16);
  r.Add("", "QLinearMatMul", CreateQLinearMatMul);
}

}  // namespace nuphar
