// Shared helpers of the tensor kernel family: axis checks and the two copy loops
// (runtime/kernels/tensor/tensor_common.h).
#include "runtime/kernels/tensor/tensor_common.h"

#include <algorithm>

namespace nuphar::tensor_kernels {

Expected<int64_t> NormalizeAxis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    return Diag::Msg(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

int64_t DimProduct(std::span<const int64_t> dims, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t k = begin; k < end; ++k) p *= dims[k];
  return p;
}

SliceRange ResolveSliceAxis(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  if (dim == 0) return {};
  if (step > 0) {
    start = std::clamp(start, int64_t{0}, dim);
    end = std::clamp(end, int64_t{0}, dim);
    return {start, end > start ? (end - start - 1) / step + 1 : 0};
  }
  start = std::clamp(start, int64_t{0}, dim - 1);
  end = std::clamp(end, int64_t{-1}, dim - 1);
  return {start, start > end ? (start - end - 1) / -step + 1 : 0};
}

std::vector<int64_t> ContiguousStrides(std::span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t k = shape.size(); k-- > 1;) strides[k - 1] = strides[k] * shape[k];
  return strides;
}

bool TransposeKeepsOffsets(std::span<const int64_t> dims, std::span<const int64_t> perm) {
  int64_t last_moved = -1;
  for (int64_t p : perm) {
    if (dims[static_cast<size_t>(p)] == 1) continue;
    if (p < last_moved) return false;
    last_moved = p;
  }
  return true;
}

namespace {

// Per-dim scratch that lives on the stack up to kInline dims, so the copy loops, which run per
// node per step inside Scan bodies, do not allocate for ordinary ranks.
class DimScratch {
 public:
  explicit DimScratch(size_t capacity) {
    if (capacity > kInline) heap_.resize(capacity);
    data_ = capacity > kInline ? heap_.data() : inline_;
  }
  DimScratch(const DimScratch&) = delete;
  DimScratch& operator=(const DimScratch&) = delete;
  void push_back(int64_t v) { data_[size_++] = v; }
  void assign(size_t n, int64_t v) {
    std::fill(data_, data_ + n, v);
    size_ = n;
  }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  int64_t& back() { return data_[size_ - 1]; }
  int64_t& operator[](size_t i) { return data_[i]; }
  int64_t operator[](size_t i) const { return data_[i]; }

 private:
  static constexpr size_t kInline = 16;
  int64_t inline_[kInline];
  std::vector<int64_t> heap_;
  int64_t* data_;
  size_t size_ = 0;
};

// Advances the odometer `idx` over the first `outer` dims of `sizes`; false when done.
bool NextIndex(DimScratch& idx, const DimScratch& sizes, size_t outer) {
  for (size_t k = outer; k-- > 0;) {
    if (++idx[k] < sizes[k]) return true;
    idx[k] = 0;
  }
  return false;
}

template <class T>
void StridedCopyTyped(T* dst, const T* src, const DimScratch& sizes, const DimScratch& strides) {
  const size_t rank = sizes.size();
  const int64_t n = sizes[rank - 1];
  const int64_t s = strides[rank - 1];
  DimScratch idx(rank);
  idx.assign(rank - 1, 0);
  do {
    const T* row = src;
    for (size_t k = 0; k + 1 < rank; ++k) row += idx[k] * strides[k];
    if (s == 1) {
      std::memcpy(dst, row, static_cast<size_t>(n) * sizeof(T));
    } else {
      for (int64_t j = 0; j < n; ++j) dst[j] = row[j * s];
    }
    dst += n;
  } while (NextIndex(idx, sizes, rank - 1));
}

template <class T>
void IndexMapCopyTyped(T* dst, const T* src, std::span<const std::vector<int64_t>> maps, const T* fill) {
  const size_t rank = maps.size();
  const std::vector<int64_t>& inner = maps[rank - 1];
  const int64_t n = static_cast<int64_t>(inner.size());
  DimScratch sizes(rank), idx(rank);
  for (size_t k = 0; k < rank; ++k) sizes.push_back(static_cast<int64_t>(maps[k].size()));
  idx.assign(rank - 1, 0);
  do {
    int64_t base = 0;
    bool filled = false;
    for (size_t k = 0; k + 1 < rank; ++k) {
      const int64_t off = maps[k][static_cast<size_t>(idx[k])];
      if (off < 0) filled = true;
      base += off;
    }
    if (filled) {
      std::fill(dst, dst + n, *fill);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const int64_t off = inner[static_cast<size_t>(j)];
        dst[j] = off < 0 ? *fill : src[base + off];
      }
    }
    dst += n;
  } while (NextIndex(idx, sizes, rank - 1));
}

}  // namespace

void StridedCopy(void* dst, const void* src, std::span<const int64_t> shape, std::span<const int64_t> src_strides,
                 size_t elem_size) {
  // Drop unit dims and merge dims that are contiguous with their inner neighbour, so the
  // inner loop is as long as possible (a plain copy becomes one memcpy).
  DimScratch sizes(shape.size()), strides(shape.size());
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k] == 0) return;
    if (shape[k] == 1) continue;
    if (!sizes.empty() && strides.back() == src_strides[k] * shape[k]) {
      sizes.back() *= shape[k];
      strides.back() = src_strides[k];
      continue;
    }
    sizes.push_back(shape[k]);
    strides.push_back(src_strides[k]);
  }
  if (sizes.empty()) {
    std::memcpy(dst, src, elem_size);
    return;
  }
  VisitWidth(elem_size, [&](auto tag) {
    using T = decltype(tag);
    StridedCopyTyped(static_cast<T*>(dst), static_cast<const T*>(src), sizes, strides);
  });
}

void IndexMapCopy(void* dst, const void* src, std::span<const std::vector<int64_t>> maps, size_t elem_size,
                  const void* fill) {
  for (const auto& m : maps)
    if (m.empty()) return;
  if (maps.empty()) {
    std::memcpy(dst, src, elem_size);
    return;
  }
  VisitWidth(elem_size, [&](auto tag) {
    using T = decltype(tag);
    T fill_value{};
    if (fill) std::memcpy(&fill_value, fill, sizeof(T));
    IndexMapCopyTyped(static_cast<T*>(dst), static_cast<const T*>(src), maps, &fill_value);
  });
}

Status CheckMovableInput(const NodeInfo& node, size_t i) {
  const DType t = node.input_type(i);
  if (t == DType::kUndefined || IsNumeric(t)) return Status::OK();
  return node.Error(std::string("input ") + std::to_string(i) + " has type " + DTypeName(t) +
                    ", which is not supported");
}

Status CheckIndexInput(const NodeInfo& node, size_t i) {
  const DType t = node.input_type(i);
  if (t == DType::kUndefined || t == DType::kInt32 || t == DType::kInt64) return Status::OK();
  return node.Error(std::string("index input ") + std::to_string(i) + " has type " + DTypeName(t) +
                    "; int32 or int64 expected");
}

Status ResolveIndex(int64_t& index, int64_t dim) {
  if (index < -dim || index >= dim)
    return Diag::Msg("index " + std::to_string(index) + " is out of range for a dim of size " + std::to_string(dim));
  if (index < 0) index += dim;
  return Status::OK();
}

Status CheckIndexTensor(const Tensor& t, const char* what) {
  if (t.dtype() == DType::kInt32 || t.dtype() == DType::kInt64) return Status::OK();
  return Diag::Msg(std::string(what) + " has type " + DTypeName(t.dtype()) + "; int32 or int64 expected");
}

Expected<std::vector<int64_t>> InputAsInt64(const KernelContext& ctx, size_t i, const char* what) {
  const Tensor* t = ctx.input(i);
  if (!t) return Diag::Msg(std::string(what) + " input is missing");
  auto v = t->ToInt64Vector();
  if (!v) return Diag::Msg(std::string(what) + ": " + v.diag().reason);
  return v;
}

}  // namespace nuphar::tensor_kernels
