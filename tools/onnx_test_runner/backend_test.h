// One ONNX backend test case: a directory with model.onnx and test_data_set_*/{input,output}_K.pb.
#pragma once

#include <string>

#include "graph/error.h"

namespace nuphar::tools {

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-3;
};

/// Loads the model, runs every data set and compares the outputs. OK when all match; otherwise
/// the Diag says which data set, output and element differ, or why the model did not load.
Status RunBackendTest(const std::string& dir, const std::string& settings, const Tolerance& tol);

}  // namespace nuphar::tools
