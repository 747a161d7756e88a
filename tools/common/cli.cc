// Error reporting for tools (tools/common/cli.h).
#include "tools/common/cli.h"

#include <cstdio>

namespace nuphar::tools {

int ReportError(const char* tool, const Status& status) {
  std::fprintf(stderr, "%s: error: %s\n", tool, status.message().c_str());
  return kExitError;
}

}  // namespace nuphar::tools
