// The symbolic integer algebra of shape inference (spec symbolic_shape_infer.md §4.4, S1).
//
// # Representation
// An Expr is a canonical Laurent polynomial with rational coefficients: a sorted list of
// (Monomial, Rational) terms, where a Monomial is a sorted list of (atom id, exponent != 0).
// Atoms are hash-consed in one process-wide table and are integer symbols (positive or
// non-negative) or the functions floor, ceiling, Max, Min, Mod, plus Paren (a sum used as a
// factor with a negative exponent, i.e. division by a sum). Because the form is canonical,
// structural equality is mathematical equality for this fragment: b*(s+1) == b*s + b.
//
// # What simplifies automatically (sympy's rules, §4.2 — and nothing more)
// - floor/ceiling pull out integer-valued terms and evaluate numbers; a non-integer constant
//   next to symbols stays inside: floor(s/2 + 1/2) stays, floor(-1/N) stays.
// - Max/Min flatten, drop duplicates, fold numbers and drop provably dominated arguments.
//
// # Determinism
// Atom ids depend on creation order, but nothing observable does: printing sorts by sympy's
// default_sort_key, and the canonical term order is only used for equality and hashing.
//
// Thread-safety: the atom table is guarded by a mutex; Exprs are immutable values.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "shape_infer/sym/rational.h"

namespace nuphar::sym {

using AtomId = int32_t;
using Monomial = std::vector<std::pair<AtomId, int>>;  ///< sorted by atom id, exponents != 0

enum class AtomKind { kSymbol, kMod, kCeil, kFloor, kMax, kMin, kParen };

class Expr {
 public:
  using Term = std::pair<Monomial, Rational>;

  Expr() = default;                              ///< zero
  Expr(int64_t v) : Expr(Rational(v)) {}         // NOLINT: literals convert implicitly
  Expr(int v) : Expr(Rational(v)) {}             // NOLINT
  Expr(Rational r);                              // NOLINT
  /// The integer symbol `name` (hash-consed by name; the first creation fixes its sign).
  static Expr Symbol(const std::string& name, bool positive);
  static Expr FromAtom(AtomId atom, int exponent = 1);
  static Expr FromTerms(std::vector<Term> terms);  ///< canonicalizes

  bool IsNumber() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].first.empty()); }
  Rational AsNumber() const;  ///< requires IsNumber()
  /// The value when the expression is an integer literal.
  std::optional<int64_t> AsInt() const;
  /// The atom when the expression is exactly one atom with coefficient 1 and exponent 1.
  std::optional<AtomId> AsAtom() const;
  bool IsSymbol() const;
  /// True when every term is an integer times integer-valued atoms with positive exponents.
  bool IsIntegerValued() const;
  const std::vector<Term>& terms() const { return terms_; }

  friend Expr operator+(const Expr& a, const Expr& b);
  friend Expr operator-(const Expr& a, const Expr& b);
  friend Expr operator-(const Expr& a);
  friend Expr operator*(const Expr& a, const Expr& b);
  friend bool operator==(const Expr& a, const Expr& b) { return a.terms_ == b.terms_; }
  friend bool operator!=(const Expr& a, const Expr& b) { return !(a == b); }
  /// A strict total order on canonical forms (for ordered containers; not sympy's order).
  friend bool operator<(const Expr& a, const Expr& b);

  /// sympy StrPrinter format (§4.3).
  std::string ToString() const;

 private:
  std::vector<Term> terms_;
};

struct AtomInfo {
  AtomKind kind;
  std::string name;        ///< symbols only
  bool positive = false;   ///< symbols only: >= 1 (graph inputs) vs >= 0 (computed)
  std::vector<Expr> args;  ///< function arguments; Paren holds the sum
};
const AtomInfo& GetAtom(AtomId id);

/// Exact division; a divisor that is a sum becomes a Paren atom with exponent -1.
Expr Div(const Expr& a, const Expr& b);
/// floor(a / b), sympy's `a // b`.
Expr FloorDiv(const Expr& a, const Expr& b);
Expr Floor(const Expr& e);
Expr Ceil(const Expr& e);
Expr Max(std::vector<Expr> args);
Expr Min(std::vector<Expr> args);
Expr Mod(const Expr& a, const Expr& b);

/// Replaces symbols (by atom id) and rebuilds functions through their simplifying constructors.
Expr Substitute(const Expr& e, const std::function<std::optional<Expr>(AtomId)>& replace_symbol);
/// Symbols occurring anywhere in `e` (in first-occurrence order of the canonical form).
std::vector<AtomId> SymbolsOf(const Expr& e);

// ---- Sign prover (interval bounds; §4.4) ----

enum class Truth { kTrue, kFalse, kUnknown };
/// Closed bounds; nullopt = unbounded on that side.
struct Interval {
  std::optional<Rational> lo, hi;
};
Interval Bounds(const Expr& e);
Truth IsNonNegative(const Expr& e);  ///< e >= 0
Truth IsPositive(const Expr& e);     ///< e > 0
inline Truth ProveLE(const Expr& a, const Expr& b) { return IsNonNegative(b - a); }
inline Truth ProveLT(const Expr& a, const Expr& b) { return IsPositive(b - a); }

// ---- Parser (§4.4): maps printed dim_param strings back to expressions ----

/// Parses sympy-printed text ("2*s + 1", "floor(b*s/2)", "Max(0, s - 1)"). Identifiers become
/// symbols through `symbol_for_name`. nullopt when the text is not in the printed grammar.
std::optional<Expr> Parse(const std::string& text, const std::function<Expr(const std::string&)>& symbol_for_name);

}  // namespace nuphar::sym
