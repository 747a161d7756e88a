// TopK: the k largest (or smallest) elements along an axis, with their int64 indices.
// k is an attribute before opset 10 and a 1-element input from 10 on; `largest` and `sorted`
// come with opset 11. Equal values are ordered by lower index first, as ONNX specifies; the
// output is always sorted (sorted=0 leaves the order unspecified, so sorted order is valid).
#include <algorithm>
#include <vector>

#include "runtime/kernels/reduction/reduction_common.h"

namespace nuphar::red {
namespace {

constexpr TypeSet kTopKTypes = ew::kNumericTypes;

template <class T>
void TopKLoop(const T* x, T* values, int64_t* indices, const AxisView& v, int64_t k, bool largest) {
  using C = ew::ComputeT<T>;
  std::vector<std::pair<C, int64_t>> slice(static_cast<size_t>(v.n));
  auto before = [largest](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
    if (a.first != b.first) return largest ? a.first > b.first : a.first < b.first;
    return a.second < b.second;
  };
  for (int64_t o = 0; o < v.outer; ++o) {
    for (int64_t i = 0; i < v.inner; ++i) {
      const T* base = x + o * v.n * v.inner + i;
      for (int64_t r = 0; r < v.n; ++r) slice[static_cast<size_t>(r)] = {ew::Load(base[r * v.inner]), r};
      std::partial_sort(slice.begin(), slice.begin() + k, slice.end(), before);
      const int64_t out_base = o * k * v.inner + i;
      for (int64_t j = 0; j < k; ++j) {
        ew::Store(values[out_base + j * v.inner], slice[static_cast<size_t>(j)].first);
        indices[out_base + j * v.inner] = slice[static_cast<size_t>(j)].second;
      }
    }
  }
}

class TopKKernel final : public OpKernel {
 public:
  TopKKernel(int64_t attr_k, int64_t axis, bool largest) : attr_k_(attr_k), axis_(axis), largest_(largest) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    int64_t k = attr_k_;
    if (k < 0) {  // k from input 1
      const Tensor* kt = ctx.input(1);
      if (!kt || kt->size() != 1 || kt->dtype() != DType::kInt64) return Diag::Msg("K must be a 1-element int64 tensor");
      k = kt->data<int64_t>()[0];
    }
    if (x->rank() > static_cast<int64_t>(InlineShape::kCapacity)) return Diag::Msg("rank " + std::to_string(x->rank()) + " is not supported");
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, x->rank()));
    const AxisView v = ViewAround(x->shape(), axis);
    if (k < 0 || k > v.n)
      return Diag::Msg("k = " + std::to_string(k) + " is outside [0, " + std::to_string(v.n) + "] for axis " + std::to_string(axis));
    InlineShape out_shape;
    out_shape.rank = static_cast<size_t>(x->rank());
    for (int64_t d = 0; d < x->rank(); ++d) out_shape.dims[d] = d == axis ? k : x->dim(d);
    Tensor* values = ctx.Output(0, x->dtype(), out_shape.span());
    Tensor* indices = ctx.Output(1, DType::kInt64, out_shape.span());
    if (k == 0 || x->size() == 0) return Status::OK();
    return ew::VisitDType<kTopKTypes>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      TopKLoop(x->data<T>(), values->data<T>(), indices->data<int64_t>(), v, k, largest_);
      return Status::OK();
    });
  }

 private:
  int64_t attr_k_;  ///< -1: k comes from input 1
  int64_t axis_;
  bool largest_;
};

Expected<std::unique_ptr<OpKernel>> CreateTopK(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(ew::CheckDeclaredType(node, 0, kTopKTypes));
  int64_t k = -1;
  if (node.opset() < 10) {
    if (!node.has_attr("k")) return node.Error("attribute 'k' is required before opset 10");
    k = node.GetInt("k", 0);
    if (k < 0) return node.Error("k must not be negative");
  } else if (!node.has_input(1)) {
    return node.Error("input K is required from opset 10");
  }
  return MakeKernel<TopKKernel>(k, node.GetInt("axis", -1), node.GetInt("largest", 1) != 0);
}

}  // namespace

void RegisterTopKKernel(KernelRegistry& r) { r.Add("", "TopK", CreateTopK); }

}  // namespace nuphar::red
