// Kernel of the fused int8 LSTM cell (runtime/fusion/lstm_cell_fusion.h):
//   h, c = DynQuantLstmCell(X, Wq, step, base, rowsum, add, c_prev)
// One row, when the session's tier has a fused step (dq_lstm_cell.h), int8 weights and H a
// multiple of its chunk (32 units on avx512vnni, 16 on avxvnni and avx2), runs that step, which
// packs Wq its own way at load. Any other call runs DynQuantMatMul into
// scratch, then the gate math row by row with the session's vector math. Both give the floats of
// the unfused nodes. This file is built with -ffp-contract=off (runtime/CMakeLists.txt): c's Mul
// and Add round separately, as the nodes do.
#include <cstring>

#include "runtime/fusion/lstm_cell_fusion.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/math/vector_math.h"
#include "runtime/kernels/ngemm/dynamic_quant_matmul.h"
#include "runtime/kernels/quant/dq_lstm_cell.h"
#include "runtime/kernels/quant/dq_matmul_state.h"
#include "runtime/platform/alternating_sweep.h"
#include "runtime/platform/cpu_features.h"

namespace nuphar {
namespace {

constexpr size_t RoundUp64(size_t n) { return (n + 63) / 64 * 64; }

class DynQuantLstmCellKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node) {
    auto k = std::unique_ptr<DynQuantLstmCellKernel>(new DynQuantLstmCellKernel());
    DynQuantMatMulState& d = k->dq_;
    // The fusion writes all of them; a node written by hand into a file may not.
    if (!node.has_input(0) || !node.has_input(6) || !node.has_output(0) || !node.has_output(1))
      return node.Error("needs inputs X and c_prev (0 and 6) and outputs h and c");
    NUPHAR_RETURN_IF_ERROR(d.Init(node));
    if (d.scheme != ngemm::DynQuantScheme::kAsymm8) return node.Error("only the asymm8 scheme has a fused LSTM cell");
    if (d.n % 4 != 0) return node.Error("Wq has " + std::to_string(d.n) + " columns, not 4H");
    k->h_ = d.n / 4;
    const std::vector<int64_t> gates = node.GetInts("gates");
    bool seen[4] = {};
    for (int64_t p : gates)
      if (p >= 0 && p < 4) seen[p] = true;
    if (gates.size() != 4 || !(seen[0] && seen[1] && seen[2] && seen[3]))
      return node.Error("attribute gates must list the four Split parts of gates i, o, f, c");
    for (int r = 0; r < 4; ++r) k->gate_parts_[r] = static_cast<int>(gates[static_cast<size_t>(r)]);
    k->rank_ = node.GetInt("rank", 0);
    if (k->rank_ < 1) return node.Error("attribute rank (h_prev's rank, at least 1) is missing");
    // The fused step of the session's tier (nuphar_codegen_target, else the process's), for int8
    // weights and whole chunks of units.
    const IsaTier tier = d.tiles.tier.value_or(ActiveIsaTier());
    const bool a_within_7bit = d.constants.clip_min >= 0.0f && d.constants.clip_max <= 127.0f;
    const Tensor* w = node.constant_input(1);
    k->step_ = HostCpu().Supports(tier) ? quant::LstmCellKernelFor(tier, a_within_7bit) : nullptr;
    if (k->step_ && (w->dtype() != DType::kInt8 || k->h_ % k->step_->chunk_units != 0)) k->step_ = nullptr;
    if (k->step_) {
      const int units = k->step_->chunk_units;
      k->step_packed_ = Tensor(DType::kUint8, {static_cast<int64_t>(quant::LstmCellPackedBytes(d.k, k->h_, units))});
      quant::PackLstmCellWeights(w->data<int8_t>(), d.k, k->h_, units, k->gate_parts_,
                                 static_cast<uint8_t*>(k->step_packed_.raw()));
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    const DynQuantMatMulState& d = dq_;
    const Tensor* x = ctx.input(0);
    // The fused Split was of the last axis of a rank-`rank_` h_prev: another rank would split
    // another axis in the unfused graph.
    if (!x || x->dtype() != DType::kFloat || x->rank() != rank_ || x->shape().back() != d.k)
      return Diag::Msg("input must be float of rank " + std::to_string(rank_) + " ending in " + std::to_string(d.k) +
                       ", got " + (x ? ShapeToString(x->shape()) : std::string("nothing")) +
                       " (the model's declared shapes are wrong)");
    const int64_t rows = d.k == 0 ? 0 : x->size() / d.k;
    // h and c have h_prev's shape with H columns; so must c_prev (the fusion proved it from the
    // declared shapes; a model whose declared shapes were wrong gets an error, not a broadcast).
    std::vector<int64_t> shape = x->shape();
    shape.back() = h_;
    const Tensor* c_prev = ctx.input(6);
    if (!c_prev || c_prev->dtype() != DType::kFloat || c_prev->shape() != shape)
      return Diag::Msg("the previous cell state must be float " + ShapeToString(shape) + ", got " +
                       (c_prev ? ShapeToString(c_prev->shape()) : std::string("nothing")) +
                       " (the model's declared shapes are wrong)");
    const float* add = nullptr;
    int64_t ld_add = 0;
    if (d.has_add) {
      const Tensor* b = ctx.input(5);
      if (!b || b->dtype() != DType::kFloat) return Diag::Msg("the absorbed Add's operand must be a float tensor");
      std::vector<int64_t> y_shape = x->shape();
      y_shape.back() = d.n;
      NUPHAR_ASSIGN_OR_RETURN(ld_add, AddOperandStride(b->shape(), d.n, &y_shape));
      if (y_shape.size() != x->shape().size())
        return Diag::Msg("the absorbed Add's operand " + ShapeToString(b->shape()) + " has more dims than h");
      add = b->data<float>();
    }
    float* h = ctx.Output(0, DType::kFloat, shape)->data<float>();
    float* c = ctx.Output(1, DType::kFloat, shape)->data<float>();
    if (!Run(x->data<float>(), rows, add, ld_add, c_prev->data<float>(), h, c, ctx.Scratch(ScratchBytes(rows))))
      return Diag::Msg("the fused kernel rejected its arguments");
    return Status::OK();
  }
  const char* profile_path() const override { return "fused_ngemm"; }
  const DirectCall* direct_call() const override { return &direct_; }

 private:
  DynQuantLstmCellKernel() { direct_ = {&CallDirect, this, &DirectScratchBytes}; }

  static void CallDirect(const void* state, const float* const* inputs, const int64_t* input_sizes,
                         float* const* outputs, int64_t rows, void* scratch) {
    const auto* k = static_cast<const DynQuantLstmCellKernel*>(state);
    const float* add = k->dq_.has_add ? inputs[5] : nullptr;
    const int64_t ld_add = add == nullptr ? 0 : k->dq_.DirectAddStride(input_sizes[5]);
    k->Run(inputs[0], rows, add, ld_add, inputs[6], outputs[0], outputs[1], scratch);
  }
  static size_t DirectScratchBytes(const void* state, int64_t rows) {
    return static_cast<const DynQuantLstmCellKernel*>(state)->ScratchBytes(rows);
  }

  // The fused step: the one row quantized, then the tier's step. The vector math must be the AVX2
  // or AVX-512 build: the step's Sigmoid and Tanh are theirs (the portable build rounds
  // differently).
  bool UsesStep(int64_t rows) const {
    if (!step_ || rows != 1) return false;
    const VectorMath* vm = &GetVectorMath();
    return vm == &VectorMathAvx512() || vm == &VectorMathAvx2();
  }

  // Scratch: the step's quantized row, or the product Y, DynQuantMatMul's scratch and five gate rows.
  size_t ScratchBytes(int64_t rows) const {
    const DynQuantMatMulState& d = dq_;
    const size_t step = RoundUp64(static_cast<size_t>((d.k + 3) / 4 * 4));
    const size_t y = RoundUp64(static_cast<size_t>(rows * d.n) * sizeof(float));
    const size_t gates = RoundUp64(static_cast<size_t>(5 * h_) * sizeof(float));
    return std::max(step, y + ngemm::DynQuantMatMulScratchBytes(d.scheme, rows, d.k, d.n) + gates);
  }

  // False (nothing written) when DynQuantMatMul rejects its arguments; a direct call has the
  // shapes Compute accepted.
  bool Run(const float* x, int64_t rows, const float* add, int64_t ld_add, const float* c_prev, float* h, float* c,
           void* scratch) const {
    const DynQuantMatMulState& d = dq_;
    if (UsesStep(rows)) {
      auto* q = static_cast<uint8_t*>(scratch);
      const int64_t k_padded = (d.k + 3) / 4 * 4;
      std::memset(q + d.k, 0, static_cast<size_t>(k_padded - d.k));
      quant::LstmCellStep s;
      s.packed = static_cast<const uint8_t*>(step_packed_.raw());
      s.K = d.k;
      s.H = h_;
      std::memcpy(s.gate_parts, gate_parts_, sizeof(gate_parts_));
      s.row = ngemm::QuantizeActivationRow(d.scheme, x, d.k, d.constants, q, d.tiles.tier);
      s.q = q;
      s.step = d.weights.step;
      s.base = d.weights.base;
      s.rowsum = d.weights.qparam_rowsum;
      s.add = add;
      s.c_prev = c_prev;
      s.c = c;
      s.h = h;
      s.descending = sweep_.NextIsDescending(h_ / step_->chunk_units);
      step_->step(s);
      return true;
    }
    auto* y = static_cast<float*>(scratch);
    auto* dq_scratch = static_cast<uint8_t*>(scratch) + RoundUp64(static_cast<size_t>(rows * d.n) * sizeof(float));
    auto* gate_rows = reinterpret_cast<float*>(dq_scratch + ngemm::DynQuantMatMulScratchBytes(d.scheme, rows, d.k, d.n));
    if (!ngemm::DynQuantMatMul(d.scheme, x, rows, d.k, d.k, d.weights, d.constants, dq_scratch, y, d.n, add, ld_add,
                               d.tiles))
      return false;
    const VectorMath& vm = GetVectorMath();
    const int64_t H = h_;
    float *i = gate_rows, *o = i + H, *f = o + H, *g = f + H, *tc = g + H;
    for (int64_t m = 0; m < rows; ++m) {
      const float* ym = y + m * d.n;
      vm.sigmoid_f32(ym + gate_parts_[0] * H, i, H);
      vm.sigmoid_f32(ym + gate_parts_[2] * H, f, H);
      vm.tanh_f32(ym + gate_parts_[3] * H, g, H);
      const float* cp = c_prev + m * H;
      float* cm = c + m * H;
      for (int64_t u = 0; u < H; ++u) {
        const float fc = f[u] * cp[u];
        const float ig = i[u] * g[u];
        cm[u] = fc + ig;
      }
      vm.sigmoid_f32(ym + gate_parts_[1] * H, o, H);
      vm.tanh_f32(cm, tc, H);
      float* hm = h + m * H;
      for (int64_t u = 0; u < H; ++u) hm[u] = o[u] * tc[u];
    }
    return true;
  }

  DirectCall direct_;
  DynQuantMatMulState dq_;
  int64_t h_ = 0;
  int64_t rank_ = 0;  ///< h_prev's rank (attribute rank)
  int gate_parts_[4] = {0, 1, 2, 3};  ///< Split part of gate i, o, f, c
  const quant::LstmCellKernel* step_ = nullptr;  ///< the tier's fused step, if it runs here
  Tensor step_packed_;                            ///< Wq in the fused step's layout (step_)
  AlternatingSweep sweep_;  ///< the fused step's chunk order, call after call
};

}  // namespace

void RegisterDynQuantLstmCellKernel(KernelRegistry& r) {
  r.Add(kFusedDomain, kDynQuantLstmCellOp, DynQuantLstmCellKernel::Create);
}

}  // namespace nuphar
