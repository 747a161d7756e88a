// Shared helpers of the tensor (data movement and shape) kernel family.
//
// # Why dispatch on byte width
// Moving elements does not care whether four bytes hold a float or an int32, so every pure
// data-movement kernel (Transpose, Slice, Pad, Gather, ...) is instantiated once per element
// width (1, 2, 4, 8 bytes) instead of once per dtype. Only kernels that compute with values
// (Range, OneHot's depth, Scatter reductions, Resize, Trilu's zero, NonZero's test) visit
// the dtype itself.
//
// # The two copy primitives
// Most layout ops reduce to one of two loops over a contiguous output:
//  - StridedCopy: out[i0..in] = src[sum(ik * strides[k])] with arbitrary (also 0 or negative)
//    source strides: Transpose, Slice, Expand, DepthToSpace/SpaceToDepth.
//  - IndexMapCopy: out[i0..in] = src[sum(map_k[ik])] with a per-dim table of pre-scaled
//    source offsets, where a negative entry means "fill value": Pad, Tile, nearest Resize.
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "runtime/kernels/kernel.h"

namespace nuphar::tensor_kernels {

/// Registration of each file of the family (called from tensor_register.cc).
void RegisterShapeKernels(KernelRegistry& r);       // tensor_shape.cc
void RegisterLayoutKernels(KernelRegistry& r);      // tensor_layout.cc
void RegisterConcatSplitKernels(KernelRegistry& r); // tensor_concat_split.cc
void RegisterSlicePadKernels(KernelRegistry& r);    // tensor_slice_pad.cc
void RegisterGatherKernels(KernelRegistry& r);      // tensor_gather.cc
void RegisterScatterKernels(KernelRegistry& r);     // tensor_scatter.cc
void RegisterGenerateKernels(KernelRegistry& r);    // tensor_generate.cc
void RegisterResizeKernels(KernelRegistry& r);      // tensor_resize.cc

/// `axis` in [-rank, rank) mapped to [0, rank), or an error naming `what`.
Expected<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const char* what = "axis");

/// Product of dims[begin, end).
int64_t DimProduct(std::span<const int64_t> dims, size_t begin, size_t end);

/// One Slice axis as ONNX defines it: negative bounds count from the end, both are clamped by
/// the step's direction; `start` is the first index read, `count` the elements (0: empty).
/// Shared by the Slice kernel and the JIT's data-movement plan, which must agree exactly.
struct SliceRange {
  int64_t start = 0, count = 0;
};
SliceRange ResolveSliceAxis(int64_t start, int64_t end, int64_t step, int64_t dim);

/// Row-major element strides of `shape`.
std::vector<int64_t> ContiguousStrides(std::span<const int64_t> shape);

/// Whether Transpose(perm) of a tensor of `dims` keeps the order of the dims longer than 1: then
/// every element keeps its offset and the output is the input under another shape (an RNN's
/// [seq, 1, 1, H] output with its unit dims swapped), no data moves. `perm` is a permutation of
/// 0..dims.size()-1.
bool TransposeKeepsOffsets(std::span<const int64_t> dims, std::span<const int64_t> perm);

/// Copies into the contiguous `dst` of `shape`: dst[i] = src[sum(i_k * src_strides[k])].
/// Strides are in elements and may be 0 (broadcast) or negative (reversal).
void StridedCopy(void* dst, const void* src, std::span<const int64_t> shape,
                 std::span<const int64_t> src_strides, size_t elem_size);

/// Copies into the contiguous `dst` whose dim k has maps[k].size() entries:
/// dst[i] = src[sum(maps[k][i_k])] (offsets in elements), or `fill` (elem_size bytes) when
/// any maps[k][i_k] is negative. `fill` may be null when no entry is negative.
void IndexMapCopy(void* dst, const void* src, std::span<const std::vector<int64_t>> maps, size_t elem_size,
                  const void* fill);

/// Calls f(T{}) with T an unsigned integer of `width` bytes (1, 2, 4 or 8).
template <class F>
decltype(auto) VisitWidth(size_t width, F&& f) {
  switch (width) {
    case 1: return f(uint8_t{});
    case 2: return f(uint16_t{});
    case 4: return f(uint32_t{});
    default: return f(uint64_t{});
  }
}

/// Calls f(T{}) with the C++ type of a computable dtype; float16 is not visited (callers that
/// accept it convert explicitly). Returns an error Status for other dtypes.
template <class F>
Status VisitNumeric(DType t, F&& f) {
  switch (t) {
    case DType::kFloat: return f(float{});
    case DType::kDouble: return f(double{});
    case DType::kInt8: return f(int8_t{});
    case DType::kInt16: return f(int16_t{});
    case DType::kInt32: return f(int32_t{});
    case DType::kInt64: return f(int64_t{});
    case DType::kUint8: return f(uint8_t{});
    case DType::kUint16: return f(uint16_t{});
    case DType::kUint32: return f(uint32_t{});
    case DType::kUint64: return f(uint64_t{});
    case DType::kBool: return f(bool{});
    default: return Diag::Msg(std::string("element type ") + DTypeName(t) + " is not supported");
  }
}

/// Element i of an int32 or int64 index tensor.
inline int64_t LoadIndex(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i];
}

/// `index` checked against [-dim, dim) and made non-negative (Gather*, Scatter*).
Status ResolveIndex(int64_t& index, int64_t dim);

/// The element-wise index walk of GatherElements and ScatterElements: for each element i of
/// `indices` (same rank as the data), the offset in a contiguous data tensor of `data_shape` of
/// the element whose coordinate along `axis` is indices[i] and elsewhere is i's own coordinate.
/// Calls visit(i, offset) in order; stops at the first out-of-range index with its error.
template <class Visit>
Status ForEachAxisIndex(const Tensor& indices, const std::vector<int64_t>& data_shape, int64_t axis, Visit&& visit) {
  const size_t rank = data_shape.size();
  std::vector<int64_t> strides(rank, 1);
  for (size_t k = rank; k-- > 1;) strides[k - 1] = strides[k] * data_shape[k];
  std::vector<int64_t> coord(rank, 0);
  for (int64_t i = 0; i < indices.size(); ++i) {
    int64_t idx = LoadIndex(indices, i);
    NUPHAR_RETURN_IF_ERROR(ResolveIndex(idx, data_shape[static_cast<size_t>(axis)]));
    int64_t offset = 0;
    for (size_t k = 0; k < rank; ++k) offset += (static_cast<int64_t>(k) == axis ? idx : coord[k]) * strides[k];
    visit(i, offset);
    for (size_t k = rank; k-- > 0;) {  // odometer over the indices shape
      if (++coord[k] < indices.dim(static_cast<int64_t>(k))) break;
      coord[k] = 0;
    }
  }
  return Status::OK();
}

/// Load-time check that input `i` (when its type is known) is a fixed-size type the family
/// moves: anything numeric but string.
Status CheckMovableInput(const NodeInfo& node, size_t i);
/// Load-time check that input `i` (when its type is known) is int32 or int64.
Status CheckIndexInput(const NodeInfo& node, size_t i);
/// Run-time check that an index input holds int32 or int64.
Status CheckIndexTensor(const Tensor& t, const char* what);

/// The input `i` as int64 values, erroring when it is missing.
Expected<std::vector<int64_t>> InputAsInt64(const KernelContext& ctx, size_t i, const char* what);

/// n int64 values (dims, strides, per-dim flags) on the stack up to rank 16, on the heap beyond:
/// the shape and layout ops of speech models run every frame (Silero v3.1: 43 Transposes per
/// frame) and then allocate nothing per call. Uninitialized.
class DimsBuffer {
 public:
  explicit DimsBuffer(size_t n) : n_(n) {
    if (n > kInline) heap_.resize(n);
  }
  int64_t* data() { return n_ > kInline ? heap_.data() : inline_; }
  std::span<const int64_t> span() { return {data(), n_}; }

 private:
  static constexpr size_t kInline = 16;
  size_t n_;
  int64_t inline_[kInline];
  std::vector<int64_t> heap_;
};

}  // namespace nuphar::tensor_kernels
