// Softmax, LogSoftmax and Hardmax.
//
// Opset < 13 coerces the input to 2-D at `axis` (default 1): rows are the dims before the
// axis, and each row normalises over everything from the axis on. Opset >= 13 normalises
// along the single dim `axis` (default -1). Both are the [outer, n, inner] view of
// reduction_common.h (inner = 1 for the 2-D coercion).
#include <cmath>
#include <type_traits>

#include "runtime/kernels/reduction/reduction_common.h"
#include "runtime/kernels/math/vector_math.h"

namespace nuphar::red {
namespace {

constexpr TypeSet kSoftmaxTypes = ew::kFloatTypes;

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

/// One slice of n elements at stride `stride`.
template <SoftmaxKind K, class T>
void SoftmaxSlice(const T* x, T* y, int64_t n, int64_t stride) {
  using C = ew::ComputeT<T>;
  C max = ew::Load(x[0]);
  int64_t arg = 0;
  for (int64_t r = 1; r < n; ++r) {
    const C v = ew::Load(x[r * stride]);
    if (v > max) {
      max = v;
      arg = r;
    }
  }
  if constexpr (K == SoftmaxKind::kHardmax) {
    for (int64_t r = 0; r < n; ++r) ew::Store(y[r * stride], C(r == arg ? 1 : 0));
  } else if constexpr (K == SoftmaxKind::kSoftmax) {
    C sum = 0;
    for (int64_t r = 0; r < n; ++r) {
      const C e = std::exp(ew::Load(x[r * stride]) - max);
      ew::Store(y[r * stride], e);
      sum += e;
    }
    for (int64_t r = 0; r < n; ++r) ew::Store(y[r * stride], ew::Load(y[r * stride]) / sum);
  } else {
    C sum = 0;
    for (int64_t r = 0; r < n; ++r) sum += std::exp(ew::Load(x[r * stride]) - max);
    const C log_sum = std::log(sum);
    for (int64_t r = 0; r < n; ++r) ew::Store(y[r * stride], ew::Load(x[r * stride]) - max - log_sum);
  }
}

template <SoftmaxKind K>
class SoftmaxKernel final : public OpKernel {
 public:
  SoftmaxKernel(int64_t axis, bool coerce_2d) : axis_(axis), coerce_2d_(coerce_2d) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    // A scalar behaves as a 1-element vector.
    const int64_t rank = x->rank();
    AxisView v;
    if (rank > 0) {
      NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, rank));
      v = ViewAround(x->shape(), axis);
      if (coerce_2d_) {
        v.n *= v.inner;
        v.inner = 1;
      }
    }
    Tensor* y = ctx.Output(0, x->dtype(), x->shape());
    if (x->size() == 0) return Status::OK();
    return ew::VisitDType<kSoftmaxTypes>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* px = x->data<T>();
      T* py = y->data<T>();
      if constexpr (K == SoftmaxKind::kSoftmax && std::is_same_v<T, float>) {
        if (v.inner == 1) {  // contiguous rows: the vectorized row softmax
          const VectorMath& vm = GetVectorMath();
          for (int64_t o = 0; o < v.outer; ++o) vm.softmax_f32(px + o * v.n, py + o * v.n, v.n);
          return Status::OK();
        }
      }
      for (int64_t o = 0; o < v.outer; ++o)
        for (int64_t i = 0; i < v.inner; ++i) {
          const int64_t base = o * v.n * v.inner + i;
          SoftmaxSlice<K>(px + base, py + base, v.n, v.inner);
        }
      return Status::OK();
    });
  }

 private:
  int64_t axis_;
  bool coerce_2d_;
};

template <SoftmaxKind K>
Expected<std::unique_ptr<OpKernel>> CreateSoftmax(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(ew::CheckDeclaredType(node, 0, kSoftmaxTypes));
  const bool coerce_2d = node.opset() < 13;
  return MakeKernel<SoftmaxKernel<K>>(node.GetInt("axis", coerce_2d ? 1 : -1), coerce_2d);
}

}  // namespace

void RegisterSoftmaxKernels(KernelRegistry& r) {
  r.Add("", "Softmax", CreateSoftmax<SoftmaxKind::kSoftmax>);
  r.Add("", "LogSoftmax", CreateSoftmax<SoftmaxKind::kLogSoftmax>);
  r.Add("", "Hardmax", CreateSoftmax<SoftmaxKind::kHardmax>);
}

}  // namespace nuphar::red
