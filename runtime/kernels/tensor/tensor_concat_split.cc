// Concat and Split: row copies along one axis (a row = the axis slice times the inner dims,
// contiguous in both the piece and the whole, so each is one memcpy).
#include <algorithm>

#include "graph/split_sizes.h"
#include "runtime/kernels/tensor/tensor_common.h"

namespace nuphar::tensor_kernels {
namespace {

class ConcatKernel final : public OpKernel {
 public:
  explicit ConcatKernel(int64_t axis) : axis_(axis) {}
  Status Compute(KernelContext& ctx) const override {
    const Tensor* first = ctx.input(0);
    if (!first) return Diag::Msg("input 0 is missing");
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, first->rank()));
    std::vector<int64_t> out_shape = first->shape();
    out_shape[static_cast<size_t>(axis)] = 0;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      if (!t) return Diag::Msg("input " + std::to_string(i) + " is missing");
      bool same = t->rank() == first->rank() && t->dtype() == first->dtype();
      for (int64_t k = 0; same && k < t->rank(); ++k) same = k == axis || t->dim(k) == first->dim(k);
      if (!same)
        return Diag::Msg("input " + std::to_string(i) + " " + DTypeName(t->dtype()) + ShapeToString(t->shape()) +
                         " does not match input 0 " + DTypeName(first->dtype()) + ShapeToString(first->shape()) +
                         " outside axis " + std::to_string(axis));
      out_shape[static_cast<size_t>(axis)] += t->dim(axis);
    }
    Tensor* y = ctx.Output(0, first->dtype(), out_shape);
    const size_t elem = DTypeSize(first->dtype());
    const int64_t outer = DimProduct(out_shape, 0, static_cast<size_t>(axis));
    const int64_t inner = DimProduct(out_shape, static_cast<size_t>(axis) + 1, out_shape.size());
    const size_t out_row = static_cast<size_t>(out_shape[static_cast<size_t>(axis)] * inner) * elem;
    auto* dst = static_cast<char*>(y->raw());
    size_t offset = 0;
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor* t = ctx.input(i);
      const size_t row = static_cast<size_t>(t->dim(axis) * inner) * elem;
      const auto* src = static_cast<const char*>(t->raw());
      if (row > 0)
        for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * out_row + offset, src + o * row, row);
      offset += row;
    }
    return Status::OK();
  }

 private:
  int64_t axis_;
};

// Split: sizes from the 'split' attribute (opset < 13) or input 1 (opset >= 13), else equal
// parts; with Split-18's num_outputs, parts of ceil(dim / num_outputs), the last one smaller.
class SplitKernel final : public OpKernel {
 public:
  SplitKernel(int64_t axis, std::vector<int64_t> attr_split, bool split_from_input, bool ceil_parts,
              std::vector<int64_t> load_time_sizes, bool sizes_known_at_load, int64_t num_outputs)
      : axis_(axis),
        attr_split_(std::move(attr_split)),
        split_from_input_(split_from_input),
        ceil_parts_(ceil_parts),
        load_time_sizes_(std::move(load_time_sizes)),
        num_outputs_(num_outputs) {
    if (sizes_known_at_load && !ceil_parts_) direct_ = {&CallDirect, this, &NoScratch, &AcceptsDirect};
  }

  /// A float split of the last axis whose sizes are known at load (attribute, constant input, or
  /// equal parts): row copies, the same bytes Compute writes (a GRU step's gate split).
  const DirectCall* direct_call() const override { return direct_.fn ? &direct_ : nullptr; }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* x = ctx.input(0);
    if (!x) return Diag::Msg("input is missing");
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, x->rank()));
    const int64_t dim = x->dim(axis);
    const int64_t parts = static_cast<int64_t>(ctx.num_outputs());
    std::vector<int64_t> split = attr_split_;
    if (split_from_input_ && ctx.input(1)) {
      NUPHAR_ASSIGN_OR_RETURN(split, InputAsInt64(ctx, 1, "split"));
    }
    if (split.empty() && ceil_parts_) {
      const int64_t chunk = (dim + parts - 1) / parts;
      for (int64_t i = 0, left = dim; i < parts; ++i, left -= chunk) split.push_back(std::clamp<int64_t>(left, 0, chunk));
    }
    if (split.empty()) {
      if (dim % parts != 0)
        return Diag::Msg("axis " + std::to_string(axis) + " of " + ShapeToString(x->shape()) +
                         " does not split into " + std::to_string(parts) + " equal parts");
      split.assign(static_cast<size_t>(parts), dim / parts);
    }
    int64_t total = 0;
    for (int64_t s : split) total += s < 0 ? -1 : s;
    if (static_cast<int64_t>(split.size()) != parts || total != dim)
      return Diag::Msg("split " + ShapeToString(split) + " does not divide axis " + std::to_string(axis) + " of " +
                       ShapeToString(x->shape()) + " into " + std::to_string(parts) + " outputs");
    const size_t elem = DTypeSize(x->dtype());
    const int64_t outer = DimProduct(x->shape(), 0, static_cast<size_t>(axis));
    const int64_t inner = DimProduct(x->shape(), static_cast<size_t>(axis) + 1, x->shape().size());
    const size_t in_row = static_cast<size_t>(dim * inner) * elem;
    const auto* src = static_cast<const char*>(x->raw());
    std::vector<int64_t> shape = x->shape();
    size_t offset = 0;
    for (size_t i = 0; i < split.size(); ++i) {
      const size_t row = static_cast<size_t>(split[i] * inner) * elem;
      if (ctx.output_needed(i)) {
        shape[static_cast<size_t>(axis)] = split[i];
        Tensor* y = ctx.Output(i, x->dtype(), shape);
        auto* dst = static_cast<char*>(y->raw());
        if (row > 0)
          for (int64_t o = 0; o < outer; ++o) std::memcpy(dst + o * row, src + o * in_row + offset, row);
      }
      offset += row;
    }
    return Status::OK();
  }

 private:
  static bool AcceptsDirect(const void* state, const Tensor* const* inputs, size_t num_inputs) {
    const auto* k = static_cast<const SplitKernel*>(state);
    const Tensor* x = num_inputs > 0 ? inputs[0] : nullptr;
    if (!x || x->dtype() != DType::kFloat || x->rank() < 1) return false;
    if (k->axis_ != -1 && k->axis_ != x->rank() - 1) return false;
    const int64_t last = x->shape().back();
    if (k->load_time_sizes_.empty()) return k->num_outputs_ > 0 && last % k->num_outputs_ == 0;
    int64_t total = 0;
    for (int64_t v : k->load_time_sizes_) total += v;
    return total == last && static_cast<int64_t>(k->load_time_sizes_.size()) == k->num_outputs_;
  }
  static void CallDirect(const void* state, const float* const* inputs, const int64_t* input_sizes,
                         float* const* outputs, int64_t rows, void*) {
    const auto* k = static_cast<const SplitKernel*>(state);
    const int64_t last = rows == 0 ? 0 : input_sizes[0] / rows;
    int64_t offset = 0;
    for (int64_t o = 0; o < k->num_outputs_; ++o) {
      const int64_t size = k->load_time_sizes_.empty() ? last / k->num_outputs_ : k->load_time_sizes_[static_cast<size_t>(o)];
      if (outputs[o] != nullptr)
        for (int64_t r = 0; r < rows; ++r)
          std::memcpy(outputs[o] + r * size, inputs[0] + r * last + offset, static_cast<size_t>(size) * sizeof(float));
      offset += size;
    }
  }
  static size_t NoScratch(const void*, int64_t) { return 0; }

  int64_t axis_;
  std::vector<int64_t> attr_split_;
  bool split_from_input_;
  bool ceil_parts_;
  std::vector<int64_t> load_time_sizes_;  ///< empty: equal parts
  int64_t num_outputs_;
  DirectCall direct_;
};

Expected<std::unique_ptr<OpKernel>> CreateConcat(const NodeInfo& node) {
  for (size_t i = 0; i < node.num_inputs(); ++i) NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, i));
  if (node.opset() >= 4 && !node.has_attr("axis")) return node.Error("attribute 'axis' is missing");
  return MakeKernel<ConcatKernel>(node.GetInt("axis", 1));
}

Expected<std::unique_ptr<OpKernel>> CreateSplit(const NodeInfo& node) {
  NUPHAR_RETURN_IF_ERROR(CheckMovableInput(node, 0));
  const bool has_num_outputs = node.has_attr("num_outputs");
  if (has_num_outputs) {
    if (node.opset() < 18) return node.Error("attribute 'num_outputs' exists from Split-18; the model imports opset " + std::to_string(node.opset()));
    if (node.has_input(1)) return node.Error("both the 'split' input and the 'num_outputs' attribute are given");
    const int64_t n = node.GetInt("num_outputs", 0);
    if (n != static_cast<int64_t>(node.num_outputs()))
      return node.Error("num_outputs is " + std::to_string(n) + " but the node has " + std::to_string(node.num_outputs()) + " outputs");
  }
  // Split-1 also accepted the sizes as input 1; from opset 13 that is the only form.
  const bool from_input = SplitSizesFromInput(node.opset(), node.has_attr("split"));
  // Sizes known at load time (for direct calls from generated loops): the attribute, a constant
  // input, or none (equal parts).
  std::vector<int64_t> sizes = from_input ? std::vector<int64_t>{} : node.GetInts("split");
  bool known = true;
  if (from_input && node.has_input(1)) {
    const Tensor* c = node.constant_input(1);
    known = c != nullptr && c->dtype() == DType::kInt64;
    if (known) sizes.assign(c->data<int64_t>(), c->data<int64_t>() + c->size());
  }
  return MakeKernel<SplitKernel>(node.GetInt("axis", 0), node.GetInts("split"), from_input, has_num_outputs,
                                 std::move(sizes), known, static_cast<int64_t>(node.num_outputs()));
}

}  // namespace

void RegisterConcatSplitKernels(KernelRegistry& r) {
  r.Add("", "Concat", CreateConcat);
  r.Add("", "Split", CreateSplit);
}

}  // namespace nuphar::tensor_kernels
