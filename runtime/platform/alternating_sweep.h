// Sweep order of a GEMV over constant weights: ascending and descending block order, alternately.
//
// # Why
// An RNN step streams its whole recurrent matrix once (batch 1). When the matrix is larger than
// the core's L2 (int8 LSTM H = 1024: 4 MB; fp32 H = 512: 4 MB), an ascending sweep every step
// finds nothing of it in L2: the blocks it needs first were evicted by the end of the previous
// sweep. Alternating the direction starts each sweep on the blocks the previous one read last,
// still in L2, so up to an L2's worth of every sweep comes from L2 instead of L3 or DRAM.
// Measured on a 2 MB-L2 Xeon (KVM): int8 LSTM H = 1024, 1.3-1.7x less time per step.
//
// # Numerics
// Each output column is computed by the same kernel code whatever the order: results never
// depend on the direction.
//
// Thread safety: concurrent callers may get the same direction; only speed depends on it.
#pragma once

#include <atomic>
#include <cstdint>

namespace nuphar {

class AlternatingSweep {
 public:
  /// Blocks per call of the micro-kernel in a descending sweep (ascending inside a chunk): large
  /// enough to keep the per-call overhead small, small against any L2.
  static constexpr int64_t kChunkBlocks = 4;

  AlternatingSweep() = default;
  /// A copy (or a moved-to object) starts with an ascending sweep.
  AlternatingSweep(const AlternatingSweep&) {}
  AlternatingSweep& operator=(const AlternatingSweep&) { return *this; }

  /// Whether the next sweep over `blocks` blocks runs descending: every other call, when the
  /// matrix spans more than one chunk.
  bool NextIsDescending(int64_t blocks) const {
    if (blocks <= kChunkBlocks) return false;
    return (sweeps_.fetch_add(1, std::memory_order_relaxed) & 1) != 0;
  }

  /// Calls run(b0, b1) on block ranges covering [first, end): the whole range when ascending,
  /// chunks from the last to the first when descending.
  template <class Run>
  static void ForEachChunk(int64_t first, int64_t end, bool descending, Run&& run) {
    if (!descending) {
      run(first, end);
      return;
    }
    for (; end > first; end -= kChunkBlocks) run(end - first > kChunkBlocks ? end - kChunkBlocks : first, end);
  }

 private:
  mutable std::atomic<uint32_t> sweeps_{0};
};

}  // namespace nuphar
