// Exact rational numbers for the symbolic dim algebra (int64 numerator/denominator).
//
// Arithmetic runs in __int128 and normalizes; a result that does not fit int64 throws
// SymOverflow, which the algebra's callers (shape_infer handlers) turn into a fresh symbol
// (spec S1: "rational overflow gives up and creates a fresh symbol"). The exception never
// leaves the shape_infer module.
#pragma once

#include <cstdint>
#include <exception>
#include <numeric>
#include <string>

namespace nuphar::sym {

struct SymOverflow : std::exception {
  const char* what() const noexcept override { return "symbolic rational overflow"; }
};

class Rational {
 public:
  constexpr Rational() = default;
  constexpr Rational(int64_t v) : num_(v), den_(1) {}  // NOLINT: integers convert implicitly
  Rational(int64_t num, int64_t den) { *this = Make(num, den); }

  int64_t num() const { return num_; }
  int64_t den() const { return den_; }
  bool IsInteger() const { return den_ == 1; }
  bool IsZero() const { return num_ == 0; }
  int Sign() const { return num_ > 0 ? 1 : (num_ < 0 ? -1 : 0); }

  /// Largest integer <= value / smallest integer >= value.
  int64_t Floor() const {
    int64_t q = num_ / den_;
    if ((num_ % den_ != 0) && (num_ < 0)) --q;
    return q;
  }
  int64_t Ceil() const { return -Rational(-num_, den_).Floor(); }
  /// Truncation toward zero (C++ integer division).
  int64_t Trunc() const { return num_ / den_; }

  friend Rational operator+(const Rational& a, const Rational& b) {
    return Make128(static_cast<__int128>(a.num_) * b.den_ + static_cast<__int128>(b.num_) * a.den_,
                   static_cast<__int128>(a.den_) * b.den_);
  }
  friend Rational operator-(const Rational& a) { return Make128(-static_cast<__int128>(a.num_), a.den_); }
  friend Rational operator-(const Rational& a, const Rational& b) { return a + (-b); }
  friend Rational operator*(const Rational& a, const Rational& b) {
    return Make128(static_cast<__int128>(a.num_) * b.num_, static_cast<__int128>(a.den_) * b.den_);
  }
  friend Rational operator/(const Rational& a, const Rational& b) {
    if (b.num_ == 0) throw SymOverflow();
    return Make128(static_cast<__int128>(a.num_) * b.den_, static_cast<__int128>(a.den_) * b.num_);
  }
  Rational Pow(int e) const {
    Rational r(1), base = e < 0 ? Rational(1) / *this : *this;
    for (int i = 0; i < (e < 0 ? -e : e); ++i) r = r * base;
    return r;
  }
  friend bool operator==(const Rational& a, const Rational& b) { return a.num_ == b.num_ && a.den_ == b.den_; }
  friend bool operator<(const Rational& a, const Rational& b) {
    return static_cast<__int128>(a.num_) * b.den_ < static_cast<__int128>(b.num_) * a.den_;
  }
  friend bool operator<=(const Rational& a, const Rational& b) { return !(b < a); }
  friend bool operator>(const Rational& a, const Rational& b) { return b < a; }
  friend bool operator>=(const Rational& a, const Rational& b) { return !(a < b); }

  /// "3", "-1/2" (sympy's format).
  std::string ToString() const {
    return den_ == 1 ? std::to_string(num_) : std::to_string(num_) + "/" + std::to_string(den_);
  }

 private:
  static Rational Make(int64_t num, int64_t den) { return Make128(num, den); }
  static Rational Make128(__int128 num, __int128 den) {
    if (den == 0) throw SymOverflow();
    if (den < 0) num = -num, den = -den;
    __int128 a = num < 0 ? -num : num, b = den;
    while (b != 0) {
      __int128 t = a % b;
      a = b;
      b = t;
    }
    if (a > 1) num /= a, den /= a;
    constexpr __int128 kMax = INT64_MAX;
    if (num > kMax || num < -kMax || den > kMax) throw SymOverflow();
    Rational r;
    r.num_ = static_cast<int64_t>(num);
    r.den_ = static_cast<int64_t>(den);
    return r;
  }

  int64_t num_ = 0;
  int64_t den_ = 1;
};

}  // namespace nuphar::sym
