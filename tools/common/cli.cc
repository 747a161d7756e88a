// Error reporting and command-line parsing for tools (tools/common/cli.h).
#include "tools/common/cli.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>

namespace nuphar::tools {

int ReportError(const char* tool, const Status& status) {
  std::fprintf(stderr, "%s: error: %s\n", tool, status.message().c_str());
  return kExitError;
}

Expected<std::vector<std::string>> ExpandLongOptionPrefixes(const std::vector<std::string>& args,
                                                            const std::vector<std::string>& long_names) {
  std::vector<std::string> out;
  out.reserve(args.size());
  bool options_done = false;  // after "--" every argument is positional, as in argparse
  for (const std::string& arg : args) {
    if (options_done || arg.size() < 3 || arg.compare(0, 2, "--") != 0) {
      options_done |= arg == "--";
      out.push_back(arg);
      continue;
    }
    const size_t eq = arg.find('=');
    const std::string name = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const std::string rest = eq == std::string::npos ? std::string() : arg.substr(eq);
    if (std::find(long_names.begin(), long_names.end(), name) != long_names.end()) {
      out.push_back(arg);
      continue;
    }
    std::vector<std::string> candidates;
    for (const std::string& n : long_names)
      if (n.compare(0, name.size(), name) == 0) candidates.push_back(n);
    if (candidates.size() > 1) {
      std::string list;
      for (const auto& c : candidates) list += (list.empty() ? "--" : ", --") + c;
      return Diag::Msg("ambiguous option: --" + name + " could match " + list);
    }
    // No candidate: left as written, so CLI11 reports the unknown option in its own words.
    out.push_back(candidates.empty() ? arg : "--" + candidates[0] + rest);
  }
  return out;
}

int ParseCommandLine(CLI::App& app, int argc, char** argv) {
  if (app.get_name().empty() && argc > 0) app.name(argv[0]);
  std::vector<std::string> args(argv + 1, argv + argc);
  std::vector<std::string> long_names;
  for (const CLI::Option* opt : app.get_options())
    for (const std::string& n : opt->get_lnames()) long_names.push_back(n);
  auto expanded = ExpandLongOptionPrefixes(args, long_names);
  if (!expanded) {
    std::fprintf(stderr, "%s\nRun with --help for more information.\n", expanded.message().c_str());
    return kExitUsage;
  }
  // CLI11 parses a vector in reverse order (it pops from the back).
  std::vector<std::string> reversed(expanded->rbegin(), expanded->rend());
  try {
    app.parse(reversed);
  } catch (const CLI::ParseError& e) {
    // --help and --version are ParseErrors with exit code 0; everything else is a usage error.
    return app.exit(e) == 0 ? kExitOk : kExitUsage;
  }
  return -1;
}

}  // namespace nuphar::tools
