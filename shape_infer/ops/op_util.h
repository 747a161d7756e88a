// Small helpers shared by the op handler files.
#pragma once

#include <optional>
#include <vector>

#include "shape_infer/ops/node_context.h"

namespace nuphar::shape_infer {

inline bool FullyKnown(const SymShape& s) {
  for (const auto& d : s)
    if (!d) return false;
  return true;
}

/// Product of all dims (nullopt if any is unknown).
inline SymDim ShapeProduct(const SymShape& s, size_t begin = 0, size_t end = SIZE_MAX) {
  sym::Expr p(1);
  for (size_t i = begin; i < s.size() && i < end; ++i) {
    if (!s[i]) return std::nullopt;
    p = p * *s[i];
  }
  return p;
}

inline SymShape ToShape(const std::vector<sym::Expr>& v) { return SymShape(v.begin(), v.end()); }

inline TrackedValue VectorValue(std::vector<sym::Expr> v) {
  TrackedValue t;
  t.dims = {static_cast<int64_t>(v.size())};
  t.values = std::move(v);
  return t;
}

inline TrackedValue ScalarValue(sym::Expr e) {
  TrackedValue t;
  t.values = {std::move(e)};
  return t;
}

/// Copies input `in`'s tracked value to output `out`, with the output's literal dims when they
/// describe the same number of elements (Reshape/Squeeze/Unsqueeze/Cast/Identity).
void PassValue(NodeContext& ctx, size_t in = 0, size_t out = 0);

/// Output 0 = shape and type of input 0 (ScatterElements, CumSum, Round, the ms Gelu family...).
Status HandleSameAsInput0(NodeContext& ctx);

/// The int_max rule of Min/Max (spec §1): literals beyond ±int_max are "boundless".
bool IsBoundless(const sym::Expr& e, int64_t int_max);

}  // namespace nuphar::shape_infer
