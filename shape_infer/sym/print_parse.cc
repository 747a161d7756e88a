// Printing in sympy's StrPrinter format (spec §4.3) and parsing that format back (§4.4).
//
// # Why a sort key
// sympy orders sum terms by the exponent vectors over the "generators" (non-numeric bases)
// sorted by default_sort_key, and orders product factors and Max/Min arguments by the same
// key. SortKey below is a transcription of that key: nested tuples compared like Python
// tuples, (class_key, (nargs, args), exponent key, coefficient).
#include <algorithm>
#include <cctype>
#include <map>

#include "shape_infer/sym/sym_expr.h"
#include "shape_infer/sym/sym_internal.h"

namespace nuphar::sym {
namespace {

struct SortKey {
  enum Kind { kNum, kStr, kList } kind = kList;
  Rational num;
  std::string str;
  std::vector<SortKey> items;

  static SortKey Num(Rational r) { SortKey k; k.kind = kNum; k.num = r; return k; }
  static SortKey Str(std::string s) { SortKey k; k.kind = kStr; k.str = std::move(s); return k; }
  static SortKey List(std::vector<SortKey> items) { SortKey k; k.items = std::move(items); return k; }
};

int Compare(const SortKey& a, const SortKey& b) {
  if (a.kind != b.kind) return a.kind < b.kind ? -1 : 1;
  switch (a.kind) {
    case SortKey::kNum: return a.num < b.num ? -1 : (b.num < a.num ? 1 : 0);
    case SortKey::kStr: return a.str < b.str ? -1 : (b.str < a.str ? 1 : 0);
    case SortKey::kList:
      for (size_t i = 0; i < a.items.size() && i < b.items.size(); ++i)
        if (int c = Compare(a.items[i], b.items[i])) return c;
      return a.items.size() < b.items.size() ? -1 : (a.items.size() > b.items.size() ? 1 : 0);
  }
  return 0;
}

SortKey ClassKey(int a, int b, const char* name) {
  return SortKey::List({SortKey::Num(a), SortKey::Num(b), SortKey::Str(name)});
}

SortKey NumberKey(Rational r) {
  return SortKey::List({ClassKey(1, 0, "Number"), SortKey::List({SortKey::Num(0), SortKey::List({})}),
                        SortKey::List({}), SortKey::Num(r)});
}

SortKey ArgsKey(std::vector<SortKey> args) {
  int64_t n = static_cast<int64_t>(args.size());
  return SortKey::List({SortKey::Num(n), SortKey::List(std::move(args))});
}

SortKey ExprKey(const Expr& e);
std::vector<const Expr::Term*> OrderedTerms(const Expr& e);

// (class_key, args) of an atom used as a base.
std::pair<SortKey, SortKey> AtomClassAndArgs(AtomId id) {
  const AtomInfo& info = GetAtom(id);
  switch (info.kind) {
    case AtomKind::kSymbol:
      return {ClassKey(2, 0, "Symbol"), ArgsKey({SortKey::Str(info.name)})};
    case AtomKind::kParen: {
      std::vector<SortKey> terms;
      for (const Expr::Term* t : OrderedTerms(info.args[0])) terms.push_back(ExprKey(Expr::FromTerms({*t})));
      return {ClassKey(3, 1, "Add"), ArgsKey(std::move(terms))};
    }
    default: {
      const char* name = info.kind == AtomKind::kMod     ? "Mod"
                         : info.kind == AtomKind::kCeil  ? "ceiling"
                         : info.kind == AtomKind::kFloor ? "floor"
                         : info.kind == AtomKind::kMax   ? "Max"
                                                         : "Min";
      bool lattice = info.kind == AtomKind::kMax || info.kind == AtomKind::kMin;
      std::vector<SortKey> args;
      for (const Expr& a : info.args) args.push_back(ExprKey(a));
      if (lattice) std::sort(args.begin(), args.end(), [](const SortKey& x, const SortKey& y) { return Compare(x, y) < 0; });
      return {lattice ? ClassKey(5, 0, name) : ClassKey(4, 10000, name), ArgsKey(std::move(args))};
    }
  }
}

SortKey PowerKey(AtomId atom, int exp, Rational coeff) {
  auto [cls, args] = AtomClassAndArgs(atom);
  return SortKey::List({std::move(cls), std::move(args), NumberKey(exp), SortKey::Num(coeff)});
}

SortKey ExprKey(const Expr& e) {
  if (e.IsNumber()) return NumberKey(e.AsNumber());
  if (e.terms().size() == 1) {
    const auto& [mono, coeff] = e.terms()[0];
    if (mono.size() == 1) return PowerKey(mono[0].first, mono[0].second, coeff);
    std::vector<SortKey> factors;
    for (const auto& [atom, exp] : mono) factors.push_back(PowerKey(atom, exp, Rational(1)));
    std::sort(factors.begin(), factors.end(), [](const SortKey& x, const SortKey& y) { return Compare(x, y) < 0; });
    return SortKey::List({ClassKey(3, 0, "Mul"), ArgsKey(std::move(factors)), NumberKey(1), SortKey::Num(coeff)});
  }
  std::vector<SortKey> terms;
  for (const Expr::Term* t : OrderedTerms(e)) terms.push_back(ExprKey(Expr::FromTerms({*t})));
  return SortKey::List({ClassKey(3, 1, "Add"), ArgsKey(std::move(terms)), NumberKey(1), SortKey::Num(1)});
}

bool AtomKeyLess(AtomId a, AtomId b) { return Compare(PowerKey(a, 1, 1), PowerKey(b, 1, 1)) < 0; }

// sympy's Expr.as_ordered_terms(order=None), including its special case for
// Add(positive number, Mul(negative number, one factor)): "5 - s".
std::vector<const Expr::Term*> OrderedTerms(const Expr& e) {
  const auto& terms = e.terms();
  std::vector<const Expr::Term*> out;
  if (terms.size() == 2 && terms[0].first.empty() && terms[0].second.Sign() > 0 && terms[1].first.size() == 1 &&
      terms[1].second.Sign() < 0) {
    // Mul(c, x) with a negative c has exactly two args; -x is Mul(-1, x) as well.
    out = {&terms[0], &terms[1]};
    return out;
  }
  std::vector<AtomId> gens;
  for (const auto& [mono, coeff] : terms)
    for (const auto& [atom, exp] : mono)
      if (std::find(gens.begin(), gens.end(), atom) == gens.end()) gens.push_back(atom);
  std::sort(gens.begin(), gens.end(), AtomKeyLess);
  auto exponents = [&](const Expr::Term* t) {
    std::vector<int> v(gens.size(), 0);
    for (const auto& [atom, exp] : t->first)
      v[static_cast<size_t>(std::find(gens.begin(), gens.end(), atom) - gens.begin())] = exp;
    return v;
  };
  std::vector<std::pair<std::vector<int>, const Expr::Term*>> keyed;
  for (const auto& t : terms) keyed.emplace_back(exponents(&t), &t);
  std::sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) {
    if (x.first != y.first) return x.first > y.first;  // descending lexicographic exponents
    return x.second->second < y.second->second;
  });
  for (auto& k : keyed) out.push_back(k.second);
  return out;
}

std::string PrintAtom(AtomId id);

std::string PrintBase(AtomId id, bool in_product) {
  const AtomInfo& info = GetAtom(id);
  std::string s = PrintAtom(id);
  if (info.kind == AtomKind::kParen || (in_product && info.kind == AtomKind::kMod)) return "(" + s + ")";
  return s;
}

// One term c*M, printed as sympy's _print_Mul / _print_Pow would.
std::string PrintTerm(const Expr::Term& t) {
  const auto& [mono, coeff] = t;
  if (mono.empty()) return coeff.ToString();
  if (coeff == Rational(1) && mono.size() == 1) {
    auto [atom, exp] = mono[0];
    if (exp == 1) return PrintAtom(atom);
    if (exp == -1) return "1/" + PrintBase(atom, false);
    return PrintBase(atom, false) + "**" + (exp < 0 ? "(" + std::to_string(exp) + ")" : std::to_string(exp));
  }
  std::string sign = coeff.Sign() < 0 ? "-" : "";
  Rational c = coeff.Sign() < 0 ? -coeff : coeff;
  std::vector<std::pair<AtomId, int>> factors(mono.begin(), mono.end());
  std::sort(factors.begin(), factors.end(), [](const auto& x, const auto& y) { return AtomKeyLess(x.first, y.first); });
  // -x alone is printed through the Mul path but without product parentheses (sympy's -Mod(s, 3)).
  bool product = !(c == Rational(1) && factors.size() == 1);
  std::vector<std::string> num, den;
  if (c.num() != 1) num.push_back(std::to_string(c.num()));
  if (c.den() != 1) den.push_back(std::to_string(c.den()));
  for (const auto& [atom, exp] : factors) {
    std::string base = PrintBase(atom, product);
    if (exp > 0) num.push_back(exp == 1 ? base : base + "**" + std::to_string(exp));
    else den.push_back(exp == -1 ? base : base + "**" + std::to_string(-exp));
  }
  if (num.empty()) num.push_back("1");
  auto join = [](const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "*" : "") + v[i];
    return s;
  };
  std::string out = sign + join(num);
  if (den.size() == 1) out += "/" + den[0];
  else if (den.size() > 1) out += "/(" + join(den) + ")";
  return out;
}

std::string PrintSum(const Expr& e) {
  if (e.terms().empty()) return "0";
  std::string out;
  bool first = true;
  for (const Expr::Term* t : OrderedTerms(e)) {
    std::string s = PrintTerm(*t);
    bool neg = !s.empty() && s[0] == '-';
    if (first) out = s;
    else out += neg ? " - " + s.substr(1) : " + " + s;
    first = false;
  }
  return out;
}

std::string PrintAtom(AtomId id) {
  const AtomInfo& info = GetAtom(id);
  switch (info.kind) {
    case AtomKind::kSymbol: return info.name;
    case AtomKind::kParen: return PrintSum(info.args[0]);
    case AtomKind::kFloor: return "floor(" + PrintSum(info.args[0]) + ")";
    case AtomKind::kCeil: return "ceiling(" + PrintSum(info.args[0]) + ")";
    case AtomKind::kMod: return "Mod(" + PrintSum(info.args[0]) + ", " + PrintSum(info.args[1]) + ")";
    case AtomKind::kMax:
    case AtomKind::kMin: {
      std::vector<std::pair<SortKey, const Expr*>> args;
      for (const Expr& a : info.args) args.emplace_back(ExprKey(a), &a);
      std::sort(args.begin(), args.end(), [](const auto& x, const auto& y) { return Compare(x.first, y.first) < 0; });
      std::string s = info.kind == AtomKind::kMax ? "Max(" : "Min(";
      for (size_t i = 0; i < args.size(); ++i) s += (i ? ", " : "") + PrintSum(*args[i].second);
      return s + ")";
    }
  }
  return "?";
}

// ---- Parser: recursive descent over the printed grammar ----
class Parser {
 public:
  Parser(const std::string& text, const std::function<Expr(const std::string&)>& sym) : s_(text), sym_(sym) {}

  std::optional<Expr> Run() {
    auto e = ParseSum();
    SkipSpace();
    if (!e || pos_ != s_.size()) return std::nullopt;
    return e;
  }

 private:
  void SkipSpace() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }
  bool Eat(const char* tok) {
    SkipSpace();
    size_t n = std::char_traits<char>::length(tok);
    if (s_.compare(pos_, n, tok) != 0) return false;
    pos_ += n;
    return true;
  }
  std::optional<Expr> ParseSum() {
    auto acc = ParseProduct();
    if (!acc) return std::nullopt;
    while (true) {
      SkipSpace();
      if (pos_ >= s_.size() || (s_[pos_] != '+' && s_[pos_] != '-')) return acc;
      char op = s_[pos_++];
      auto rhs = ParseProduct();
      if (!rhs) return std::nullopt;
      acc = op == '+' ? *acc + *rhs : *acc - *rhs;
    }
  }
  std::optional<Expr> ParseProduct() {
    auto acc = ParseUnary();
    if (!acc) return std::nullopt;
    while (true) {
      SkipSpace();
      if (s_.compare(pos_, 2, "**") == 0 || pos_ >= s_.size() || (s_[pos_] != '*' && s_[pos_] != '/')) return acc;
      bool floordiv = s_.compare(pos_, 2, "//") == 0;
      char op = s_[pos_];
      pos_ += floordiv ? 2 : 1;
      auto rhs = ParseUnary();
      if (!rhs) return std::nullopt;
      if (op == '*') acc = *acc * *rhs;
      else if (rhs->IsNumber() && rhs->AsNumber().IsZero()) return std::nullopt;
      else acc = floordiv ? FloorDiv(*acc, *rhs) : Div(*acc, *rhs);
    }
  }
  std::optional<Expr> ParseUnary() {
    if (Eat("-")) {
      auto e = ParseUnary();
      if (!e) return std::nullopt;
      return -*e;
    }
    auto base = ParsePrimary();
    if (!base) return std::nullopt;
    if (Eat("**")) {
      auto exp = ParseUnary();
      if (!exp || !exp->AsInt() || *exp->AsInt() > 64 || *exp->AsInt() < -64) return std::nullopt;
      int64_t k = *exp->AsInt();
      Expr r(1);
      for (int64_t i = 0; i < (k < 0 ? -k : k); ++i) r = r * *base;
      return k < 0 ? Div(Expr(1), r) : r;
    }
    return base;
  }
  std::optional<Expr> ParsePrimary() {
    SkipSpace();
    if (pos_ >= s_.size()) return std::nullopt;
    if (s_[pos_] == '(') {
      ++pos_;
      auto e = ParseSum();
      if (!e || !Eat(")")) return std::nullopt;
      return e;
    }
    if (std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      int64_t v = 0;
      while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
        if (v > (INT64_MAX - 9) / 10) return std::nullopt;
        v = v * 10 + (s_[pos_++] - '0');
      }
      return Expr(v);
    }
    size_t start = pos_;
    while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) || s_[pos_] == '_')) ++pos_;
    if (start == pos_) return std::nullopt;
    std::string name = s_.substr(start, pos_ - start);
    if (pos_ < s_.size() && s_[pos_] == '(') {
      ++pos_;
      std::vector<Expr> args;
      do {
        auto a = ParseSum();
        if (!a) return std::nullopt;
        args.push_back(std::move(*a));
      } while (Eat(","));
      if (!Eat(")")) return std::nullopt;
      if (name == "floor" && args.size() == 1) return Floor(args[0]);
      if (name == "ceiling" && args.size() == 1) return Ceil(args[0]);
      if (name == "Max" && !args.empty()) return Max(std::move(args));
      if (name == "Min" && !args.empty()) return Min(std::move(args));
      if (name == "Mod" && args.size() == 2) return Mod(args[0], args[1]);
      return std::nullopt;
    }
    return sym_(name);
  }

  const std::string& s_;
  const std::function<Expr(const std::string&)>& sym_;
  size_t pos_ = 0;
};

}  // namespace

std::string Expr::ToString() const { return PrintSum(*this); }

std::optional<Expr> Parse(const std::string& text, const std::function<Expr(const std::string&)>& symbol_for_name) {
  try {
    return Parser(text, symbol_for_name).Run();
  } catch (const SymOverflow&) {
    return std::nullopt;
  }
}

}  // namespace nuphar::sym
