// Diagnostics sink (graph/diagnostics.h): a per-thread stack of scoped sinks over one default.
#include "graph/diagnostics.h"

#include <memory>
#include <mutex>

namespace nuphar {
namespace {

thread_local ScopedDiagnosticSink* g_scoped = nullptr;

std::mutex& DefaultMutex() {
  static std::mutex m;
  return m;
}
// Shared so that a line being reported keeps its sink alive while another thread replaces it.
std::shared_ptr<DiagnosticSink>& DefaultSink() {
  static std::shared_ptr<DiagnosticSink> sink;
  return sink;
}

}  // namespace

const char* SeverityName(Severity s) { return s == Severity::kWarning ? "warning" : "note"; }

void ReportDiagnostic(Severity severity, const std::string& line) {
  if (g_scoped) {
    if (g_scoped->sink_) g_scoped->sink_(severity, line);
    return;
  }
  std::shared_ptr<DiagnosticSink> sink;
  {
    std::lock_guard<std::mutex> lock(DefaultMutex());
    sink = DefaultSink();
  }
  if (sink && *sink) (*sink)(severity, line);
}

DiagnosticSink SetDefaultDiagnosticSink(DiagnosticSink sink) {
  auto next = std::make_shared<DiagnosticSink>(std::move(sink));
  std::lock_guard<std::mutex> lock(DefaultMutex());
  DiagnosticSink previous = DefaultSink() ? *DefaultSink() : DiagnosticSink();
  DefaultSink() = std::move(next);
  return previous;
}

ScopedDiagnosticSink::ScopedDiagnosticSink(DiagnosticSink sink) : sink_(std::move(sink)), previous_(g_scoped) {
  g_scoped = this;
}

ScopedDiagnosticSink::~ScopedDiagnosticSink() { g_scoped = previous_; }

}  // namespace nuphar
