// Symbols and merges shared by every graph of one model (spec §2.1 symbolic_dims_,
// suggested_merge_, §2.7 merging, S2 deterministic merge targets).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "shape_infer/sym/sym_expr.h"

namespace nuphar::shape_infer {

class SymbolTable {
 public:
  /// The expression a dim_param string stands for. Registered strings map to their expression;
  /// an unregistered "unk__N" (ONNX's placeholder, S3) is unknown; anything else is parsed
  /// (unknown identifiers become non-negative symbols) and registered.
  std::optional<sym::Expr> Lookup(const std::string& text);
  /// Lookup for a graph-input dim_param: identifiers not seen before become input symbols.
  sym::Expr LookupInput(const std::string& text, bool nonnegative);
  /// A graph-input symbol (positive unless `nonnegative`, e.g. Loop state). Records input order.
  sym::Expr InputSymbol(const std::string& name, bool nonnegative = false);
  /// A fresh node-output symbol (non-negative), or its merge target when one was recorded.
  sym::Expr FreshSymbol(const std::string& name);
  /// Remembers text -> expr so that the printed dim maps back to the same expression.
  void Register(const std::string& text, const sym::Expr& e);

  /// Maps every symbol that has a merge target to that target.
  sym::Expr ApplyMerges(const sym::Expr& e) const;
  /// Records that all `dims` are equal (spec §2.7). Returns false when nothing new was recorded
  /// or two different literals conflict (`conflict` set).
  bool SuggestMerge(const std::vector<sym::Expr>& dims, bool* conflict = nullptr);
  std::optional<sym::Expr> MergeTarget(const std::string& symbol_name) const;
  bool HasMerges() const { return !merges_.empty(); }

  /// Called at the start of every pass: graph-input order is recomputed.
  void BeginPass() { input_order_.clear(); }
  size_t NumSymbols() const { return creation_order_.size(); }

 private:
  int64_t Rank(const sym::Expr& e) const;

  std::unordered_map<std::string, sym::Expr> dims_;
  std::unordered_map<std::string, int64_t> creation_order_;  ///< symbol name -> creation index
  std::unordered_map<std::string, int64_t> input_order_;     ///< graph-input symbol -> position
  std::map<std::string, sym::Expr> merges_;                  ///< symbol name -> target
};

}  // namespace nuphar::shape_infer
