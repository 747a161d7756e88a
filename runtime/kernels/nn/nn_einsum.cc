// Einsum: a general (not fast) implementation. Handles implicit and explicit outputs, repeated
// labels within one operand (diagonals), ellipsis with numpy broadcasting, and any number of
// operands, by walking every combination of labels once.
#include <algorithm>
#include <array>
#include <cctype>
#include <string>
#include <vector>

#include "runtime/kernels/nn/nn_dtype.h"
#include "runtime/kernels/nn/nn_kernels.h"

namespace nuphar {
namespace {

// Labels: 'a'..'z', 'A'..'Z' map to 0..51; ellipsis dims get 52 + (position from the right).
constexpr int kLetterLabels = 52;
constexpr int kEllipsis = -1;  // marker inside a parsed term

int LabelOf(char c) { return std::islower(static_cast<unsigned char>(c)) ? c - 'a' : c - 'A' + 26; }

struct EinsumEquation {
  std::vector<std::vector<int>> inputs;  // labels per operand, kEllipsis where "..." was
  bool explicit_output = false;
  std::vector<int> output;  // when explicit
};

Expected<std::vector<int>> ParseTerm(const std::string& term) {
  std::vector<int> labels;
  bool seen_ellipsis = false;
  for (size_t i = 0; i < term.size(); ++i) {
    const char c = term[i];
    if (c == ' ') continue;
    if (c == '.') {
      if (seen_ellipsis || term.compare(i, 3, "...") != 0) return Diag::Msg("Einsum term '" + term + "' has a bad ellipsis");
      seen_ellipsis = true;
      labels.push_back(kEllipsis);
      i += 2;
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      labels.push_back(LabelOf(c));
    } else {
      return Diag::Msg("Einsum term '" + term + "' has an invalid character");
    }
  }
  return labels;
}

Expected<EinsumEquation> ParseEquation(const std::string& equation) {
  EinsumEquation eq;
  const size_t arrow = equation.find("->");
  const std::string lhs = equation.substr(0, arrow);
  size_t start = 0;
  while (true) {
    const size_t comma = lhs.find(',', start);
    NUPHAR_ASSIGN_OR_RETURN(auto term, ParseTerm(lhs.substr(start, comma == std::string::npos ? comma : comma - start)));
    eq.inputs.push_back(std::move(term));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (arrow != std::string::npos) {
    eq.explicit_output = true;
    NUPHAR_ASSIGN_OR_RETURN(eq.output, ParseTerm(equation.substr(arrow + 2)));
  }
  return eq;
}

class EinsumKernel final : public OpKernel {
 public:
  explicit EinsumKernel(EinsumEquation eq) : eq_(std::move(eq)) {}

  Status Compute(KernelContext& ctx) const override {
    const size_t n_in = eq_.inputs.size();
    if (ctx.num_inputs() != n_in) return Diag::Msg("Einsum equation and input count disagree");
    std::vector<const Tensor*> in(n_in);
    for (size_t i = 0; i < n_in; ++i) {
      in[i] = ctx.input(i);
      if (!in[i]) return Diag::Msg("Einsum input " + std::to_string(i) + " is missing");
      if (in[i]->dtype() != in[0]->dtype()) return Diag::Msg("Einsum inputs have different element types");
    }
    // Expand each operand's ellipsis into labels 52.. counted from the right (numpy alignment).
    int ellipsis_rank = 0;
    std::vector<std::vector<int>> labels(n_in);
    for (size_t i = 0; i < n_in; ++i) {
      const auto& term = eq_.inputs[i];
      const bool has_ellipsis = std::find(term.begin(), term.end(), kEllipsis) != term.end();
      const int64_t named = static_cast<int64_t>(term.size()) - (has_ellipsis ? 1 : 0);
      if (in[i]->rank() < named || (!has_ellipsis && in[i]->rank() != named))
        return Diag::Msg("Einsum operand " + std::to_string(i) + " rank " + std::to_string(in[i]->rank()) +
                         " does not match its term");
      const int e = static_cast<int>(in[i]->rank() - named);
      ellipsis_rank = std::max(ellipsis_rank, e);
      for (int l : term) {
        if (l != kEllipsis) {
          labels[i].push_back(l);
          continue;
        }
        for (int k = e - 1; k >= 0; --k) labels[i].push_back(kLetterLabels + k);
      }
    }
    // Label sizes; size-1 dims broadcast.
    constexpr int kMaxLabels = kLetterLabels + 16;
    if (ellipsis_rank > 16) return Diag::Msg("Einsum ellipsis covers too many dimensions");
    std::array<int64_t, kMaxLabels> size;
    size.fill(-1);
    std::array<int, kMaxLabels> count{};
    for (size_t i = 0; i < n_in; ++i) {
      for (size_t d = 0; d < labels[i].size(); ++d) {
        const int l = labels[i][d];
        const int64_t dim = in[i]->dim(static_cast<int64_t>(d));
        ++count[static_cast<size_t>(l)];
        int64_t& s = size[static_cast<size_t>(l)];
        if (s == -1 || s == 1) s = dim;
        else if (dim != s && dim != 1) return Diag::Msg("Einsum dimension sizes disagree for a label");
      }
    }
    // Output labels: explicit, or ellipsis dims then letters used exactly once, alphabetically.
    std::vector<int> out_labels;
    if (eq_.explicit_output) {
      for (int l : eq_.output) {
        if (l != kEllipsis) {
          if (size[static_cast<size_t>(l)] == -1) return Diag::Msg("Einsum output label does not appear in any input");
          out_labels.push_back(l);
        } else {
          for (int k = ellipsis_rank - 1; k >= 0; --k) out_labels.push_back(kLetterLabels + k);
        }
      }
    } else {
      for (int k = ellipsis_rank - 1; k >= 0; --k) out_labels.push_back(kLetterLabels + k);
      for (int c = 0; c < kLetterLabels; ++c) {
        const int l = c < 26 ? c + 26 : c - 26;  // numpy orders uppercase before lowercase
        if (count[static_cast<size_t>(l)] == 1) out_labels.push_back(l);
      }
    }
    // Loop order: output labels, then every other label (summed over).
    std::vector<int> loop = out_labels;
    for (int l = 0; l < kMaxLabels; ++l)
      if (size[static_cast<size_t>(l)] != -1 && std::find(loop.begin(), loop.end(), l) == loop.end()) loop.push_back(l);
    std::vector<int64_t> out_shape;
    for (int l : out_labels) out_shape.push_back(size[static_cast<size_t>(l)]);
    // Stride of each operand per loop label (repeated labels add up: a diagonal walk).
    std::vector<std::vector<int64_t>> strides(n_in, std::vector<int64_t>(loop.size(), 0));
    for (size_t i = 0; i < n_in; ++i) {
      int64_t stride = 1;
      for (int64_t d = in[i]->rank() - 1; d >= 0; --d) {
        const int l = labels[i][static_cast<size_t>(d)];
        const size_t pos = static_cast<size_t>(std::find(loop.begin(), loop.end(), l) - loop.begin());
        if (in[i]->dim(d) != 1) strides[i][pos] += stride;
        stride *= in[i]->dim(d);
      }
    }
    Tensor* y = ctx.Output(0, in[0]->dtype(), out_shape);
    return DispatchGemmTypes(in[0]->dtype(), [&]<class T>() {
      T* out = y->data<T>();
      const int64_t out_count = y->size();
      std::fill(out, out + out_count, T(0));
      int64_t total = 1;
      for (int l : loop) total *= size[static_cast<size_t>(l)];
      if (total == 0) return Status::OK();
      std::vector<int64_t> idx(loop.size(), 0), offset(n_in, 0);
      const size_t n_out = out_labels.size();
      int64_t out_index = 0;
      for (int64_t step = 0; step < total; ++step) {
        T prod = T(1);
        for (size_t i = 0; i < n_in; ++i) prod *= in[i]->data<T>()[offset[i]];
        out[out_index] += prod;
        // Odometer over the loop labels, innermost last.
        for (size_t k = loop.size(); k-- > 0;) {
          const int64_t extent = size[static_cast<size_t>(loop[k])];
          for (size_t i = 0; i < n_in; ++i) offset[i] += strides[i][k];
          if (++idx[k] < extent) break;
          for (size_t i = 0; i < n_in; ++i) offset[i] -= strides[i][k] * extent;
          idx[k] = 0;
        }
        // Output index is the row-major position of the output labels.
        out_index = 0;
        for (size_t k = 0; k < n_out; ++k) out_index = out_index * size[static_cast<size_t>(loop[k])] + idx[k];
      }
      return Status::OK();
    });
  }

 private:
  EinsumEquation eq_;
};

Expected<std::unique_ptr<OpKernel>> CreateEinsum(const NodeInfo& node) {
  if (!node.has_attr("equation")) return node.Error("Einsum needs the equation attribute");
  auto eq = ParseEquation(node.GetString("equation", ""));
  if (!eq) return node.Error(eq.diag().reason);
  if (eq->inputs.size() != node.num_inputs())
    return node.Error("Einsum equation has " + std::to_string(eq->inputs.size()) + " operands but the node has " +
                      std::to_string(node.num_inputs()) + " inputs");
  return MakeKernel<EinsumKernel>(std::move(*eq));
}

}  // namespace

void RegisterEinsumKernels(KernelRegistry& r) { r.Add("", "Einsum", CreateEinsum); }

}  // namespace nuphar
