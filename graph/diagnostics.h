// Diagnostics sink: where library warnings and notes go, so no library prints (STYLE R4).
//
// Libraries (graph/, shape_infer/, editor/, quantizer/, and later runtime/) never write to
// stdout or stderr. They hand one line at a time to ReportDiagnostic(); the line reaches
//  1. the innermost ScopedDiagnosticSink installed on the calling thread, else
//  2. the process-wide default sink (tools install a stderr printer at the top of main()), else
//  3. nowhere: an embedder that installs nothing sees nothing.
// A line has no trailing newline; the sink adds one if it prints.
//
// Thread-safety: the scoped sink is per thread (a Session running on a pool sees the sink of the
// thread that calls into it only). SetDefaultDiagnosticSink may be called at any time; the
// default sink itself may be called from several threads at once and must be thread-safe.
#pragma once

#include <functional>
#include <string>
#include <vector>

namespace nuphar {

enum class Severity {
  kNote,     ///< progress and verbose reasons ("skip 'n': ...")
  kWarning,  ///< something the user should know; the result is still valid
};

/// "note" or "warning".
const char* SeverityName(Severity s);

using DiagnosticSink = std::function<void(Severity, const std::string& line)>;

/// Sends `line` to the current sink (see the banner).
void ReportDiagnostic(Severity severity, const std::string& line);

/// Replaces the process-wide default sink (empty: drop). Returns the previous one.
DiagnosticSink SetDefaultDiagnosticSink(DiagnosticSink sink);

/// Installs `sink` for the calling thread for the lifetime of this object (nests).
class ScopedDiagnosticSink {
 public:
  explicit ScopedDiagnosticSink(DiagnosticSink sink);
  ~ScopedDiagnosticSink();
  ScopedDiagnosticSink(const ScopedDiagnosticSink&) = delete;
  ScopedDiagnosticSink& operator=(const ScopedDiagnosticSink&) = delete;

 private:
  DiagnosticSink sink_;
  ScopedDiagnosticSink* previous_;
  friend void ReportDiagnostic(Severity, const std::string&);
};

/// Collects every line reported on this thread while alive (tests, embedders).
class DiagnosticCapture {
 public:
  struct Line {
    Severity severity;
    std::string text;
  };
  DiagnosticCapture() : scope_([this](Severity s, const std::string& t) { lines_.push_back({s, t}); }) {}
  const std::vector<Line>& lines() const { return lines_; }
  /// Texts of the lines of one severity, in order.
  std::vector<std::string> Texts(Severity s) const {
    std::vector<std::string> out;
    for (const auto& l : lines_)
      if (l.severity == s) out.push_back(l.text);
    return out;
  }

 private:
  std::vector<Line> lines_;
  ScopedDiagnosticSink scope_;
};

}  // namespace nuphar
