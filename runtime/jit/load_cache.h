// The load cache (issue 13; spec runtime.md R4, §8.4): what a session derives from a model's bytes
// alone, stored beside the kernel objects so that a warm session does not derive it again.
//
//   <nuphar_cache_path>/<kCacheVersion>/load_<hash of the key>.bin
//
// It holds the inferred element types and shapes of the model's values (ModelContext::value_types
// and value_shapes): ONNX's inference and, on the JIT path, shape_infer's symbolic pass, which
// are most of a warm load for models whose shapes are computed at run time. The key is the
// model's content key (xxHash64 and size of its bytes), whether the symbolic pass runs, and the
// runtime's build id (runtime/platform/build_id.h): another build never reads what this one
// inferred, and kCacheVersion names the directory. A model given as a ModelProto, or whose weights
// live in side files, has no content key and no entry.
//
// File: "nuphar load cache <version>", "key <key>", "payload <bytes> <sha256>" (one line each),
// then the payload. It is written to a temporary name and renamed, and verified on read (version,
// key, size, SHA-256, a payload that decodes to its end). A fault (truncated, garbage, another
// version or key, an unwritable directory, a full disk) is a warning and a load that infers
// again; an entry that could not be used is rewritten.
#pragma once

#include <string>
#include <string_view>

namespace nuphar {
struct ModelContext;
}

namespace nuphar::jit {

/// The content key of a whole model's bytes: xxHash64 and size (cheap: ~1 ms per 6 MB).
std::string ModelContentKey(std::string_view bytes);

/// A model's entry: its file and the key its header must carry.
struct LoadCacheEntry {
  std::string path;  ///< empty: no entry (no cache path, no content key, or a runtime without build id)
  std::string key;
  bool enabled() const { return !path.empty(); }
};

/// The entry under `cache_path` (the nuphar_cache_path setting; "" for none) of a model with
/// `content_key` ("" for none), loaded with or without shape_infer's symbolic pass.
LoadCacheEntry LoadCacheEntryFor(const std::string& cache_path, const std::string& content_key, bool symbolic_shapes);

/// Fills model->value_types and value_shapes from `entry` and returns true; false when the entry
/// is off or absent, or fails verification (warned), with both maps left empty.
bool ReadInferredValues(const LoadCacheEntry& entry, ModelContext* model);

/// Saves model.value_types and value_shapes as `entry` (when enabled); a failure is a warning.
void SaveInferredValues(const LoadCacheEntry& entry, const ModelContext& model);

}  // namespace nuphar::jit
