// Model I/O: load and save ModelProto, with external data and models over 2 GB.
//
// Load reads the whole file, parses it without protobuf's 64 MB default limit, and inlines
// tensors stored in side files (data_location = EXTERNAL) so passes see plain raw_data.
// Save writes to a temporary file next to the target and renames it on success, so a failed
// save never leaves a partial output. A model whose serialized size would pass protobuf's
// 2 GB limit is saved with its large initializers in one side file "<output>.data".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "graph/error.h"

namespace onnx {
class ModelProto;
}

namespace nuphar {

struct LoadOptions {
  bool load_external_data = true;  ///< read side files into raw_data
  /// Called once the model loaded, with the file's bytes when they are the whole model (no tensor
  /// lives in a side file) and the file could be mapped: the session keys its load cache
  /// (runtime/jit/load_cache.h) by them without reading the file twice.
  std::function<void(std::string_view bytes)> whole_model_bytes;
};

struct SaveOptions {
  /// Move initializers of at least `external_threshold_bytes` to a side file. Forced on when
  /// the model would not fit protobuf's 2 GB limit.
  bool save_as_external_data = false;
  int64_t external_threshold_bytes = 1024;
  std::string external_file_name;  ///< default: "<output file name>.data"
};

Status LoadModel(const std::string& path, onnx::ModelProto* model, const LoadOptions& options = {});
/// `origin` names the bytes in errors (e.g. "<memory>").
Status LoadModelFromBytes(const void* data, size_t size, onnx::ModelProto* model, const std::string& origin = "<memory>");
Status SaveModel(const onnx::ModelProto& model, const std::string& path, const SaveOptions& options = {});

/// Writes `bytes` to `path` through a temporary file and rename (used by every tool output).
Status WriteFileAtomic(const std::string& path, const std::string& bytes);
Expected<std::string> ReadFile(const std::string& path);

}  // namespace nuphar
