// Private helpers shared by the files of shape_infer/sym (not part of the module's API).
#pragma once

#include <optional>
#include <vector>

#include "shape_infer/sym/sym_expr.h"

namespace nuphar::sym {

AtomId InternAtom(AtomInfo info);
bool AtomIsIntegerValued(AtomId id);
bool TermIsIntegerValued(const Expr::Term& t);
/// Builds a function atom of `kind` from new arguments through its simplifying constructor.
Expr RebuildAtom(AtomKind kind, std::vector<Expr> args);
/// a / b when b (a sum) divides a exactly as a polynomial in the atoms, else nullopt
/// (poly_divide.cc). May throw SymOverflow.
std::optional<Expr> ExactDivide(const Expr& a, const Expr& b);

}  // namespace nuphar::sym
