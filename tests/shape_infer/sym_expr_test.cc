// Printer, parser and simplification rules of shape_infer/sym against sympy's strings (§4.2-4.5).
#include "shape_infer/sym/sym_expr.h"

#include <gtest/gtest.h>

namespace nuphar::sym {
namespace {

Expr P(const char* name) { return Expr::Symbol(name, true); }
Expr NN(const char* name) { return Expr::Symbol(name, false); }

class SymTest : public ::testing::Test {
 protected:
  Expr b = P("b"), s = P("s"), N = P("N"), H = P("H"), M = P("M"), B = P("B"), a = P("a");
};

TEST_F(SymTest, PrintsSums) {
  EXPECT_EQ((s + s).ToString(), "2*s");
  EXPECT_EQ((b - s).ToString(), "b - s");
  EXPECT_EQ((Expr(5) - s).ToString(), "5 - s");
  EXPECT_EQ((Expr(1) - s + b).ToString(), "b - s + 1");
  EXPECT_EQ((b + s + 1).ToString(), "b + s + 1");
  EXPECT_EQ((Expr(2) - Expr(3) * s).ToString(), "2 - 3*s");
  EXPECT_EQ((-(s + b)).ToString(), "-b - s");
  EXPECT_EQ((s * s * b).ToString(), "b*s**2");
  EXPECT_EQ((Expr(2) * b * s).ToString(), "2*b*s");
  EXPECT_EQ((Expr(5) - s * s).ToString(), "5 - s**2");
  EXPECT_EQ((Expr(Rational(1, 2)) - s).ToString(), "1/2 - s");
  EXPECT_EQ((Expr(5) - Div(s, 2)).ToString(), "5 - s/2");
  EXPECT_EQ((Expr(3) - Div(1, s)).ToString(), "3 - 1/s");
  EXPECT_EQ((Expr(5) - Expr(2) * b * s).ToString(), "-2*b*s + 5");
  EXPECT_EQ((Expr(5) - b * s).ToString(), "-b*s + 5");
  EXPECT_EQ((-s - 5).ToString(), "-s - 5");
  EXPECT_EQ((Expr(3) * b - Expr(2) * s).ToString(), "3*b - 2*s");
  EXPECT_EQ((s - b * s).ToString(), "-b*s + s");
  EXPECT_EQ((Expr(1) - Div(1, b * s)).ToString(), "1 - 1/(b*s)");
  EXPECT_EQ((Expr(2) + Div(3, s)).ToString(), "2 + 3/s");
  EXPECT_EQ((B + a).ToString(), "B + a");
  EXPECT_EQ((P("x10") + P("x9")).ToString(), "x10 + x9");
  EXPECT_EQ((N + P("N_2")).ToString(), "N + N_2");
  EXPECT_EQ((NN("Reshape0_o0__d1") * P("x_d0")).ToString(), "Reshape0_o0__d1*x_d0");
}

TEST_F(SymTest, PrintsProducts) {
  EXPECT_EQ(Div(Expr(3) * H, 2).ToString(), "3*H/2");
  EXPECT_EQ(Div(s, 2).ToString(), "s/2");
  EXPECT_EQ(Div(b * s, 2).ToString(), "b*s/2");
  EXPECT_EQ(Div(-1, N).ToString(), "-1/N");
  EXPECT_EQ(Div(s, Expr(2) * b).ToString(), "s/(2*b)");
  EXPECT_EQ((b * FloorDiv(s, 2)).ToString(), "b*floor(s/2)");
  EXPECT_EQ((s * Max({3, b})).ToString(), "s*Max(3, b)");
  EXPECT_EQ(Div(b, s * s).ToString(), "b/s**2");
  EXPECT_EQ(Div(1, s * s).ToString(), "s**(-2)");
  EXPECT_EQ(Div(1, s + 1).ToString(), "1/(s + 1)");
  EXPECT_EQ((Expr(2) * Mod(s, 3)).ToString(), "2*(Mod(s, 3))");
  EXPECT_EQ((-Mod(s, 3)).ToString(), "-Mod(s, 3)");
}

// Div cancels a sum that divides the dividend exactly (sympy's cancel): the Reshape -1 of a
// Paddle CRNN divides 96*D0*(X + 1) by D0*(X + 1) with X a floor atom (issue 11).
TEST_F(SymTest, DivCancelsCommonPolynomialFactors) {
  const Expr W = P("W");
  const Expr X = FloorDiv(FloorDiv(W - 1, 2) - 1, 2);
  ASSERT_EQ(X.ToString(), "floor(floor(W/2 - 1/2)/2 - 1/2)");
  EXPECT_EQ(FloorDiv(Expr(96) * b * X + Expr(96) * b, b * X + b).ToString(), "96");
  EXPECT_EQ(Div((s + 1) * (s + 1), s + 1).ToString(), "s + 1");
  EXPECT_EQ(Div(s * s - 1, s - 1).ToString(), "s + 1");
  EXPECT_EQ(Div((b + s) * (b - s + 2) * 3, Expr(6) * b + Expr(6) * s).ToString(), "b/2 - s/2 + 1");
  // Laurent terms: (b/s + 1) / (b + s) == 1/s.
  EXPECT_EQ(Div(Div(b, s) + 1, b + s).ToString(), "1/s");
  // Monomial content on both sides: (2*b*s**2 + 2*b*s) / (b*s**2 + b*s) == 2.
  EXPECT_EQ(Div(Expr(2) * b * s * s + Expr(2) * b * s, b * s * s + b * s).ToString(), "2");
  // A divisor holding 1/(s + 1) cancels back to the expanded sum, never an opaque "(s + 1)".
  EXPECT_EQ(Div(b + N, Div(b + N, s + 1)), s + 1);
  EXPECT_EQ(Div(b + N, Div(b + N, s + 1)).ToString(), "s + 1");
  // Not exact: the divisor stays one factor.
  EXPECT_EQ(Div(s, s + 1).ToString(), "s/(s + 1)");
  EXPECT_EQ(Div(s * s + 1, s + 1).ToString(), "s**2/(s + 1) + 1/(s + 1)");
  EXPECT_EQ(Div(Expr(3) * b, b * s + b).ToString(), "3*b/(b*s + b)");
}

TEST_F(SymTest, ExpandsProductsOfSumsS1) {
  EXPECT_EQ(((s + 1) * (s + 1)).ToString(), "s**2 + 2*s + 1");
  EXPECT_EQ(((s + 1) * b).ToString(), "b*s + b");
  EXPECT_EQ(((s + 1) * 2).ToString(), "2*s + 2");
  EXPECT_EQ(FloorDiv(b * s + s, s).ToString(), "b + 1");
  EXPECT_EQ(FloorDiv(Expr(3) * N - 1, N).ToString(), "floor(-1/N) + 3");
  EXPECT_EQ(((b + s + 1) * (b + s + 1) - (b + s + 1) * (s + 1) + b * s + s * s + Expr(2) * s * FloorDiv(s, 2) -
             b * s + (s + 1) * (s + 1) - s * s - Expr(2) * s - s * s + s * s - b - 2 * s + 2 * s + b + b * s + s * s -
             b * s - s * s + b * b - b * b)
                .ToString(),
            "b**2 + b*s + b + s**2 + 2*s*floor(s/2) + 1");
}

TEST_F(SymTest, FloorAndCeilingFollowSympyAutoEvaluation) {
  EXPECT_EQ(FloorDiv(s, 2).ToString(), "floor(s/2)");
  EXPECT_EQ(FloorDiv(s - 1, 2).ToString(), "floor(s/2 - 1/2)");
  EXPECT_EQ(FloorDiv(b * s, s).ToString(), "b");
  EXPECT_EQ(FloorDiv(s, b).ToString(), "floor(s/b)");
  EXPECT_EQ(Floor(Div(s, 2) + Rational(1, 2)).ToString(), "floor(s/2 + 1/2)");
  EXPECT_EQ(Floor(Div(H, 2) - 1).ToString(), "floor(H/2) - 1");
  EXPECT_EQ(Floor(H + Rational(1, 2)).ToString(), "H");
  EXPECT_EQ(FloorDiv(Expr(2) * s + 1, 2).ToString(), "s");
  EXPECT_EQ(Floor(Div(H, 2) + Rational(3, 2)).ToString(), "floor(H/2 + 3/2)");
  EXPECT_EQ((b + Floor(Div(H, 2) + Rational(3, 2))).ToString(), "b + floor(H/2 + 3/2)");
  EXPECT_EQ((Expr(-2) * b + Floor(Div(H * b, 2))).ToString(), "-2*b + floor(H*b/2)");
  EXPECT_EQ((FloorDiv(s, 3) + FloorDiv(s, 2)).ToString(), "floor(s/3) + floor(s/2)");
  EXPECT_EQ((FloorDiv(s, 2) + FloorDiv(s + 1, 2)).ToString(), "floor(s/2) + floor(s/2 + 1/2)");
  EXPECT_EQ((s - Expr(3) * FloorDiv(s, 3)).ToString(), "s - 3*floor(s/3)");
  EXPECT_EQ((FloorDiv(b + 1, 2) * 2).ToString(), "2*floor(b/2 + 1/2)");
  EXPECT_EQ((FloorDiv(s + 7, 8) * 8 - s).ToString(), "-s + 8*floor(s/8 + 7/8)");
  EXPECT_EQ(Ceil(Div(s, 2)).ToString(), "ceiling(s/2)");
  EXPECT_EQ((Ceil(Div(H, 2) - Rational(3, 2)) + 1).ToString(), "ceiling(H/2 - 3/2) + 1");
  EXPECT_EQ(Floor(Expr(Rational(-7, 2))).ToString(), "-4");
  EXPECT_EQ(Ceil(Expr(Rational(-7, 2))).ToString(), "-3");
}

TEST_F(SymTest, MaxMinDropDominatedArguments) {
  EXPECT_EQ(Max({s, 1}).ToString(), "s");
  EXPECT_EQ(Max({s, 10}).ToString(), "Max(10, s)");
  EXPECT_EQ(Min({s, 10}).ToString(), "Min(10, s)");
  EXPECT_EQ(Min({s, b}).ToString(), "Min(b, s)");
  EXPECT_EQ(Max({b, s}).ToString(), "Max(b, s)");
  EXPECT_EQ(Min({s - 1, 10}).ToString(), "Min(10, s - 1)");
  EXPECT_EQ(Max({0, s - 1}).ToString(), "s - 1");
  EXPECT_EQ(Max({0, NN("n") - 1}).ToString(), "Max(0, n - 1)");
  EXPECT_EQ(Min({M, M + N}).ToString(), "M");
  EXPECT_EQ(Max({s, b + 1}).ToString(), "Max(s, b + 1)");
  EXPECT_EQ(Min({3, b, s}).ToString(), "Min(3, b, s)");
  EXPECT_EQ(Min({Min({3, b}), s, 7}).ToString(), "Min(3, b, s)");
  EXPECT_EQ((Expr(5) - Min({2, s})).ToString(), "5 - Min(2, s)");
  EXPECT_EQ((Min({5, s}) - 2).ToString(), "Min(5, s) - 2");
  EXPECT_EQ(Max({0, Min({5, s}) - 2}).ToString(), "Max(0, Min(5, s) - 2)");
  EXPECT_EQ(Max({0, Min({5, s - 1}) - Min({2, s})}).ToString(), "Max(0, -Min(2, s) + Min(5, s - 1))");
  EXPECT_EQ(Max({0, FloorDiv(Expr(3) * N - 1, N)}).ToString(), "floor(-1/N) + 3");
}

TEST_F(SymTest, SignProver) {
  EXPECT_EQ(IsNonNegative(s - 1), Truth::kTrue);
  EXPECT_EQ(IsNonNegative(Expr(2) * s - 1), Truth::kTrue);
  EXPECT_EQ(IsNonNegative(b * s - 1), Truth::kTrue);
  EXPECT_EQ(IsNonNegative(Min({5, s}) - 1), Truth::kTrue);
  EXPECT_EQ(IsNonNegative(FloorDiv(s, 2)), Truth::kTrue);
  EXPECT_EQ(IsNonNegative(s - 2), Truth::kUnknown);
  EXPECT_EQ(IsNonNegative(Min({5, s}) - 2), Truth::kUnknown);
  EXPECT_EQ(IsNonNegative(NN("n") - 1), Truth::kUnknown);
  EXPECT_EQ(IsPositive(Div(1, N)), Truth::kUnknown);  // closed bounds: [0, 1]; 1/N > 0 is not needed
  EXPECT_EQ(IsNonNegative(-s), Truth::kFalse);
  EXPECT_EQ(IsNonNegative(Floor(Div(-1, N)) + 3), Truth::kTrue);
}

TEST_F(SymTest, ModEvaluatesNumbersAndMultiples) {
  EXPECT_EQ(Mod(7, 3).ToString(), "1");
  EXPECT_EQ(Mod(-7, 3).ToString(), "2");
  EXPECT_EQ(Mod(Expr(2) * s, 2).ToString(), "0");
  EXPECT_EQ(Mod(s, 3).ToString(), "Mod(s, 3)");
  EXPECT_EQ((s + Mod(s, 3)).ToString(), "s + Mod(s, 3)");
}

TEST_F(SymTest, GeneratorOrderAcrossKinds) {
  Expr e = b + Mod(s, 3) + Ceil(Div(s, 2)) + FloorDiv(s, 3) + Max({s, b}) + Min({s, b}) + Div(2, s + 1) + Div(1, s);
  EXPECT_EQ(e.ToString(), "b + Mod(s, 3) + ceiling(s/2) + floor(s/3) + Max(b, s) + Min(b, s) + 2/(s + 1) + 1/s");
}

TEST_F(SymTest, ParseRoundTrips) {
  auto sym = [](const std::string& name) { return Expr::Symbol(name, true); };
  const char* texts[] = {"2*s", "b - s + 1", "5 - s", "floor(s/2 - 1/2) + 1", "Max(0, -Min(2, s) + Min(5, s - 1))",
                         "-s + 8*floor(s/8 + 7/8)", "floor(-1/N) + 3", "s/(2*b)", "b*s**2", "3*H/2",
                         "ceiling(H/2 - 3/2) + 1", "Min(10, s - 1)", "1 - 1/(b*s)", "2*(Mod(s, 3))", "s**(-2)",
                         "b**2 + b*s + b + s**2 + 2*s*floor(s/2) + 1", "Reshape0_o0__d1*x_d0", "1/(s + 1)"};
  for (const char* t : texts) {
    auto e = Parse(t, sym);
    ASSERT_TRUE(e.has_value()) << t;
    EXPECT_EQ(e->ToString(), t);
  }
  EXPECT_EQ(Parse("b*(s + 1)", sym)->ToString(), "b*s + b");
  EXPECT_EQ(Parse("floor((b*s + s)/s)", sym)->ToString(), "b + 1");
  EXPECT_FALSE(Parse("batch size", sym).has_value());
  EXPECT_FALSE(Parse("foo(1)", sym).has_value());
  EXPECT_FALSE(Parse("s +", sym).has_value());
}

TEST_F(SymTest, EqualityIsMathematical) {
  EXPECT_EQ(b * (s + 1), b * s + b);
  EXPECT_NE(b * s, s);
  Expr e = Substitute(b * s + FloorDiv(s, 2), [&](AtomId id) -> std::optional<Expr> {
    if (GetAtom(id).name == "s") return Expr(6);
    return std::nullopt;
  });
  EXPECT_EQ(e.ToString(), "6*b + 3");
}

TEST_F(SymTest, OverflowThrowsInsideTheModule) {
  Expr big(INT64_MAX / 2);
  EXPECT_THROW(big * big, SymOverflow);
}

}  // namespace
}  // namespace nuphar::sym
