// Driver ("middle-end"): blocking over M, N and K, choice of the exact or fast mode, re-centring
// of int8 activations, and the zero-point fix-ups of R2 with row sums. Baseline flags only; all
// vector work happens behind the dispatch record.
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "runtime/kernels/ngemm/ngemm.h"
#include "runtime/kernels/ngemm/ngemm_internal.h"
#include "runtime/platform/thread_pool.h"

namespace nuphar::ngemm {

namespace {

[[noreturn]] void Fail(const char* why) {
  // output-ok: the message of an abort (a broken invariant), not a diagnostic.
  std::fprintf(stderr, "ngemm: invariant violated: %s\n", why);
  std::abort();
}

/// Threads for a product of `work` MACs: the pool's when the per-thread share reaches the
/// session's nuphar_parallel_min_workloads (R6; 0 = never split), else 1.
int ThreadsFor(const NgemmTiles& tiles, int64_t work) {
  if (tiles.pool == nullptr || tiles.parallel_min_work <= 0) return 1;
  const int threads = tiles.pool->num_threads();
  return threads > 1 && work / threads >= tiles.parallel_min_work ? threads : 1;
}

/// C = A * B (no zero points) through the dispatched kernels. With more than one thread the
/// GEMV is split into column ranges of whole 32-column blocks and the GEMM into its (M, N) tiles;
/// every output element is computed by the same kernel call either way, so results do not
/// depend on the thread count.
void Product(const uint8_t* A, int64_t M, int64_t K, int64_t lda_bytes, const PackedInt8Weights& B,
             int32_t* C, int64_t ldc, NgemmMode mode, uint8_t a_xor, const NgemmTiles& tiles) {
  const NgemmDispatch& d = GetNgemmDispatch(tiles.tier);
  const int elem_bytes = ActivationBytes(mode);
  const int group = GroupElems(B.type());
  const int threads = ThreadsFor(tiles, M * K * B.N());
  NgemmTileArgs base;
  base.lda_bytes = lda_bytes;
  base.block_stride = B.block_stride();
  base.ldc = ldc;
  base.a_xor = a_xor;
  base.mode = mode;
  if (M == 1) {
    base.a = A;
    base.rows = 1;
    base.k_elems = K;
    const int64_t blocks = (B.N() + kBlockCols - 1) / kBlockCols;
    const int tasks = static_cast<int>(std::min<int64_t>(threads, blocks));
    // Every other call sweeps its blocks backwards, starting on those still in L2 (the sweep
    // order changes no result).
    const bool descending = B.gemv_sweep().NextIsDescending(blocks);
    auto columns = [&](int task) {
      const int64_t first = blocks * task / tasks, last = blocks * (task + 1) / tasks;
      AlternatingSweep::ForEachChunk(first, last, descending, [&](int64_t b0, int64_t b1) {
        NgemmTileArgs t = base;
        t.b = B.data() + b0 * B.block_stride();
        t.cols = std::min(b1 * kBlockCols, B.N()) - b0 * kBlockCols;
        t.c = C + b0 * kBlockCols;
        d.gemv(t);
      });
    };
    if (tasks <= 1) {
      columns(0);
    } else {
      tiles.pool->ParallelFor(tasks, columns);
    }
    return;
  }
  const ResolvedTiles rt = ResolveTiles(tiles, M, B.NPadded(), B.KPadded());
  base.rows_outer = rt.rows_outer;
  auto run_tile = [&](int64_t m0, int64_t n0) {
    NgemmTileArgs t = base;
    for (int64_t k0 = 0; k0 < K; k0 += rt.k) {
      t.a = A + m0 * lda_bytes + k0 * elem_bytes;
      t.rows = std::min(rt.m, M - m0);
      t.k_elems = std::min(rt.k, K - k0);
      t.b = B.data() + (n0 / kBlockCols) * B.block_stride() + (k0 / group) * kGroupBytes;
      t.col_in_block = static_cast<int>(n0 % kBlockCols);
      t.cols = std::min(rt.n, B.N() - n0);
      t.c = C + m0 * ldc + n0;
      t.accumulate = k0 > 0;
      d.kernel(t);
    }
  };
  const int64_t m_tiles = (M + rt.m - 1) / rt.m, n_tiles = (B.N() + rt.n - 1) / rt.n;
  // Tile i in the loop order of NUPHAR_IGEMM_PERMUTE.
  auto tile = [&](int64_t i) {
    if (rt.n_outer) {
      run_tile((i % m_tiles) * rt.m, (i / m_tiles) * rt.n);
    } else {
      run_tile((i / n_tiles) * rt.m, (i % n_tiles) * rt.n);
    }
  };
  const int64_t count = m_tiles * n_tiles;
  if (threads <= 1 || count <= 1) {
    for (int64_t i = 0; i < count; ++i) tile(i);
    return;
  }
  // Contiguous runs of tiles per task keep each thread's B panels (N-outer) or A rows in its cache.
  const int tasks = static_cast<int>(std::min<int64_t>(threads, count));
  tiles.pool->ParallelFor(tasks, [&](int task) {
    for (int64_t i = count * task / tasks; i < count * (task + 1) / tasks; ++i) tile(i);
  });
}

}  // namespace

const char* ModeName(NgemmMode mode) {
  switch (mode) {
    case NgemmMode::kU8S8Fast: return "u8s8-fast";
    case NgemmMode::kU8S8Exact: return "u8s8-exact";
    case NgemmMode::kS16S16: return "s16s16";
  }
  return "?";
}

NgemmMode ChooseNgemmMode(const PackedInt8Weights& B, const NgemmParams& params) {
  if (B.type() == WeightType::kInt16) return NgemmMode::kS16S16;
  // int8 A is re-centred into [0, 255], so only the weights can make it safe.
  const bool a_7bit = params.a_type == ActivationType::kUint8 && params.a_within_7bit;
  return a_7bit || B.weights_within_7bit() ? NgemmMode::kU8S8Fast : NgemmMode::kU8S8Exact;
}

void NgemmU8S8(const uint8_t* A, int64_t M, int64_t K, int64_t lda, const PackedInt8Weights& B,
               int32_t* C, int64_t ldc, const NgemmParams& params) {
  if (B.type() == WeightType::kInt16) Fail("NgemmU8S8 called with int16 weights");
  if (K != B.K()) Fail("K of A differs from K of the packed weights");
  if (M <= 0) return;
  const bool a_signed = params.a_type == ActivationType::kInt8;
  const uint8_t a_xor = a_signed ? 0x80 : 0;
  Product(A, M, K, lda, B, C, ldc, ChooseNgemmMode(B, params), a_xor, params.tiles);

  // Y = sum a'b' - za'*colsum(B') - zb'*rowsum(A') + K*za'*zb', all modulo 2^32, with
  // a' = a + a_offset (za' = za + a_offset) and b' = b - b_offset (zb' = zb - b_offset).
  const int32_t a_offset = a_signed ? 128 : 0;
  const int32_t b_offset = B.b_offset();
  if (params.a_zero_point == nullptr && params.b_zero_point == nullptr && a_offset == 0 && b_offset == 0) return;
  const int32_t* colsum = B.column_sums();
  const int64_t N = B.N();
  auto za_of = [&](int64_t m) -> uint32_t {
    const int32_t za = params.a_zero_point ? params.a_zero_point[params.a_zero_point_per_row ? m : 0] : 0;
    return static_cast<uint32_t>(za + a_offset);
  };
  auto zb_of = [&](int64_t n) -> uint32_t {
    const int32_t zb = params.b_zero_point ? params.b_zero_point[params.b_zero_point_per_column ? n : 0] : 0;
    return static_cast<uint32_t>(zb - b_offset);
  };
  bool any_zb = false;
  for (int64_t n = 0; n < N && !any_zb; ++n) any_zb = zb_of(n) != 0;
  for (int64_t m = 0; m < M; ++m) {
    const uint32_t za = za_of(m);
    uint32_t rowsum = 0;
    if (any_zb) {
      const uint8_t* a = A + m * lda;
      for (int64_t k = 0; k < K; ++k) rowsum += static_cast<uint8_t>(a[k] ^ a_xor);
    }
    int32_t* c = C + m * ldc;
    const uint32_t k_za = static_cast<uint32_t>(K) * za;
    for (int64_t n = 0; n < N; ++n) {
      const uint32_t zb = zb_of(n);
      const uint32_t fix = k_za * zb - za * static_cast<uint32_t>(colsum[n]) - zb * rowsum;
      c[n] = static_cast<int32_t>(static_cast<uint32_t>(c[n]) + fix);
    }
  }
}

void NgemmS16S16(const int16_t* A, int64_t M, int64_t K, int64_t lda, const PackedInt8Weights& B,
                 int32_t* C, int64_t ldc, const NgemmTiles& tiles) {
  if (B.type() != WeightType::kInt16) Fail("NgemmS16S16 needs weights packed from int16");
  if (K != B.K()) Fail("K of A differs from K of the packed weights");
  if (M <= 0) return;
  Product(reinterpret_cast<const uint8_t*>(A), M, K, lda * 2, B, C, ldc, NgemmMode::kS16S16, 0, tiles);
}

}  // namespace nuphar::ngemm
