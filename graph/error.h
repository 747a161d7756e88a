// Errors that cross module borders (STYLE R4).
//
// Two kinds of failure, handled two ways:
//  - a broken invariant is a programmer error: NUPHAR_CHECK aborts with a message;
//  - bad user input, unsupported features and I/O failures come back as values: Status and
//    Expected<T>, each carrying a Diag that names file, graph, node, op and reason.
// No exception crosses a module border; tools/ turns a Diag into one line and an exit code.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <variant>

namespace nuphar {

/// Prints the failed check and aborts; called through NUPHAR_CHECK.
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& why);

/// What went wrong and where. Every field but `reason` may be empty.
struct Diag {
  std::string file;    ///< model or data file being read or written
  std::string graph;   ///< graph name (main graph or a Scan/Loop/If body)
  std::string node;    ///< node name
  std::string op;      ///< node op_type
  std::string reason;  ///< one sentence, no trailing period needed

  static Diag Msg(std::string reason) {
    Diag d;
    d.reason = std::move(reason);
    return d;
  }
  static Diag File(std::string file, std::string reason) {
    Diag d = Msg(std::move(reason));
    d.file = std::move(file);
    return d;
  }
  /// For any node-like type with name() and op_type() (onnx::NodeProto, runtime node infos).
  template <class NodeT>
  static Diag Node(const NodeT& node, std::string reason) {
    Diag d = Msg(std::move(reason));
    d.node = node.name();
    d.op = node.op_type();
    return d;
  }

  /// "file: graph 'g': node 'n' (Op): reason" with the empty parts left out.
  std::string ToString() const;
};

/// Success, or a Diag. Cheap when OK (one null pointer).
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(Diag diag) : diag_(std::make_unique<Diag>(std::move(diag))) {}  // NOLINT: implicit by design
  Status(const Status& other) : diag_(other.diag_ ? std::make_unique<Diag>(*other.diag_) : nullptr) {}
  Status& operator=(const Status& other) {
    diag_ = other.diag_ ? std::make_unique<Diag>(*other.diag_) : nullptr;
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;

  static Status OK() { return Status(); }
  bool ok() const { return diag_ == nullptr; }
  explicit operator bool() const { return ok(); }
  const Diag& diag() const { return *diag_; }
  Diag& diag() { return *diag_; }
  std::string message() const { return ok() ? std::string("OK") : diag_->ToString(); }

  /// Fills the location fields that are still empty (callers add context as errors rise).
  Status& WithFile(const std::string& file);
  Status& WithGraph(const std::string& graph);
  template <class NodeT>
  Status& WithNode(const NodeT& node) {
    if (diag_ && diag_->node.empty() && diag_->op.empty()) {
      diag_->node = node.name();
      diag_->op = node.op_type();
    }
    return *this;
  }

 private:
  std::unique_ptr<Diag> diag_;
};

/// A value or a Diag (C++20 has no std::expected).
template <class T>
class [[nodiscard]] Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT
  Expected(Diag diag) : v_(std::move(diag)) {}  // NOLINT
  /// From an error Status. An OK Status carries no value: building an Expected from one is a
  /// bug in the caller, so it aborts (NUPHAR_CHECK) instead of inventing a user-facing Diag.
  Expected(Status status) : v_(ErrorDiag(status)) {}  // NOLINT

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() & { return std::get<0>(v_); }
  const T& value() const& { return std::get<0>(v_); }
  T&& value() && { return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Diag& diag() const { return std::get<1>(v_); }
  Status status() const { return ok() ? Status::OK() : Status(diag()); }
  std::string message() const { return ok() ? std::string("OK") : diag().ToString(); }

 private:
  static Diag ErrorDiag(const Status& status) {
    if (status.ok()) CheckFailed(__FILE__, __LINE__, "!status.ok()", "Expected<T> built from an OK Status");
    return status.diag();
  }
  std::variant<T, Diag> v_;
};

}  // namespace nuphar

/// Aborts on a broken invariant (a bug in nuphar-cpp, never bad user input).
#define NUPHAR_CHECK(cond, why)                                     \
  do {                                                              \
    if (!(cond)) ::nuphar::CheckFailed(__FILE__, __LINE__, #cond, (why)); \
  } while (0)

#define NUPHAR_CONCAT_INNER(a, b) a##b
#define NUPHAR_CONCAT(a, b) NUPHAR_CONCAT_INNER(a, b)

/// Returns the Status of `expr` from the enclosing function when it is an error.
#define NUPHAR_RETURN_IF_ERROR(expr)                       \
  do {                                                     \
    ::nuphar::Status nuphar_status_ = (expr);              \
    if (!nuphar_status_.ok()) return nuphar_status_;       \
  } while (0)

/// `NUPHAR_ASSIGN_OR_RETURN(auto x, MakeX());` declares x from an Expected or returns its error.
#define NUPHAR_ASSIGN_OR_RETURN(lhs, expr) \
  NUPHAR_ASSIGN_OR_RETURN_IMPL(NUPHAR_CONCAT(nuphar_expected_, __LINE__), lhs, expr)
#define NUPHAR_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) return tmp.status();                \
  lhs = std::move(tmp).value()
