// The only ExitOnErr-style helpers of the project (STYLE R4): tools turn a Diag into one line
// on stderr and an exit code, and parse their command line the one way every tool shares.
// Libraries never print or exit.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "graph/diagnostics.h"
#include "graph/error.h"

namespace CLI {
class App;
}

namespace nuphar::tools {

/// Exit codes shared by every tool (README "Exit codes").
enum ExitCode : int {
  kExitOk = 0,
  kExitError = 1,       ///< bad input, unsupported feature, I/O failure
  kExitUsage = 2,       ///< bad command line
  kExitIncomplete = 3,  ///< the tool ran but its result is incomplete (shapes left unknown, nothing quantized)
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

/// Parses the command line into `app` the way the original Python tools' argparse did: a
/// unique prefix of a long option stands for it (`--in` for `--input`, `--only` for
/// `--only_for_scan`); an ambiguous prefix is a usage error naming the candidates.
/// Returns -1 when the tool should go on, otherwise the exit code to return: kExitOk after
/// --help, kExitUsage (message printed) for every bad command line. CLI11's own codes
/// (105-109) never leak out of a tool.
int ParseCommandLine(CLI::App& app, int argc, char** argv);

/// Rewrites argv's unique long-option prefixes into full names (the part of ParseCommandLine
/// that knows nothing of CLI11; exposed for tests). `long_names` are without the leading "--".
/// Returns an error naming the candidates of an ambiguous prefix.
Expected<std::vector<std::string>> ExpandLongOptionPrefixes(const std::vector<std::string>& args,
                                                            const std::vector<std::string>& long_names);

template <class T>
T ExitOnErr(const char* tool, Expected<T> value) {
  if (!value) std::exit(ReportError(tool, value.status()));
  return std::move(value).value();
}
inline void ExitOnErr(const char* tool, const Status& status) {
  if (!status.ok()) std::exit(ReportError(tool, status));
}

}  // namespace nuphar::tools
