// ReduceMax ReduceMin ReduceSum ReduceMean ReduceProd ReduceL1 ReduceL2 ReduceSumSquare
// ReduceLogSum ReduceLogSumExp over any set of axes, with keepdims and noop_with_empty_axes.
//
// Axes come from the `axes` attribute, or from input 1 for ReduceSum from opset 13 (and every
// Reduce op from opset 18). The loop reuses the broadcast machinery backwards: the reduced
// tensor with keepdims shape "broadcasts" to the input, so BroadcastPlan<1> gives, row by row
// over the input, the output offset and whether the row folds into one output (stride 0: a
// reduction along the innermost axes) or runs along the output (stride 1: outer axes).
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernels/reduction/reduction_common.h"

namespace nuphar::red {
namespace {

using ew::InSet;
using ew::VisitDType;

enum class ReduceKind { kMax, kMin, kSum, kMean, kProd, kL1, kL2, kSumSquare, kLogSum, kLogSumExp };

constexpr TypeSet kReduceTypes = ew::Bit(DType::kFloat) | ew::Bit(DType::kDouble) | ew::Bit(DType::kInt32) |
                                 ew::Bit(DType::kInt64) | ew::Bit(DType::kUint32) | ew::Bit(DType::kUint64) |
                                 ew::Bit(DType::kInt8) | ew::Bit(DType::kUint8);

template <ReduceKind K, class T>
constexpr T Identity() {
  if constexpr (K == ReduceKind::kMax) {
    return std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest();
  } else if constexpr (K == ReduceKind::kMin) {
    return std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max();
  } else if constexpr (K == ReduceKind::kProd) {
    return T(1);
  } else {
    return T(0);
  }
}

/// The per-element term folded into the accumulator (shift is the row max for LogSumExp).
template <ReduceKind K, class T>
inline T Term(T x, T shift) {
  if constexpr (K == ReduceKind::kL1) {
    if constexpr (std::is_unsigned_v<T>) return x;
    else return x < 0 ? static_cast<T>(-x) : x;
  } else if constexpr (K == ReduceKind::kL2 || K == ReduceKind::kSumSquare) {
    return static_cast<T>(x * x);
  } else if constexpr (K == ReduceKind::kLogSumExp) {
    return static_cast<T>(std::exp(static_cast<double>(x) - static_cast<double>(shift)));
  } else {
    return x;
  }
}

template <ReduceKind K, class T>
inline T Combine(T acc, T v) {
  if constexpr (K == ReduceKind::kMax) return v > acc ? v : acc;
  else if constexpr (K == ReduceKind::kMin) return v < acc ? v : acc;
  else if constexpr (K == ReduceKind::kProd) return static_cast<T>(acc * v);
  else return static_cast<T>(acc + v);
}

template <ReduceKind K, class T>
inline T Finish(T acc, int64_t count, T shift) {
  if constexpr (K == ReduceKind::kMean) {
    return count == 0 ? acc : static_cast<T>(acc / static_cast<T>(count));
  } else if constexpr (K == ReduceKind::kL2) {
    return static_cast<T>(std::sqrt(static_cast<double>(acc)));
  } else if constexpr (K == ReduceKind::kLogSum) {
    return static_cast<T>(std::log(static_cast<double>(acc)));
  } else if constexpr (K == ReduceKind::kLogSumExp) {
    return static_cast<T>(std::log(static_cast<double>(acc)) + static_cast<double>(shift));
  } else {
    return acc;
  }
}

/// y[out] = fold over the input elements that map to out. `shift` (per output, or null) is
/// passed to Term.
template <ReduceKind K, class T>
void FoldInto(const BroadcastPlan<1>& plan, const T* x, T* y, int64_t out_size, const T* shift) {
  for (int64_t o = 0; o < out_size; ++o) y[o] = Identity<K, T>();
  const int64_t s = plan.inner_stride(0);
  ForEachBroadcastRow(plan, [&](int64_t xo, const int64_t* in, int64_t n) {
    const T* px = x + xo;
    if (s == 0) {
      const T sh = shift ? shift[in[0]] : T(0);
      T acc = y[in[0]];
      for (int64_t i = 0; i < n; ++i) acc = Combine<K, T>(acc, Term<K, T>(px[i], sh));
      y[in[0]] = acc;
    } else {
      T* py = y + in[0];
      const T* psh = shift ? shift + in[0] : nullptr;
      for (int64_t i = 0; i < n; ++i) py[i] = Combine<K, T>(py[i], Term<K, T>(px[i], psh ? psh[i] : T(0)));
    }
  });
}

class ReduceKernel final : public OpKernel {
 public:
  ReduceKernel(ReduceKind kind, std::vector<int64_t> attr_axes, bool axes_from_input, bool keepdims, bool noop_empty)
      : kind_(kind), attr_axes_(std::move(attr_axes)), axes_from_input_(axes_from_input), keepdims_(keepdims),
        noop_empty_(noop_empty) {}

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input 0 is missing");
    const int64_t rank = x->rank();
    if (rank > static_cast<int64_t>(InlineShape::kCapacity)) return Diag::Msg("rank " + std::to_string(rank) + " is not supported");
    // Reduced axes as a bit mask (no allocation).
    uint64_t mask = 0;
    std::span<const int64_t> axes(attr_axes_);
    if (axes_from_input_) {
      const Tensor* a = ctx.input(1);
      axes = {};
      if (a) {
        if (a->dtype() != DType::kInt64) return Diag::Msg("axes must be int64");
        axes = a->span<int64_t>();
      }
    }
    if (axes.empty()) {
      if (noop_empty_) {
        ctx.SetOutputAlias(0, *x);
        return Status::OK();
      }
      mask = rank == 64 ? ~uint64_t{0} : (uint64_t{1} << rank) - 1;
    }
    for (int64_t axis : axes) {
      NUPHAR_ASSIGN_OR_RETURN(const int64_t a, NormalizeAxis(axis, rank));
      if (mask & (uint64_t{1} << a)) return Diag::Msg("axis " + std::to_string(axis) + " is listed twice");
      mask |= uint64_t{1} << a;
    }
    InlineShape kd_shape, out_shape;
    kd_shape.rank = static_cast<size_t>(rank);
    int64_t out_size = 1;
    for (int64_t d = 0; d < rank; ++d) {
      const bool reduced = mask & (uint64_t{1} << d);
      kd_shape.dims[d] = reduced ? 1 : x->dim(d);
      out_size *= kd_shape.dims[d];
      if (!reduced || keepdims_) out_shape.dims[out_shape.rank++] = kd_shape.dims[d];
    }
    const int64_t count = out_size == 0 ? 0 : x->size() / out_size;
    BroadcastPlan<1> plan;
    NUPHAR_RETURN_IF_ERROR(plan.Init({kd_shape.span()}, x->shape()));
    Tensor* y = ctx.Output(0, x->dtype(), out_shape.span());
    if (x->dtype() == DType::kBool && (kind_ == ReduceKind::kMax || kind_ == ReduceKind::kMin)) {
      // ReduceMax/Min-20 on bool: any/all, as max/min of the 0/1 bytes.
      Run<uint8_t>(plan, static_cast<const uint8_t*>(x->raw()), static_cast<uint8_t*>(y->raw()), out_size, count);
      return Status::OK();
    }
    return VisitDType<kReduceTypes>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      Run<T>(plan, x->data<T>(), y->data<T>(), out_size, count);
      return Status::OK();
    });
  }

 private:
  template <class T>
  void Run(const BroadcastPlan<1>& plan, const T* x, T* y, int64_t out_size, int64_t count) const {
    switch (kind_) {
      case ReduceKind::kMax: return Fold<ReduceKind::kMax>(plan, x, y, out_size, count);
      case ReduceKind::kMin: return Fold<ReduceKind::kMin>(plan, x, y, out_size, count);
      case ReduceKind::kSum: return Fold<ReduceKind::kSum>(plan, x, y, out_size, count);
      case ReduceKind::kMean: return Fold<ReduceKind::kMean>(plan, x, y, out_size, count);
      case ReduceKind::kProd: return Fold<ReduceKind::kProd>(plan, x, y, out_size, count);
      case ReduceKind::kL1: return Fold<ReduceKind::kL1>(plan, x, y, out_size, count);
      case ReduceKind::kL2: return Fold<ReduceKind::kL2>(plan, x, y, out_size, count);
      case ReduceKind::kSumSquare: return Fold<ReduceKind::kSumSquare>(plan, x, y, out_size, count);
      case ReduceKind::kLogSum: return Fold<ReduceKind::kLogSum>(plan, x, y, out_size, count);
      case ReduceKind::kLogSumExp: {
        // Shift by the max so exp cannot overflow: log(sum(exp(x - m))) + m. The max needs a
        // buffer the size of the output; this op is rare, so it is allocated here.
        std::vector<T> max(static_cast<size_t>(out_size));
        FoldInto<ReduceKind::kMax, T>(plan, x, max.data(), out_size, nullptr);
        for (T& m : max)
          if (!std::isfinite(static_cast<double>(m))) m = T(0);
        FoldInto<ReduceKind::kLogSumExp, T>(plan, x, y, out_size, max.data());
        for (int64_t o = 0; o < out_size; ++o) y[o] = Finish<ReduceKind::kLogSumExp, T>(y[o], count, max[o]);
        return;
      }
    }
  }

  template <ReduceKind K, class T>
  static void Fold(const BroadcastPlan<1>& plan, const T* x, T* y, int64_t out_size, int64_t count) {
    FoldInto<K, T>(plan, x, y, out_size, nullptr);
    if constexpr (K == ReduceKind::kMean || K == ReduceKind::kL2 || K == ReduceKind::kLogSum)
      for (int64_t o = 0; o < out_size; ++o) y[o] = Finish<K, T>(y[o], count, T(0));
  }

  ReduceKind kind_;
  std::vector<int64_t> attr_axes_;
  bool axes_from_input_;
  bool keepdims_;
  bool noop_empty_;
};

template <ReduceKind K>
Expected<std::unique_ptr<OpKernel>> CreateReduce(const NodeInfo& node) {
  // ReduceMax/Min-20 also take bool.
  const bool bool_ok = (K == ReduceKind::kMax || K == ReduceKind::kMin) && node.opset() >= 20;
  NUPHAR_RETURN_IF_ERROR(ew::CheckDeclaredType(node, 0, bool_ok ? kReduceTypes | ew::Bit(DType::kBool) : kReduceTypes));
  const bool axes_from_input = (K == ReduceKind::kSum && node.opset() >= 13) || node.opset() >= 18;
  if (axes_from_input && node.has_attr("axes"))
    return node.Error("the axes attribute is not allowed at opset " + std::to_string(node.opset()) + "; axes is an input");
  return MakeKernel<ReduceKernel>(K, node.GetInts("axes"), axes_from_input, node.GetInt("keepdims", 1) != 0,
                                  node.GetInt("noop_with_empty_axes", 0) != 0);
}

}  // namespace

void RegisterReduceKernels(KernelRegistry& r) {
  r.Add("", "ReduceMax", CreateReduce<ReduceKind::kMax>);
  r.Add("", "ReduceMin", CreateReduce<ReduceKind::kMin>);
  r.Add("", "ReduceSum", CreateReduce<ReduceKind::kSum>);
  r.Add("", "ReduceMean", CreateReduce<ReduceKind::kMean>);
  r.Add("", "ReduceProd", CreateReduce<ReduceKind::kProd>);
  r.Add("", "ReduceL1", CreateReduce<ReduceKind::kL1>);
  r.Add("", "ReduceL2", CreateReduce<ReduceKind::kL2>);
  r.Add("", "ReduceSumSquare", CreateReduce<ReduceKind::kSumSquare>);
  r.Add("", "ReduceLogSum", CreateReduce<ReduceKind::kLogSum>);
  r.Add("", "ReduceLogSumExp", CreateReduce<ReduceKind::kLogSumExp>);
}

}  // namespace nuphar::red
