// Simplifying constructors (floor, ceiling, Max, Min, Mod) and the interval sign prover.
//
// The constructors apply exactly sympy's automatic rules (spec §4.2); there is deliberately no
// bound-based evaluation of floor/ceiling (floor(-1/N) stays, see S1). Max/Min use the sign
// prover to drop dominated arguments; the prover is at least as strong as sympy's assumptions.
#include <algorithm>

#include "shape_infer/sym/sym_expr.h"
#include "shape_infer/sym/sym_internal.h"

namespace nuphar::sym {
namespace {

Expr FloorOrCeil(const Expr& e, AtomKind kind) {
  if (e.IsNumber()) {
    Rational r = e.AsNumber();
    return Expr(kind == AtomKind::kFloor ? r.Floor() : r.Ceil());
  }
  std::vector<Expr::Term> pulled, rest;
  for (const auto& t : e.terms()) (TermIsIntegerValued(t) ? pulled : rest).push_back(t);
  Expr out = Expr::FromTerms(std::move(pulled));
  Expr inner = Expr::FromTerms(std::move(rest));
  if (inner.IsNumber()) return out + FloorOrCeil(inner, kind);
  return out + Expr::FromAtom(InternAtom(AtomInfo{kind, "", false, {inner}}));
}

Expr MaxOrMin(AtomKind kind, std::vector<Expr> args) {
  const bool is_max = kind == AtomKind::kMax;
  std::vector<Expr> flat;
  std::optional<Rational> number;
  for (Expr& a : args) {
    auto atom = a.AsAtom();
    if (atom && GetAtom(*atom).kind == kind) {
      for (const Expr& inner : GetAtom(*atom).args) flat.push_back(inner);
    } else {
      flat.push_back(std::move(a));
    }
  }
  std::vector<Expr> kept;
  for (Expr& a : flat) {
    if (a.IsNumber()) {
      Rational r = a.AsNumber();
      if (!number || (is_max ? r > *number : r < *number)) number = r;
    } else {
      kept.push_back(std::move(a));
    }
  }
  if (number) kept.push_back(Expr(*number));
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  // Drop every argument that another remaining argument provably dominates.
  std::vector<bool> dropped(kept.size(), false);
  for (size_t i = 0; i < kept.size(); ++i) {
    for (size_t j = 0; j < kept.size() && !dropped[i]; ++j) {
      if (i == j || dropped[j]) continue;
      Truth dominated = is_max ? ProveLE(kept[i], kept[j]) : ProveLE(kept[j], kept[i]);
      if (dominated == Truth::kTrue) dropped[i] = true;
    }
  }
  std::vector<Expr> survivors;
  for (size_t i = 0; i < kept.size(); ++i)
    if (!dropped[i]) survivors.push_back(std::move(kept[i]));
  if (survivors.size() == 1) return survivors[0];
  return Expr::FromAtom(InternAtom(AtomInfo{kind, "", false, std::move(survivors)}));
}

using Bound = std::optional<Rational>;

Interval Unknown() { return Interval{}; }

Interval Scale(const Interval& v, const Rational& c) {
  if (c.IsZero()) return Interval{Rational(0), Rational(0)};
  Bound lo = v.lo ? Bound(*v.lo * c) : std::nullopt;
  Bound hi = v.hi ? Bound(*v.hi * c) : std::nullopt;
  if (c.Sign() < 0) std::swap(lo, hi);
  return Interval{lo, hi};
}

bool NonNeg(const Interval& v) { return v.lo && v.lo->Sign() >= 0; }
bool NonPos(const Interval& v) { return v.hi && v.hi->Sign() <= 0; }

Interval Negate(const Interval& v) { return Scale(v, Rational(-1)); }

Interval Multiply(const Interval& a, const Interval& b) {
  if (NonNeg(a) && NonNeg(b)) {
    Bound hi = (a.hi && b.hi) ? Bound(*a.hi * *b.hi) : std::nullopt;
    return Interval{*a.lo * *b.lo, hi};
  }
  if (NonNeg(a) && NonPos(b)) return Negate(Multiply(a, Negate(b)));
  if (NonPos(a) && NonNeg(b)) return Negate(Multiply(Negate(a), b));
  if (NonPos(a) && NonPos(b)) return Multiply(Negate(a), Negate(b));
  if (a.lo && a.hi && b.lo && b.hi) {
    Rational p[4] = {*a.lo * *b.lo, *a.lo * *b.hi, *a.hi * *b.lo, *a.hi * *b.hi};
    return Interval{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
  }
  return Unknown();
}

Interval PowerBounds(const Interval& v, int exp) {
  if (exp == 1) return v;
  if (exp > 0) {
    Interval r = v;
    for (int k = 1; k < exp; ++k) r = Multiply(r, v);
    return r;
  }
  // Negative powers: defined and monotone only when the base keeps one strict sign.
  if (v.lo && v.lo->Sign() > 0) {
    Rational hi = v.lo->Pow(exp);
    Rational lo = v.hi ? v.hi->Pow(exp) : Rational(0);
    return Interval{lo, hi};
  }
  if (v.hi && v.hi->Sign() < 0) return Negate(PowerBounds(Negate(v), exp)) ;
  return Unknown();
}

Interval AtomBounds(AtomId id) {
  const AtomInfo& info = GetAtom(id);
  switch (info.kind) {
    case AtomKind::kSymbol:
      return Interval{Rational(info.positive ? 1 : 0), std::nullopt};
    case AtomKind::kFloor:
    case AtomKind::kCeil: {
      Interval v = Bounds(info.args[0]);
      bool fl = info.kind == AtomKind::kFloor;
      Bound lo = v.lo ? Bound(Rational(fl ? v.lo->Floor() : v.lo->Ceil())) : std::nullopt;
      Bound hi = v.hi ? Bound(Rational(fl ? v.hi->Floor() : v.hi->Ceil())) : std::nullopt;
      return Interval{lo, hi};
    }
    case AtomKind::kMax:
    case AtomKind::kMin: {
      bool is_max = info.kind == AtomKind::kMax;
      // Max: lo = largest known lo (any one suffices); hi = largest hi (all needed). Min mirrored.
      Bound any_side, all_side;
      bool all_known = true;
      for (const Expr& a : info.args) {
        Interval v = Bounds(a);
        const Bound& one = is_max ? v.lo : v.hi;
        const Bound& all = is_max ? v.hi : v.lo;
        if (one && (!any_side || (is_max ? *one > *any_side : *one < *any_side))) any_side = one;
        if (!all) all_known = false;
        else if (!all_side || (is_max ? *all > *all_side : *all < *all_side)) all_side = all;
      }
      if (!all_known) all_side.reset();
      return is_max ? Interval{any_side, all_side} : Interval{all_side, any_side};
    }
    case AtomKind::kMod: {
      const Expr& divisor = info.args[1];
      if (divisor.IsNumber() && divisor.AsNumber().Sign() > 0) {
        Rational d = divisor.AsNumber();
        return Interval{Rational(0), d.IsInteger() && info.args[0].IsIntegerValued() ? d - Rational(1) : d};
      }
      return Unknown();
    }
    case AtomKind::kParen:
      return Bounds(info.args[0]);
  }
  return Unknown();
}

}  // namespace

Expr Floor(const Expr& e) { return FloorOrCeil(e, AtomKind::kFloor); }
Expr Ceil(const Expr& e) { return FloorOrCeil(e, AtomKind::kCeil); }
Expr Max(std::vector<Expr> args) { return MaxOrMin(AtomKind::kMax, std::move(args)); }
Expr Min(std::vector<Expr> args) { return MaxOrMin(AtomKind::kMin, std::move(args)); }

Expr Mod(const Expr& a, const Expr& b) {
  if (a.IsNumber() && b.IsNumber() && !b.AsNumber().IsZero()) {
    Rational q = a.AsNumber() / b.AsNumber();
    return Expr(a.AsNumber() - b.AsNumber() * Rational(q.Floor()));
  }
  if (b.IsNumber() && !b.AsNumber().IsZero() && Div(a, b).IsIntegerValued()) return Expr(0);
  return Expr::FromAtom(InternAtom(AtomInfo{AtomKind::kMod, "", false, {a, b}}));
}

Expr RebuildAtom(AtomKind kind, std::vector<Expr> args) {
  switch (kind) {
    case AtomKind::kFloor: return Floor(args[0]);
    case AtomKind::kCeil: return Ceil(args[0]);
    case AtomKind::kMax: return Max(std::move(args));
    case AtomKind::kMin: return Min(std::move(args));
    case AtomKind::kMod: return Mod(args[0], args[1]);
    case AtomKind::kParen: return args[0];
    case AtomKind::kSymbol: break;
  }
  return Expr();
}

Interval Bounds(const Expr& e) {
  try {
    Interval sum{Rational(0), Rational(0)};
    for (const auto& [mono, coeff] : e.terms()) {
      Interval term{Rational(1), Rational(1)};
      for (const auto& [atom, exp] : mono) term = Multiply(term, PowerBounds(AtomBounds(atom), exp));
      term = Scale(term, coeff);
      sum.lo = (sum.lo && term.lo) ? Bound(*sum.lo + *term.lo) : std::nullopt;
      sum.hi = (sum.hi && term.hi) ? Bound(*sum.hi + *term.hi) : std::nullopt;
      if (!sum.lo && !sum.hi) break;
    }
    return sum;
  } catch (const SymOverflow&) {
    return Unknown();
  }
}

Truth IsNonNegative(const Expr& e) {
  Interval v = Bounds(e);
  if (v.lo && v.lo->Sign() >= 0) return Truth::kTrue;
  if (v.hi && v.hi->Sign() < 0) return Truth::kFalse;
  return Truth::kUnknown;
}

Truth IsPositive(const Expr& e) {
  Interval v = Bounds(e);
  // Integer-valued expressions: > 0 is >= 1, which the closed bounds can show more often.
  if (v.lo && (v.lo->Sign() > 0)) return Truth::kTrue;
  if (v.hi && v.hi->Sign() <= 0) return Truth::kFalse;
  return Truth::kUnknown;
}

}  // namespace nuphar::sym
