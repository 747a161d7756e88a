// MatMul (numpy.matmul semantics, batch broadcasting) and Gemm (transA/transB, alpha, beta,
// unidirectional C broadcast; opset < 7 `broadcast` attribute). fp32/fp64 go through Eigen,
// except fp32 rows against a constant 2-D B: one row (a Scan body's h x R^T) runs the packed
// GEMV of gemv_f32.h, several (the hoisted input projection X x W) its packed GEMM where the tier
// has one (AVX-512). B is packed on the first such call (once, thread-safe).
// MatMulAddBias (runtime/fusion/matmul_bias_fusion.h) is the same kernel with a constant bias
// row added to the finished product: in the packed GEMM's store, after the other paths.
#include <algorithm>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "runtime/core/product_call.h"
#include "runtime/fusion/matmul_bias_fusion.h"
#include "runtime/kernels/math/gemm_eigen.h"
#include "runtime/kernels/math/gemv_f32.h"
#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/nn/nn_kernels.h"
#include "runtime/kernels/nn/nn_matmul_shape.h"
#include "runtime/platform/thread_pool.h"

namespace nuphar {
namespace {

// One [M, K] x [K, N] fp32 product split by columns over the session's pool when its
// multiply-adds per thread reach nuphar_parallel_min_workloads (R6). Eigen computes the
// row-major product as a column-major one with our N as its rows, in register groups of 3, 2 or
// 1 packets (24/16/8 floats with AVX2, 12/8/4 with SSE) whose sums are ordered differently.
// Chunks are whole multiples of 48 columns, so every column falls into the same group as in the
// unsplit product (the last chunk keeps N mod 48): results do not depend on the thread count
// (threading_test checks this).
template <class T>
void GemmMaybeSplit(ThreadPool* pool, int64_t min_work, int64_t M, int64_t N, int64_t K, const T* a, const T* b, T* c) {
  constexpr int64_t kChunk = 48;
  const int threads = pool != nullptr && min_work > 0 ? pool->num_threads() : 1;
  const int64_t chunks = N / kChunk;
  const int tasks = static_cast<int>(std::min<int64_t>(threads, chunks));
  if (!std::is_same_v<T, float> || tasks <= 1 || M * N * K / threads < min_work) {
    GemmAny<T>(false, false, M, N, K, T(1), a, K, b, N, T(0), c, N);
    return;
  }
  pool->ParallelFor(tasks, [&](int t) {
    const int64_t n0 = chunks * t / tasks * kChunk;
    const int64_t n1 = t + 1 == tasks ? N : chunks * (t + 1) / tasks * kChunk;
    GemmAny<T>(false, false, M, n1 - n0, K, T(1), a, K, b + n0, N, T(0), c + n0, N);
  });
}

// [M, K] x the packed constant B with gemv_f32.h's GEMM, split by 32-column blocks over the
// session's pool under the same rule as GemmMaybeSplit. Every column is one FMA chain per element
// whatever the split, so results do not depend on the thread count.
void PackedGemmMaybeSplit(ThreadPool* pool, int64_t min_work, int64_t M, const float* a, const PackedGemvF32& b,
                          const float* bias, float* c) {
  const int64_t N = b.N(), K = b.K();
  const int64_t blocks = (N + PackedGemvF32::kBlockCols - 1) / PackedGemvF32::kBlockCols;
  const int threads = pool != nullptr && min_work > 0 ? pool->num_threads() : 1;
  const int tasks = static_cast<int>(std::min<int64_t>(threads, blocks));
  if (tasks <= 1 || M * N * K / threads < min_work) {
    GemmF32Packed(a, M, K, b, 0, blocks, bias, c, N);
    return;
  }
  pool->ParallelFor(tasks, [&](int t) { GemmF32Packed(a, M, K, b, blocks * t / tasks, blocks * (t + 1) / tasks, bias, c, N); });
}

// c[r, n] += bias[n] for `rows` rows of N: MatMulAddBias on the paths whose product cannot add
// it on the way out (one float32 rounding per element, as the Add node it replaces).
void AddBiasRows(const float* bias, int64_t rows, int64_t N, float* c) {
  for (int64_t r = 0; r < rows; ++r, c += N)
    for (int64_t n = 0; n < N; ++n) c[n] += bias[n];
}

class MatMulKernel final : public OpKernel {
 public:
  // `b` (and `bias`): the constant float [K, N] matrix (and [N] row) when there is one; their
  // buffers are shared, never written.
  MatMulKernel(const Tensor* b, const Tensor* bias, ThreadPool* pool, int64_t parallel_min_work)
      : add_bias_(bias != nullptr),
        b_is_constant_f32_matrix_(b != nullptr),
        k_(b ? b->dim(0) : 0),
        n_(b ? b->dim(1) : 0),
        pool_(pool),
        parallel_min_work_(parallel_min_work) {
    direct_ = {&CallDirect, this, &NoScratch};
    if (b) b_ = *b;
    if (bias) bias_ = *bias;
  }

  /// A float [rows, K] row block against the constant [K, N] matrix, as Compute runs it (the
  /// packed GEMV for one row, the column-split GEMM otherwise); B was packed by Compute.
  const DirectCall* direct_call() const override { return b_is_constant_f32_matrix_ ? &direct_ : nullptr; }
  /// The same row block for a JIT product partition (input 0 of any rank, last dim K).
  const ProductCall* product_call() const override { return b_is_constant_f32_matrix_ ? &product_ : nullptr; }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return Diag::Msg("MatMul needs inputs A and B");
    if (a->dtype() != b->dtype()) return Diag::Msg("MatMul inputs A and B have different element types");
    NUPHAR_ASSIGN_OR_RETURN(const MatMulShape s, MatMulShape::Compute(a->shape(), b->shape()));
    const float* bias = nullptr;
    if (add_bias_) {
      const Tensor* t = ctx.input(2);
      if (!t || t->dtype() != DType::kFloat || a->dtype() != DType::kFloat || t->size() != s.N)
        return Diag::Msg("MatMulAddBias needs float A and a float bias of " + std::to_string(s.N) + " elements");
      bias = t->data<float>();
    }
    Tensor* y = ctx.Output(0, a->dtype(), s.output_shape());
    return DispatchGemmTypes(a->dtype(), [&]<class T>() {
      const T* pa = a->data<T>();
      const T* pb = b->data<T>();
      T* py = y->data<T>();
      if constexpr (std::is_same_v<T, float>) {
        if (b_is_constant_f32_matrix_ && s.b_shared_and_a_contiguous()) {  // the direct and product calls' code
          RunRows(pa, s.batch_count * s.M, py);
          return Status::OK();
        }
      }
      if (s.b_shared_and_a_contiguous()) {
        // All batches of A against one B: a single [batch*M, K] x [K, N] product.
        GemmMaybeSplit<T>(pool_, parallel_min_work_, s.batch_count * s.M, s.N, s.K, pa, pb, py);
      } else {
        for (int64_t i = 0; i < s.batch_count; ++i)
          GemmAny<T>(false, false, s.M, s.N, s.K, T(1), pa + s.a_offset(i), s.K, pb + s.b_offset(i), s.N, T(0),
                     py + i * s.M * s.N, s.N);
      }
      if constexpr (std::is_same_v<T, float>) {
        if (bias) AddBiasRows(bias, s.batch_count * s.M, s.N, py);
      }
      return Status::OK();
    });
  }
  const char* profile_path() const override { return b_is_constant_f32_matrix_ ? "gemv_f32|eigen" : "eigen"; }

 private:
  static void CallDirect(const void* state, const float* const* inputs, const int64_t* input_sizes,
                         float* const* outputs, int64_t rows, void* scratch) {
    static_cast<const MatMulKernel*>(state)->RunRows(inputs[0], rows, outputs[0]);
  }
  // [rows, K] x the constant B (+ the bias row) into y, as Compute's float paths run it.
  void RunRows(const float* a, int64_t rows, float* y) const {
    const float* b = b_.data<float>();
    const float* bias = add_bias_ ? bias_.data<float>() : nullptr;
    if (rows == 1) {
      GemvF32Packed(a, PackedB(), y, false);
      if (bias) AddBiasRows(bias, 1, n_, y);
      return;
    }
    if (PackedGemmF32Available()) {
      PackedGemmMaybeSplit(pool_, parallel_min_work_, rows, a, PackedB(), bias, y);
      return;
    }
    GemmMaybeSplit<float>(pool_, parallel_min_work_, rows, n_, k_, a, b, y);
    if (bias) AddBiasRows(bias, rows, n_, y);
  }
  // ProductCall (core/product_call.h): A of any rank >= 1 whose last dim is K; Y is A's shape with
  // the last dim N (numpy matmul against a 2-D B).
  template <class K>
  friend ProductCall nuphar::ProductCallOf(const K* k);
  struct ProductPlan {
    int64_t rows;
  };
  int PrepareProduct(const int64_t* x, int rank, int64_t* y, ProductPlan* plan, size_t* scratch_bytes) const {
    if (rank < 1 || x[rank - 1] != k_) return 0;
    std::copy(x, x + rank - 1, y);
    y[rank - 1] = n_;
    plan->rows = 1;
    for (int d = 0; d + 1 < rank; ++d) plan->rows *= x[d];
    *scratch_bytes = 0;
    return rank;
  }
  void RunProduct(const ProductPlan& plan, const float* x, float* y, void*) const { RunRows(x, plan.rows, y); }
  // The constant B packed, on first use: a kernel that never runs (in an If branch not taken)
  // keeps no second copy of its weights.
  const PackedGemvF32& PackedB() const {
    std::call_once(pack_once_, [&] { packed_b_ = PackedGemvF32::FromKN(b_.data<float>(), k_, n_, n_); });
    return packed_b_;
  }
  static size_t NoScratch(const void*, int64_t) { return 0; }

  const bool add_bias_;  ///< MatMulAddBias: input 2 is the bias row
  const bool b_is_constant_f32_matrix_;
  const int64_t k_, n_;
  Tensor b_, bias_;  ///< the constant B and bias (shared buffers); empty without
  DirectCall direct_;
  const ProductCall product_ = ProductCallOf(this);
  ThreadPool* const pool_;
  const int64_t parallel_min_work_;
  mutable std::once_flag pack_once_;
  mutable PackedGemvF32 packed_b_;
};

Expected<std::unique_ptr<OpKernel>> CreateMatMul(const NodeInfo& node) {
  for (size_t i = 0; i < 2; ++i)
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64,
                             DType::kUint32, DType::kUint64))
      return node.Error(std::string("MatMul on ") + DTypeName(node.input_type(i)) + " is not supported");
  const Tensor* b = node.constant_input(1);
  const bool constant_f32_matrix = b && b->dtype() == DType::kFloat && b->rank() == 2;
  return MakeKernel<MatMulKernel>(constant_f32_matrix ? b : nullptr, nullptr, node.thread_pool(),
                                  node.parallel_min_work());
}

// MatMulAddBias: only what the fusion emits, a constant float [K, N] B and a constant float [N]
// bias (the direct call reads the bias as its third input).
Expected<std::unique_ptr<OpKernel>> CreateMatMulAddBias(const NodeInfo& node) {
  const Tensor* b = node.constant_input(1);
  const Tensor* bias = node.constant_input(2);
  if (!b || b->dtype() != DType::kFloat || b->rank() != 2)
    return node.Error("MatMulAddBias needs a constant float 2-D B");
  if (!bias || bias->dtype() != DType::kFloat || bias->rank() != 1 || bias->dim(0) != b->dim(1))
    return node.Error("MatMulAddBias needs a constant float bias of B's " + std::to_string(b->dim(1)) + " columns");
  return MakeKernel<MatMulKernel>(b, bias, node.thread_pool(), node.parallel_min_work());
}

// Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast to [M, N].
class GemmKernel final : public OpKernel {
 public:
  GemmKernel(bool trans_a, bool trans_b, float alpha, float beta, bool c_must_match)
      : trans_a_(trans_a), trans_b_(trans_b), alpha_(alpha), beta_(beta), c_must_match_(c_must_match) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    const Tensor* c = ctx.input(2);
    if (!a || !b) return Diag::Msg("Gemm needs inputs A and B");
    if (a->rank() != 2 || b->rank() != 2)
      return Diag::Msg("Gemm needs 2-D A and B, got " + ShapeToString(a->shape()) + " and " + ShapeToString(b->shape()));
    if (a->dtype() != b->dtype() || (c && c->dtype() != a->dtype()))
      return Diag::Msg("Gemm inputs have different element types");
    const int64_t M = trans_a_ ? a->dim(1) : a->dim(0);
    const int64_t K = trans_a_ ? a->dim(0) : a->dim(1);
    const int64_t N = trans_b_ ? b->dim(0) : b->dim(1);
    if ((trans_b_ ? b->dim(1) : b->dim(0)) != K)
      return Diag::Msg("Gemm inner dimensions differ: A " + ShapeToString(a->shape()) + ", B " +
                       ShapeToString(b->shape()));
    int64_t c_rows = 0, c_cols = 0;  // C's extent along M and N; 1 = broadcast
    if (c) {
      if (c->rank() > 2) return Diag::Msg("Gemm C must have rank <= 2, got " + ShapeToString(c->shape()));
      c_cols = c->rank() >= 1 ? c->dim(c->rank() - 1) : 1;
      c_rows = c->rank() == 2 ? c->dim(0) : 1;
      const bool ok = (c_rows == M || c_rows == 1) && (c_cols == N || c_cols == 1);
      if (!ok || (c_must_match_ && (c_rows != M || c_cols != N)))
        return Diag::Msg("Gemm C " + ShapeToString(c->shape()) + " does not broadcast to [" + std::to_string(M) +
                         "," + std::to_string(N) + "]");
    }
    const int64_t out_shape[2] = {M, N};
    Tensor* y = ctx.Output(0, a->dtype(), out_shape);
    return DispatchGemmTypes(a->dtype(), [&]<class T>() {
      T* py = y->data<T>();
      const bool use_c = c && beta_ != 0.0f && c->size() > 0;
      if (use_c) {
        const T* pc = c->data<T>();
        for (int64_t m = 0; m < M; ++m)
          for (int64_t n = 0; n < N; ++n)
            py[m * N + n] = pc[(c_rows == 1 ? 0 : m) * c_cols + (c_cols == 1 ? 0 : n)];
      }
      GemmAny<T>(trans_a_, trans_b_, M, N, K, static_cast<T>(alpha_), a->data<T>(), a->dim(1), b->data<T>(),
                 b->dim(1), use_c ? static_cast<T>(beta_) : T(0), py, N);
      return Status::OK();
    });
  }

 private:
  bool trans_a_, trans_b_;
  float alpha_, beta_;
  bool c_must_match_;
};

Expected<std::unique_ptr<OpKernel>> CreateGemm(const NodeInfo& node) {
  for (size_t i = 0; i < 3; ++i)
    if (!DeclaredTypeIsOneOf(node.input_type(i), DType::kFloat, DType::kDouble, DType::kInt32, DType::kInt64,
                             DType::kUint32, DType::kUint64))
      return node.Error(std::string("Gemm on ") + DTypeName(node.input_type(i)) + " is not supported");
  if (node.opset() < 11 && !node.has_input(2)) return node.Error("Gemm before opset 11 requires input C");
  // Opsets 1-6: C broadcasts only with broadcast=1; otherwise it must be exactly [M, N].
  const bool c_must_match = node.opset() < 7 && node.GetInt("broadcast", 0) == 0;
  return MakeKernel<GemmKernel>(node.GetInt("transA", 0) != 0, node.GetInt("transB", 0) != 0,
                                node.GetFloat("alpha", 1.0f), node.GetFloat("beta", 1.0f), c_must_match);
}

}  // namespace

void RegisterMatMulKernels(KernelRegistry& r) {
  r.Add("", "MatMul", CreateMatMul);
  r.Add(kFusedDomain, kMatMulAddBiasOp, CreateMatMulAddBias);
  r.Add("", "Gemm", CreateGemm);
}

}  // namespace nuphar
