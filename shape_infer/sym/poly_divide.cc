// Exact division of polynomials for the symbolic algebra: the "factor, then cancel" step of Div.
//
// Why: Reshape's -1 is total / product(known dims). When both sides share a factor that is a
// sum, e.g. (96*D0*X + 96*D0) / (D0*X + D0), the canonical expanded form cannot cancel it
// term by term, and Div used to keep the divisor as a Paren atom, printing
// floor(96*D0*X/(D0*X + D0) + 96*D0/(D0*X + D0)) where sympy's cancel() gives 96.
//
// How: every atom (symbol, floor, Max, Paren, ...) is one variable. Both sides are multiplied
// by the monomial that clears their negative exponents (Laurent -> ordinary polynomials), the
// divisor's monomial content and its coefficient are factored out, and what remains is divided
// by the classical division algorithm under a graded lexicographic order. With a single
// divisor, the algorithm finds the quotient whenever the division is exact (the leading term of
// q*b is LT(q)*LT(b)), and stops at the first leading term it cannot divide otherwise.
// It cancels a sum factor only when the divisor's sum divides the dividend; a common factor of
// two sums that neither divides (gcd) is not searched for, and the result stays a Paren.
#include <algorithm>
#include <map>

#include "shape_infer/sym/sym_internal.h"

namespace nuphar::sym {
namespace {

// Upper bound on division steps: shapes have a handful of terms; a blow-up means "give up".
constexpr int kMaxSteps = 256;

int Degree(const Monomial& m) {
  int d = 0;
  for (const auto& [atom, exp] : m) d += exp;
  return d;
}

// Graded lexicographic order on monomials with non-negative exponents; multiplicative, so
// LT(q*b) = LT(q)*LT(b).
bool GrlexLess(const Monomial& a, const Monomial& b) {
  const int da = Degree(a), db = Degree(b);
  if (da != db) return da < db;
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) return false;  // a has an earlier atom
    if (i == a.size() || b[j].first < a[i].first) return true;
    if (a[i].second != b[j].second) return a[i].second < b[j].second;
    ++i, ++j;
  }
  return false;
}

// Per atom, the smallest exponent over all terms (atoms missing from a term count as 0).
std::map<AtomId, int> MinExponents(const Expr& e) {
  std::map<AtomId, int> lo;
  for (const auto& [mono, coeff] : e.terms())
    for (const auto& [atom, exp] : mono) lo.emplace(atom, exp);
  for (auto& [atom, m] : lo) {
    for (const auto& [mono, coeff] : e.terms()) {
      auto it = std::find_if(mono.begin(), mono.end(), [a = atom](const auto& p) { return p.first == a; });
      m = std::min(m, it == mono.end() ? 0 : it->second);
    }
  }
  return lo;
}

Expr MonomialExpr(const std::map<AtomId, int>& exps, int sign) {
  Monomial m;
  for (const auto& [atom, exp] : exps)
    if (exp != 0) m.emplace_back(atom, sign * exp);
  return Expr::FromTerms({{m, Rational(1)}});
}

// Divides monomial a by b when every exponent of b is <= that of a.
std::optional<Monomial> DivideMonomial(const Monomial& a, const Monomial& b) {
  Monomial out;
  size_t i = 0;
  for (const auto& [atom, exp] : b) {
    while (i < a.size() && a[i].first < atom) out.push_back(a[i++]);
    if (i == a.size() || a[i].first != atom || a[i].second < exp) return std::nullopt;
    if (a[i].second != exp) out.emplace_back(atom, a[i].second - exp);
    ++i;
  }
  while (i < a.size()) out.push_back(a[i++]);
  return out;
}

const Expr::Term& LeadingTerm(const Expr& e) {
  return *std::max_element(e.terms().begin(), e.terms().end(),
                           [](const Expr::Term& x, const Expr::Term& y) { return GrlexLess(x.first, y.first); });
}

// Quotient of a by b, both with non-negative exponents, when b divides a exactly.
std::optional<Expr> DividePolynomials(Expr a, const Expr& b) {
  const Expr::Term lb = LeadingTerm(b);
  Expr q;
  for (int step = 0; !a.terms().empty(); ++step) {
    if (step == kMaxSteps) return std::nullopt;
    const Expr::Term& la = LeadingTerm(a);
    auto m = DivideMonomial(la.first, lb.first);
    if (!m) return std::nullopt;
    Expr t = Expr::FromTerms({{*m, la.second / lb.second}});
    q = q + t;
    a = a - t * b;
  }
  return q;
}

}  // namespace

std::optional<Expr> ExactDivide(const Expr& a, const Expr& b) {
  if (b.terms().size() < 2 || a.terms().empty()) return std::nullopt;
  // Clear negative exponents: a' = a * Ma, b' = b * Mb with non-negative exponents, then take the
  // monomial content out of b' (b' = Cb * r), so a / b = (a' / r) * Mb / (Ma * Cb).
  const std::map<AtomId, int> lo_a = MinExponents(a);
  const std::map<AtomId, int> lo_b = MinExponents(b);
  std::map<AtomId, int> clear_a;
  for (const auto& [atom, m] : lo_a)
    if (m < 0) clear_a[atom] = -m;
  const Expr ma = MonomialExpr(clear_a, 1);
  // lo_b holds b's smallest exponent per atom; dividing by it both clears negative exponents
  // and removes the monomial content in one step.
  const Expr content = MonomialExpr(lo_b, 1);
  const Expr r = Div(b, content);  // a monomial divisor: exact, no recursion into this function
  const Rational lead = LeadingTerm(r).second;
  const Expr r_monic = r * Expr(Rational(1) / lead);
  auto q = DividePolynomials(a * ma, r_monic);
  if (!q) return std::nullopt;
  // a / b = (a*Ma / r_monic) / (Ma * content * lead)
  const Expr result = Div(Div(*q, ma), content * Expr(lead));
  // A Paren atom stands for its sum and only ever appears divided (exponent < 0). One that ends
  // with a positive exponent is multiplied back out, so the canonical form stays expanded:
  // (b + N) / ((b + N)/(s + 1)) is s + 1, not an opaque "(s + 1)" atom.
  Expr expanded;
  for (const auto& [mono, coeff] : result.terms()) {
    Monomial kept;
    Expr factor(coeff);
    for (const auto& [atom, exp] : mono) {
      const AtomInfo& info = GetAtom(atom);
      if (exp > 0 && info.kind == AtomKind::kParen) {
        for (int k = 0; k < exp; ++k) factor = factor * info.args[0];
      } else {
        kept.emplace_back(atom, exp);
      }
    }
    expanded = expanded + factor * Expr::FromTerms({{kept, Rational(1)}});
  }
  return expanded;
}

}  // namespace nuphar::sym
