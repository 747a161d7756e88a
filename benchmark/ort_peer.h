// ONNX Runtime as a side-by-side peer: runs ../shared/peer/ort_run.js (onnxruntime-node) in a child
// process and reads its JSON line. Never a dependency: callers skip ORT when ProbeOrtPeer fails.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/error.h"

namespace nuphar::bench {

struct OrtRunOptions {
  int threads = 1;
  std::map<std::string, int64_t> dims;  ///< symbolic dim values (--dims)
  int runs = 10;                        ///< timed runs (--iters)
  double max_seconds = 0;               ///< stop after this long, at least one run (--max-time); 0 = no limit
};

/// Per-run latencies in ms of `model` in ORT, or an error with ort_run.js's message.
Expected<std::vector<double>> TimeInOrt(const std::string& peer_dir, const std::string& model, const OrtRunOptions& options);

}  // namespace nuphar::bench
