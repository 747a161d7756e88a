// NGEMM: the public face of the int8/int16 matrix-multiply kernels (spec runtime.md R2, R3, §8.6).
// Pack constant weights once ("ask the size, allocate, pack"), then multiply any number of times.
//
// # Layout of packed int8 weights
//
// B is [K, N] (row-major in the model). Packing pads K up to a multiple of 4 and N up to a
// multiple of 32 with zeros and stores
//
//     [N/32 column blocks][K/4 k-groups][4 panels][8 columns][4 k]      (int8)
//
// so one 32-byte vector holds 4 consecutive k of 8 consecutive columns, and the 4 panels of a
// 32-column block are contiguous per k-group: a GEMV walks one sequential stream of 128 bytes
// per k-group. The kernel broadcasts 4 activation bytes (`vpbroadcastd`) and multiplies them
// with a panel vector (`vpmaddubsw` + `vpmaddwd(ones)` + `vpaddd`); every accumulator lane is a
// distinct output column, so no horizontal sum is ever needed.
// int16 weights (MatMulInteger16) use the same byte geometry with 2 k per 4 bytes:
// [N/32][K/2][4 panels][8 columns][2 k].
// The buffer is 64-byte aligned and fully written (padding is zero), so packed bytes and their
// hashes are deterministic. Alongside: int32 column sums of the packed values and whether every
// packed weight lies in [-64, 64].
//
// # Why the reserved bits avoid u8 x s8 saturation
//
// `vpmaddubsw` adds two u8*s8 products into a *saturating* int16. With full-range operands the
// worst case is 2*255*(-128) = -65280: silent saturation. If one operand is 7-bit it cannot
// happen: A in [0,127] gives |2*127*(-128)| = 32512 <= 32767 (the quantizer's reserved bit,
// Clip(0,127) -> Cast<u8>), and B in [-64,64] gives 2*255*64 = 32640. Only then is the "fast"
// path used. Otherwise the "exact" path splits A into its low 7 bits and its top bit: A&0x7f
// is 7-bit, and (A&0x80) in {0,128} gives pair sums in [-32768, 32512], so both `vpmaddubsw`
// are exact and are widened separately (half the speed, same packed weights).
//
// # Operand types and zero points
//
// Everything is computed as u8 x s8 (or s16 x s16) plus an exact int32 correction (R2):
//   Y[m,n] = sum_k a*b - za[m]*colsum(B)[n] - zb[n]*rowsum(A)[m] + K*za[m]*zb[n]
// s8 activations are re-centred by +128 (XOR 0x80 while loading) and u8 weights by -128 at pack
// time; the offsets are folded into the zero points, so every operand combination is exact.
// Results equal the plain integer triple loop modulo 2^32.
//
// # Hooks a new ISA must provide (see NgemmDispatch below; dispatch.cc fills the table)
//
//   pack_b      pack int8 or int16 [K,N] into the layout above (kernels read only that layout)
//   kernel      one M x N x K tile of C (=|+=) A*B for a given NgemmMode; register-blocked
//   gemv        one row of A times all of B, C in registers for the whole K
// A new ISA adds kernel_<isa>.cc/gemv_<isa>.cc/pack_<isa>.cc and one entry in dispatch.cc's
// table. Paths, one per tier of runtime/platform/cpu_features.h: ref (portable C++), avx2
// (vpmaddubsw + vpmaddwd), avxvnni (vpdpbusd on ymm; the AVX2 blocking instantiated with a VNNI
// op, exact for any u8 x s8 so it has no fast/exact split), avx512 (the AVX2 ops on zmm) and
// avx512vnni (vpdpbusd on zmm); both AVX-512 tiers read two panels as one zmm.
//
// Thread safety: packed weights are immutable after Pack and may be shared by any number of
// threads; every Ngemm* call is reentrant (no global state except the dispatch record, which
// is written once, and the testing override, which tests set before any call).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "runtime/platform/alternating_sweep.h"
#include "runtime/platform/cpu_features.h"

namespace nuphar {
class ThreadPool;
}  // namespace nuphar

namespace nuphar::ngemm {

// ------------------------------------------------------------------------------------------
// Packed weights
// ------------------------------------------------------------------------------------------

enum class WeightType : uint8_t { kInt8, kUint8, kInt16 };

/// A view over a caller-owned, 64-byte-aligned buffer that holds packed weights plus their
/// metadata. Build it with Pack(); it does not own memory.
class PackedInt8Weights {
 public:
  /// Bytes the caller must allocate (64-byte aligned) for Pack(). Includes column sums.
  /// Returns 0 for unsupported sizes (K or N <= 0).
  static size_t RequiredBytes(int64_t K, int64_t N, WeightType type = WeightType::kInt8);

  /// Packs B (K x N, row stride ldb elements). `buffer` must hold RequiredBytes(K, N, type) bytes
  /// and be 64-byte aligned. uint8 weights are stored re-centred (b - 128) with offset 128
  /// recorded, so the kernels only ever see int8. Returns false on a bad argument.
  static bool Pack(const int8_t* B, int64_t K, int64_t N, int64_t ldb, void* buffer,
                   PackedInt8Weights* out);
  static bool Pack(const uint8_t* B, int64_t K, int64_t N, int64_t ldb, void* buffer,
                   PackedInt8Weights* out);
  /// int16 weights for MatMulInteger16 (layout [N/32][K/2][4][8][2]).
  static bool Pack(const int16_t* B, int64_t K, int64_t N, int64_t ldb, void* buffer,
                   PackedInt8Weights* out);

  int64_t K() const { return k_; }
  int64_t N() const { return n_; }
  int64_t KPadded() const { return k_pad_; }     ///< K rounded up to the k-group (4 or 2)
  int64_t NPadded() const { return n_pad_; }     ///< N rounded up to 32
  WeightType type() const { return type_; }
  const uint8_t* data() const { return data_; }  ///< packed panels
  const int32_t* column_sums() const { return col_sums_; }  ///< of the stored (re-centred) values
  int32_t b_offset() const { return b_offset_; }  ///< 128 for uint8 weights, else 0
  /// True when every stored int8 weight is in [-64, 64]: the 7-bit fast path is exact for any A.
  bool weights_within_7bit() const { return within_7bit_; }
  /// Bytes between two consecutive 32-column blocks.
  int64_t block_stride() const { return block_stride_; }
  /// The order of the next GEMV (M = 1) sweep over the blocks (platform/alternating_sweep.h).
  const AlternatingSweep& gemv_sweep() const { return gemv_sweep_; }

 private:
  friend struct PackAccess;
  int64_t k_ = 0, n_ = 0, k_pad_ = 0, n_pad_ = 0, block_stride_ = 0;
  WeightType type_ = WeightType::kInt8;
  int32_t b_offset_ = 0;
  bool within_7bit_ = false;
  const uint8_t* data_ = nullptr;
  const int32_t* col_sums_ = nullptr;
  AlternatingSweep gemv_sweep_;
};

// ------------------------------------------------------------------------------------------
// Tiles and loop order (NUPHAR_IGEMM_TILE_M/_N/_K, NUPHAR_IGEMM_PERMUTE)
// ------------------------------------------------------------------------------------------

enum class NgemmPermute : uint8_t {
  kNone,   ///< M tiles outer, N tiles inner; inside a tile, column groups outer, rows inner
  kInner,  ///< inside a tile: rows outer, column groups inner
  kOuter,  ///< N tiles outermost
  kAll,    ///< both
};

/// Blocking of the GEMM path (M >= 2), plus the session's tier and threads. 0 means "default". The defaults (also in
/// docs/ngemm.md): m = 64 rows, n = 256 columns, k = whole K (C stays in registers for all K).
/// Guards (Nuphar's, R2) are applied per call by the driver: m = min(m, M); n rounded up to a
/// multiple of 8, then min(n, N_pad); k rounded up to a power of 2, clamped to [4, K_pad].
/// Tiles never change results, only speed.
struct NgemmTiles {
  int m = 0;
  int n = 0;
  int k = 0;
  NgemmPermute permute = NgemmPermute::kNone;
  // The session's other NGEMM settings travel with the blocking (session settings -> every
  // NGEMM call):
  /// ISA tier (nuphar_codegen_target); unset = the process tier.
  std::optional<IsaTier> tier;
  /// The session's workers and nuphar_parallel_min_workloads: a product is split across the
  /// pool only when its MACs per thread reach parallel_min_work (0 = never). Results are the
  /// same for any thread count.
  ThreadPool* pool = nullptr;
  int64_t parallel_min_work = 0;
};

/// Parses one tile value ("16", " 32 "). Empty -> 0 (default). Returns false and sets *error
/// for anything that is not an integer in [1, 1<<20].
bool ParseTileValue(const std::string& text, int* value, std::string* error);
/// Parses "none|inner|outer|all" (case-insensitive, empty = none).
bool ParsePermute(const std::string& text, NgemmPermute* permute, std::string* error);
/// Reads NUPHAR_IGEMM_TILE_M/_N/_K and NUPHAR_IGEMM_PERMUTE from the environment. On a bad
/// value returns false with a message naming the variable; *tiles keeps the defaults then.
bool TilesFromEnvironment(NgemmTiles* tiles, std::string* error);
const char* PermuteName(NgemmPermute permute);

// ------------------------------------------------------------------------------------------
// Products
// ------------------------------------------------------------------------------------------

enum class ActivationType : uint8_t { kUint8, kInt8 };

/// Optional inputs and facts of MatMulInteger. All pointers may be null.
struct NgemmParams {
  ActivationType a_type = ActivationType::kUint8;
  /// Caller's proof that every A value is in [0, 127] (the quantizer's Clip(0,127) pattern).
  /// Only then (or with weights_within_7bit) is the fast path taken. Ignored for int8 A.
  bool a_within_7bit = false;
  /// a_zero_point: one value (a_zero_point_per_row = false) or one per row of A.
  const int32_t* a_zero_point = nullptr;
  bool a_zero_point_per_row = false;
  /// b_zero_point: one value or one per column, in the caller's weight type (uint8 weights:
  /// 0..255; the re-centring offset is applied internally).
  const int32_t* b_zero_point = nullptr;
  bool b_zero_point_per_column = false;
  /// Blocking; 0 fields take the defaults.
  NgemmTiles tiles;
};

/// C[M, N] = (A - za) * (B - zb), A: u8 or s8 (params.a_type) [M, K] with row stride lda bytes;
/// B: packed int8/uint8 weights; C row stride ldc elements. M may be 0. A need not be padded.
void NgemmU8S8(const uint8_t* A, int64_t M, int64_t K, int64_t lda, const PackedInt8Weights& B,
               int32_t* C, int64_t ldc, const NgemmParams& params);

/// MatMulInteger16: C[M, N] = A * B, s16 x s16 -> s32 (modulo 2^32), B packed from int16.
void NgemmS16S16(const int16_t* A, int64_t M, int64_t K, int64_t lda, const PackedInt8Weights& B,
                 int32_t* C, int64_t ldc, const NgemmTiles& tiles = {});

/// Which mode a call with these facts would take ("fast", "exact", "s16"): lets tests prove
/// that adversarial inputs take the exact path.
enum class NgemmMode : uint8_t { kU8S8Fast, kU8S8Exact, kS16S16 };
NgemmMode ChooseNgemmMode(const PackedInt8Weights& B, const NgemmParams& params);
const char* ModeName(NgemmMode mode);

// ------------------------------------------------------------------------------------------
// Dispatch (R11): chosen once from CPUID; tests may force a path.
// ------------------------------------------------------------------------------------------

/// One tile of C for the GEMM path: rows x cols of C starting at (A row 0, column block of b),
/// over k_elems values of K starting where `a` and `b` point. A is read as 4-byte groups; the last
/// partial group is zero-extended (no read past k_elems). `b` points at the first k-group of
/// the tile inside the 32-column block that holds column 0 of the tile; `col_in_block` (0, 8,
/// 16 or 24) selects the panel. C is stored, or added to when accumulate is true.
struct NgemmTileArgs {
  const uint8_t* a = nullptr;
  int64_t lda_bytes = 0;
  int64_t rows = 0;
  int64_t k_elems = 0;
  const uint8_t* b = nullptr;
  int64_t block_stride = 0;
  int col_in_block = 0;
  int64_t cols = 0;
  int32_t* c = nullptr;
  int64_t ldc = 0;
  bool accumulate = false;
  bool rows_outer = false;   ///< permute inner|all
  uint8_t a_xor = 0;         ///< 0x80 re-centres int8 A into uint8
  NgemmMode mode = NgemmMode::kU8S8Fast;
};
using NgemmKernelFn = void (*)(const NgemmTileArgs& args);
/// One row: c[0, cols) = a[0, k_elems) * B, columns from 0 (whole K, C in registers).
using NgemmGemvFn = void (*)(const NgemmTileArgs& args);
using NgemmPackFn = void (*)(const void* B, WeightType type, int64_t K, int64_t N, int64_t ldb,
                             uint8_t* packed, int32_t* col_sums, bool* within_7bit);

struct NgemmDispatch {
  NgemmPackFn pack_b;
  NgemmKernelFn kernel;
  NgemmGemvFn gemv;
  int packed_k;   ///< k values per 4-byte group for int8 weights
  int stride_m;   ///< rows of the register block (MR)
  const char* name;
};

enum class NgemmPath : uint8_t { kAuto, kRef, kAvx2, kAvxVnni, kAvx512, kAvx512Vnni };

/// The implementation for a session's tier (nuphar_codegen_target), else the process tier
/// (runtime/platform: CPUID once, or NUPHAR_CODEGEN_TARGET); a path forced for testing wins.
const NgemmDispatch& GetNgemmDispatch(std::optional<IsaTier> session_tier = std::nullopt);
/// Forces a path (kAuto restores the tier's choice). Returns false, changing nothing, if the path
/// is not available on this CPU. Not thread-safe: call before starting work.
bool SetNgemmPathForTesting(NgemmPath path);
/// Whether this CPU can run a path (kAuto and kRef always).
bool NgemmPathAvailable(NgemmPath path);

}  // namespace nuphar::ngemm
