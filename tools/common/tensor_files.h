// Tensor files shared with the ONNX Runtime peer (../shared/peer/ort_run.js):
//   NAME.pb            a serialized onnx TensorProto
//   NAME.bin + .json   raw little-endian C-order data + {"name","dtype","shape"} (dtype as numpy/ORT names it)
// and random inputs drawn exactly like numpy.random.RandomState(seed).rand(*shape).astype(float32),
// one generator for all inputs in graph-input order, so both sides are fed identical data.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "graph/error.h"
#include "graph/numpy_random.h"
#include "runtime/core/tensor.h"
#include "runtime/session.h"

namespace nuphar::tools {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

/// Reads a .pb or a .bin (with its .json sidecar; a .json path also works).
Expected<NamedTensor> ReadTensorFile(const std::string& path);
Status WriteTensorPb(const std::string& path, const std::string& name, const Tensor& t);
/// Writes PREFIX.bin and PREFIX.json.
Status WriteTensorBin(const std::string& prefix, const std::string& name, const Tensor& t);

using nuphar::NumpyRandomState;

struct InputSpec {
  /// Dim values from --dims: by symbol name ("seq") or by input and axis ("input:1"; for dims
  /// that have no name); the input:axis form wins.
  std::map<std::string, int64_t> dims;
  uint32_t seed = 0;
  /// Every input not backed by an initializer comes from a file here (by stored name, else
  /// input_K.pb by position); a directory without a file for one of them is an error.
  std::string input_dir;
  /// A --dims key that names no settable dim of the session's inputs is an error (the tools);
  /// off for callers that pass one dims map to several models (rnn_benchmark).
  bool strict_dims = false;
};

/// Inputs for every required graph input: from files when given, otherwise random floats
/// (numpy order) and integers/bools set to 1, as ort_run.js does. Dims without a value are
/// listed all in one error. `sources`, when given, receives per returned input where it came
/// from: "file PATH", "random (seed S)" or "ones".
Expected<NamedTensors> MakeInputs(const Session& session, const InputSpec& spec,
                                  std::vector<std::string>* sources = nullptr);

const char* NumpyDTypeName(DType t);

/// Parses --dims values "name=value,INPUT:AXIS=value,..." (the option may repeat).
Expected<std::map<std::string, int64_t>> ParseDimSpecs(const std::vector<std::string>& specs);

}  // namespace nuphar::tools
