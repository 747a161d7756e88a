// The only ExitOnErr-style helpers of the project (STYLE R4): tools turn a Diag into one line
// on stderr and an exit code. Libraries never print or exit.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

#include "graph/diagnostics.h"
#include "graph/error.h"

namespace nuphar::tools {

/// Exit codes shared by every tool.
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,       ///< bad input, unsupported feature, I/O failure
  kExitUsage = 2,       ///< bad command line
  kExitIncomplete = 3,  ///< the tool ran but its result is incomplete (e.g. shapes left unknown)
};

/// Makes the libraries' diagnostics (graph/diagnostics.h) print to stderr, one line each, as
/// they arrive. Every tool calls this first thing in main().
/// Inline so that tools which do not link nuphar_tool_common (model_editor, model_quantizer,
/// symbolic_shape_infer) use it too.
inline void PrintDiagnosticsToStderr() {
  SetDefaultDiagnosticSink([](Severity, const std::string& line) { std::fprintf(stderr, "%s\n", line.c_str()); });
}

/// Prints "<tool>: error: <diag>" to stderr and returns kExitError.
int ReportError(const char* tool, const Status& status);

template <class T>
T ExitOnErr(const char* tool, Expected<T> value) {
  if (!value) std::exit(ReportError(tool, value.status()));
  return std::move(value).value();
}
inline void ExitOnErr(const char* tool, const Status& status) {
  if (!status.ok()) std::exit(ReportError(tool, status));
}

}  // namespace nuphar::tools
