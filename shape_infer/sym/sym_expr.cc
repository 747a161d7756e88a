// Symbolic algebra core: the hash-consed atom table and polynomial arithmetic.
#include "shape_infer/sym/sym_expr.h"

#include <algorithm>
#include <deque>
#include <map>
#include <mutex>
#include <unordered_map>

#include "shape_infer/sym/sym_internal.h"

namespace nuphar::sym {
namespace {

// Process-wide, append-only: atoms are never freed, so AtomInfo references stay valid.
struct AtomTable {
  std::mutex mu;
  std::deque<AtomInfo> atoms;
  std::unordered_map<std::string, AtomId> by_key;
};

AtomTable& Table() {
  static AtomTable* table = new AtomTable();  // intentionally leaked: used during static teardown
  return *table;
}

void AppendExprKey(const Expr& e, std::string* key) {
  key->push_back('[');
  for (const auto& [mono, coeff] : e.terms()) {
    for (const auto& [atom, exp] : mono) {
      key->append(std::to_string(atom));
      key->push_back('^');
      key->append(std::to_string(exp));
      key->push_back(' ');
    }
    key->append(coeff.ToString());
    key->push_back(';');
  }
  key->push_back(']');
}

Monomial MulMonomials(const Monomial& a, const Monomial& b) {
  Monomial out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      out.push_back(a[i++]);
    } else if (i == a.size() || b[j].first < a[i].first) {
      out.push_back(b[j++]);
    } else {
      int e = a[i].second + b[j].second;
      if (e != 0) out.emplace_back(a[i].first, e);
      ++i, ++j;
    }
  }
  return out;
}

}  // namespace

AtomId InternAtom(AtomInfo info) {
  std::string key = std::to_string(static_cast<int>(info.kind)) + ":";
  if (info.kind == AtomKind::kSymbol) {
    key += info.name;
  } else {
    for (const Expr& a : info.args) AppendExprKey(a, &key);
  }
  AtomTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  auto it = t.by_key.find(key);
  if (it != t.by_key.end()) return it->second;
  AtomId id = static_cast<AtomId>(t.atoms.size());
  t.atoms.push_back(std::move(info));
  t.by_key.emplace(std::move(key), id);
  return id;
}

const AtomInfo& GetAtom(AtomId id) {
  AtomTable& t = Table();
  std::lock_guard<std::mutex> lock(t.mu);
  return t.atoms[static_cast<size_t>(id)];
}

Expr::Expr(Rational r) {
  if (!r.IsZero()) terms_.push_back({Monomial{}, r});
}

Expr Expr::Symbol(const std::string& name, bool positive) {
  AtomInfo info{AtomKind::kSymbol, name, positive, {}};
  return FromAtom(InternAtom(std::move(info)));
}

Expr Expr::FromAtom(AtomId atom, int exponent) {
  Expr e;
  if (exponent == 0) return Expr(1);
  e.terms_.push_back({Monomial{{atom, exponent}}, Rational(1)});
  return e;
}

Expr Expr::FromTerms(std::vector<Term> terms) {
  std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.first < b.first; });
  Expr e;
  for (auto& t : terms) {
    if (!e.terms_.empty() && e.terms_.back().first == t.first) {
      e.terms_.back().second = e.terms_.back().second + t.second;
      if (e.terms_.back().second.IsZero()) e.terms_.pop_back();
    } else if (!t.second.IsZero()) {
      e.terms_.push_back(std::move(t));
    }
  }
  return e;
}

Rational Expr::AsNumber() const { return terms_.empty() ? Rational(0) : terms_[0].second; }

std::optional<int64_t> Expr::AsInt() const {
  if (!IsNumber()) return std::nullopt;
  Rational r = AsNumber();
  if (!r.IsInteger()) return std::nullopt;
  return r.num();
}

std::optional<AtomId> Expr::AsAtom() const {
  if (terms_.size() != 1 || terms_[0].first.size() != 1 || terms_[0].first[0].second != 1 ||
      !(terms_[0].second == Rational(1)))
    return std::nullopt;
  return terms_[0].first[0].first;
}

bool Expr::IsSymbol() const {
  auto a = AsAtom();
  return a && GetAtom(*a).kind == AtomKind::kSymbol;
}

bool AtomIsIntegerValued(AtomId id) {
  const AtomInfo& info = GetAtom(id);
  switch (info.kind) {
    case AtomKind::kSymbol:
    case AtomKind::kFloor:
    case AtomKind::kCeil:
      return true;
    case AtomKind::kMax:
    case AtomKind::kMin:
    case AtomKind::kMod:
      return std::all_of(info.args.begin(), info.args.end(), [](const Expr& a) { return a.IsIntegerValued(); });
    case AtomKind::kParen:
      return false;
  }
  return false;
}

bool TermIsIntegerValued(const Expr::Term& t) {
  if (!t.second.IsInteger()) return false;
  for (const auto& [atom, exp] : t.first)
    if (exp < 0 || !AtomIsIntegerValued(atom)) return false;
  return true;
}

bool Expr::IsIntegerValued() const {
  return std::all_of(terms_.begin(), terms_.end(), TermIsIntegerValued);
}

Expr operator+(const Expr& a, const Expr& b) {
  Expr out;
  size_t i = 0, j = 0;
  const auto& x = a.terms_;
  const auto& y = b.terms_;
  out.terms_.reserve(x.size() + y.size());
  while (i < x.size() || j < y.size()) {
    if (j == y.size() || (i < x.size() && x[i].first < y[j].first)) {
      out.terms_.push_back(x[i++]);
    } else if (i == x.size() || y[j].first < x[i].first) {
      out.terms_.push_back(y[j++]);
    } else {
      Rational c = x[i].second + y[j].second;
      if (!c.IsZero()) out.terms_.push_back({x[i].first, c});
      ++i, ++j;
    }
  }
  return out;
}

Expr operator-(const Expr& a) {
  Expr out = a;
  for (auto& t : out.terms_) t.second = -t.second;
  return out;
}

Expr operator-(const Expr& a, const Expr& b) { return a + (-b); }

Expr operator*(const Expr& a, const Expr& b) {
  if (a.terms_.empty() || b.terms_.empty()) return Expr();
  std::vector<Expr::Term> terms;
  terms.reserve(a.terms_.size() * b.terms_.size());
  for (const auto& ta : a.terms_)
    for (const auto& tb : b.terms_) terms.push_back({MulMonomials(ta.first, tb.first), ta.second * tb.second});
  return Expr::FromTerms(std::move(terms));
}

bool operator<(const Expr& a, const Expr& b) {
  return std::lexicographical_compare(
      a.terms_.begin(), a.terms_.end(), b.terms_.begin(), b.terms_.end(), [](const Expr::Term& x, const Expr::Term& y) {
        if (x.first != y.first) return x.first < y.first;
        return x.second < y.second;
      });
}

Expr Div(const Expr& a, const Expr& b) {
  if (b.IsNumber()) return a * Expr(Rational(1) / b.AsNumber());
  if (b.terms().size() == 1) {
    const auto& [mono, coeff] = b.terms()[0];
    Monomial inv;
    for (const auto& [atom, exp] : mono) inv.emplace_back(atom, -exp);
    return a * Expr::FromTerms({{inv, Rational(1) / coeff}});
  }
  // Division by a sum: cancel it when it divides a exactly (poly_divide.cc); an overflow
  // while trying only means "not cancelled". Otherwise keep the sum as one factor (prints as
  // "a/(s + 1)").
  try {
    if (auto q = ExactDivide(a, b)) return *q;
  } catch (const SymOverflow&) {
  }
  AtomInfo info{AtomKind::kParen, "", false, {b}};
  return a * Expr::FromAtom(InternAtom(std::move(info)), -1);
}

Expr FloorDiv(const Expr& a, const Expr& b) { return Floor(Div(a, b)); }

Expr Substitute(const Expr& e, const std::function<std::optional<Expr>(AtomId)>& replace_symbol) {
  Expr out;
  for (const auto& [mono, coeff] : e.terms()) {
    Expr term(coeff);
    for (const auto& [atom, exp] : mono) {
      const AtomInfo& info = GetAtom(atom);
      Expr base;
      if (info.kind == AtomKind::kSymbol) {
        auto r = replace_symbol(atom);
        base = r ? *r : Expr::FromAtom(atom);
      } else {
        std::vector<Expr> args;
        for (const Expr& arg : info.args) args.push_back(Substitute(arg, replace_symbol));
        base = RebuildAtom(info.kind, std::move(args));
      }
      if (exp > 0) {
        for (int k = 0; k < exp; ++k) term = term * base;
      } else {
        for (int k = 0; k < -exp; ++k) term = Div(term, base);
      }
    }
    out = out + term;
  }
  return out;
}

namespace {
void CollectSymbols(const Expr& e, std::vector<AtomId>* out) {
  for (const auto& [mono, coeff] : e.terms()) {
    for (const auto& [atom, exp] : mono) {
      const AtomInfo& info = GetAtom(atom);
      if (info.kind == AtomKind::kSymbol) {
        if (std::find(out->begin(), out->end(), atom) == out->end()) out->push_back(atom);
      } else {
        for (const Expr& a : info.args) CollectSymbols(a, out);
      }
    }
  }
}
}  // namespace

std::vector<AtomId> SymbolsOf(const Expr& e) {
  std::vector<AtomId> out;
  CollectSymbols(e, &out);
  return out;
}

}  // namespace nuphar::sym
