// Symbol registry and deterministic merge bookkeeping (spec §2.7, S2).
#include "shape_infer/symbol_table.h"

#include <algorithm>

namespace nuphar::shape_infer {

std::optional<sym::Expr> SymbolTable::Lookup(const std::string& text) {
  auto it = dims_.find(text);
  if (it != dims_.end()) return it->second;
  if (text.rfind("unk__", 0) == 0) return std::nullopt;
  auto parsed = sym::Parse(text, [this](const std::string& name) {
    auto found = dims_.find(name);
    if (found != dims_.end()) return found->second;
    return FreshSymbol(name);
  });
  sym::Expr e = parsed ? *parsed : FreshSymbol(text);  // not in the grammar: an opaque symbol
  dims_.emplace(text, e);
  return e;
}

sym::Expr SymbolTable::LookupInput(const std::string& text, bool nonnegative) {
  auto it = dims_.find(text);
  if (it != dims_.end()) {
    if (it->second.IsSymbol()) InputSymbol(text, nonnegative);  // records the input order
    return it->second;
  }
  auto parsed = sym::Parse(text, [&](const std::string& name) { return InputSymbol(name, nonnegative); });
  if (parsed && !parsed->IsSymbol()) {
    dims_.emplace(text, *parsed);
    return *parsed;
  }
  return InputSymbol(text, nonnegative);
}

sym::Expr SymbolTable::InputSymbol(const std::string& name, bool nonnegative) {
  if (!input_order_.count(name)) input_order_.emplace(name, static_cast<int64_t>(input_order_.size()));
  auto it = dims_.find(name);
  if (it != dims_.end()) return it->second;
  sym::Expr e = sym::Expr::Symbol(name, !nonnegative);
  creation_order_.emplace(name, static_cast<int64_t>(creation_order_.size()));
  dims_.emplace(name, e);
  return e;
}

sym::Expr SymbolTable::FreshSymbol(const std::string& name) {
  if (auto target = MergeTarget(name)) return *target;
  auto it = dims_.find(name);
  if (it != dims_.end()) return it->second;
  sym::Expr e = sym::Expr::Symbol(name, false);
  creation_order_.emplace(name, static_cast<int64_t>(creation_order_.size()));
  dims_.emplace(name, e);
  return e;
}

void SymbolTable::Register(const std::string& text, const sym::Expr& e) { dims_.emplace(text, e); }

std::optional<sym::Expr> SymbolTable::MergeTarget(const std::string& symbol_name) const {
  auto it = merges_.find(symbol_name);
  if (it == merges_.end()) return std::nullopt;
  return it->second;
}

sym::Expr SymbolTable::ApplyMerges(const sym::Expr& e) const {
  if (merges_.empty() || e.IsNumber()) return e;
  return sym::Substitute(e, [this](sym::AtomId id) { return MergeTarget(sym::GetAtom(id).name); });
}

// Lower rank = preferred merge target: literal, graph-input symbol (input order), plain symbol
// (creation order), then expressions (shortest string, then lexicographic; ranked by caller).
int64_t SymbolTable::Rank(const sym::Expr& e) const {
  constexpr int64_t kBand = int64_t{1} << 40;
  if (e.IsNumber()) return 0;
  if (e.IsSymbol()) {
    const std::string& name = sym::GetAtom(*e.AsAtom()).name;
    auto in = input_order_.find(name);
    if (in != input_order_.end()) return kBand + in->second;
    auto cr = creation_order_.find(name);
    return 2 * kBand + (cr != creation_order_.end() ? cr->second : kBand - 1);
  }
  return 3 * kBand;
}

bool SymbolTable::SuggestMerge(const std::vector<sym::Expr>& dims, bool* conflict) {
  if (conflict) *conflict = false;
  std::vector<sym::Expr> items;
  for (const sym::Expr& d : dims) {
    sym::Expr m = ApplyMerges(d);
    if (std::find(items.begin(), items.end(), m) == items.end()) items.push_back(m);
  }
  if (items.size() <= 1) return false;
  size_t literals = std::count_if(items.begin(), items.end(), [](const sym::Expr& e) { return e.IsNumber(); });
  if (literals > 1) {
    if (conflict) *conflict = true;
    return false;
  }
  auto better = [this](const sym::Expr& a, const sym::Expr& b) {
    int64_t ra = Rank(a), rb = Rank(b);
    if (ra != rb) return ra < rb;
    std::string sa = a.ToString(), sb = b.ToString();
    if (sa.size() != sb.size()) return sa.size() < sb.size();
    return sa < sb;
  };
  sym::Expr target = *std::min_element(items.begin(), items.end(), better);
  bool recorded = false;
  for (const sym::Expr& item : items) {
    if (item == target || !item.IsSymbol()) continue;  // only symbols can be rewritten
    const std::string name = sym::GetAtom(*item.AsAtom()).name;
    merges_[name] = target;
    recorded = true;
    for (auto& [key, value] : merges_)  // redirect earlier entries that pointed at `item`
      if (value == item) value = target;
  }
  return recorded;
}

}  // namespace nuphar::shape_infer
