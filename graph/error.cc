// Diag formatting and the invariant-failure handler (graph/error.h).
#include "graph/error.h"

namespace nuphar {

std::string Diag::ToString() const {
  std::string out;
  auto sep = [&out] {
    if (!out.empty()) out += ": ";
  };
  if (!file.empty()) out += file;
  if (!graph.empty()) {
    sep();
    out += "graph '" + graph + "'";
  }
  if (!node.empty() || !op.empty()) {
    sep();
    out += "node '" + node + "'";
    if (!op.empty()) out += " (" + op + ")";
  }
  sep();
  out += reason;
  return out;
}

Status& Status::WithFile(const std::string& file) {
  if (diag_ && diag_->file.empty()) diag_->file = file;
  return *this;
}

Status& Status::WithGraph(const std::string& graph) {
  if (diag_ && diag_->graph.empty()) diag_->graph = graph;
  return *this;
}

void CheckFailed(const char* file, int line, const char* cond, const std::string& why) {
  // The one direct write to stderr in the libraries: the process is about to abort, so no sink
  // can be trusted to run. tests/layering/no_direct_output.sh allows this line.  output-ok
  std::fprintf(stderr, "nuphar: internal error at %s:%d: check '%s' failed: %s\n", file, line, cond, why.c_str());
  std::abort();
}

}  // namespace nuphar
