// Private value types of the shape inference driver and its op handlers.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "shape_infer/sym/sym_expr.h"

namespace nuphar::shape_infer {

/// A dim: a (possibly literal) expression, or unknown.
using SymDim = std::optional<sym::Expr>;
/// A shape of known rank.
using SymShape = std::vector<SymDim>;

/// A tracked value of a small tensor (spec §2.6 "sympy_data"): its elements as expressions,
/// row-major, with the tensor's dims ({} for a scalar). Float elements are exact rationals
/// (spec §4.6) and `is_float` remembers that they are not yet integers.
struct TrackedValue {
  std::vector<int64_t> dims;
  std::vector<sym::Expr> values;
  bool is_float = false;

  bool IsScalar() const { return dims.empty(); }
  bool AllLiteral() const {
    for (const auto& v : values)
      if (!v.IsNumber()) return false;
    return true;
  }
};

}  // namespace nuphar::shape_infer
