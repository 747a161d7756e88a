// The load cache (load_cache.h).
#include "runtime/jit/load_cache.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Support/xxhash.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <vector>

#include "graph/diagnostics.h"
#include "graph/model_io.h"
#include "runtime/core/graph_plan.h"
#include "runtime/jit/kernel_cache.h"
#include "runtime/platform/build_id.h"

namespace nuphar::jit {
namespace fs = std::filesystem;
namespace {

// ---- the payload: host byte order (the build id in the key pins the platform) ----
//   u64 count, then per value type: name, i32 dtype
//   u64 count, then per shape: name, u64 rank, per dim: i64 value, name of the dim parameter
// A name is u64 length then bytes. Entries are sorted by name, so one model gives one file.

void PutU64(std::string& out, uint64_t v) { out.append(reinterpret_cast<const char*>(&v), sizeof v); }
void PutName(std::string& out, const std::string& s) {
  PutU64(out, s.size());
  out += s;
}

class PayloadReader {
 public:
  explicit PayloadReader(std::string_view bytes) : bytes_(bytes) {}
  bool ok() const { return ok_; }
  bool at_end() const { return pos_ == bytes_.size(); }
  uint64_t U64() {
    uint64_t v = 0;
    if (!Need(sizeof v)) return 0;
    std::memcpy(&v, bytes_.data() + pos_, sizeof v);
    pos_ += sizeof v;
    return v;
  }
  std::string Name() {
    const uint64_t n = U64();
    if (!Need(n)) return {};
    std::string s(bytes_.substr(pos_, n));
    pos_ += n;
    return s;
  }
  // A count of entries each at least `min_bytes` long, refused when the rest cannot hold them (a
  // garbage count must not reserve gigabytes).
  uint64_t Count(size_t min_bytes) {
    const uint64_t n = U64();
    if (ok_ && n > (bytes_.size() - pos_) / min_bytes) ok_ = false;
    return ok_ ? n : 0;
  }

 private:
  bool Need(uint64_t n) {
    if (ok_ && n > bytes_.size() - pos_) ok_ = false;
    return ok_;
  }
  std::string_view bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

std::string EncodeInferredValues(const ModelContext& model) {
  std::vector<std::pair<std::string, DType>> types(model.value_types.begin(), model.value_types.end());
  std::sort(types.begin(), types.end());
  std::vector<const std::pair<const std::string, ModelContext::DeclaredShape>*> shapes;
  for (const auto& entry : model.value_shapes) shapes.push_back(&entry);
  std::sort(shapes.begin(), shapes.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  std::string out;
  PutU64(out, types.size());
  for (const auto& [name, dtype] : types) {
    PutName(out, name);
    PutU64(out, static_cast<uint64_t>(static_cast<int64_t>(dtype)));
  }
  PutU64(out, shapes.size());
  for (const auto* entry : shapes) {
    const ModelContext::DeclaredShape& shape = entry->second;
    PutName(out, entry->first);
    PutU64(out, shape.dims.size());
    for (size_t i = 0; i < shape.dims.size(); ++i) {
      PutU64(out, static_cast<uint64_t>(shape.dims[i]));
      PutName(out, i < shape.dim_params.size() ? shape.dim_params[i] : std::string());
    }
  }
  return out;
}

bool DecodeInferredValues(std::string_view payload, ModelContext* model) {
  PayloadReader in(payload);
  constexpr size_t kNameBytes = sizeof(uint64_t);
  for (uint64_t n = in.Count(kNameBytes + sizeof(uint64_t)); in.ok() && n > 0; --n) {
    std::string name = in.Name();
    const auto dtype = static_cast<int64_t>(in.U64());
    model->value_types[std::move(name)] = static_cast<DType>(dtype);
  }
  for (uint64_t n = in.Count(kNameBytes + sizeof(uint64_t)); in.ok() && n > 0; --n) {
    std::string name = in.Name();
    ModelContext::DeclaredShape shape;
    for (uint64_t rank = in.Count(sizeof(uint64_t) + kNameBytes); in.ok() && rank > 0; --rank) {
      shape.dims.push_back(static_cast<int64_t>(in.U64()));
      shape.dim_params.push_back(in.Name());
    }
    model->value_shapes[std::move(name)] = std::move(shape);
  }
  return in.ok() && in.at_end();
}

std::string HeaderFirstLine() { return std::string("nuphar load cache ") + kCacheVersion; }

// Why `file` is not the entry `entry` ("" when it is; then `payload` views its payload).
std::string CheckEntry(const LoadCacheEntry& entry, std::string_view file, std::string_view* payload) {
  std::string_view rest = file;
  auto line = [&rest](std::string_view* out) {
    const size_t end = rest.find('\n');
    if (end == std::string_view::npos) return false;
    *out = rest.substr(0, end);
    rest.remove_prefix(end + 1);
    return true;
  };
  std::string_view version, key, sizes;
  if (!line(&version) || version.substr(0, 18) != "nuphar load cache ") return "not a load cache file";
  if (version != HeaderFirstLine())
    return "it is cache version " + std::string(version.substr(18)) + ", this runtime reads " + kCacheVersion;
  if (!line(&key) || key != "key " + entry.key) return "it was written for another model, mode or build";
  if (!line(&sizes) || sizes.substr(0, 8) != "payload ") return "its header is damaged";
  sizes.remove_prefix(8);
  const size_t space = sizes.find(' ');
  if (space == std::string_view::npos) return "its header is damaged";
  const std::string size_text(sizes.substr(0, space));
  if (size_text.empty() || size_text.find_first_not_of("0123456789") != std::string::npos || size_text.size() > 18)
    return "its header is damaged";
  const uint64_t size = std::stoull(size_text);
  if (size != rest.size())
    return "its payload has " + std::to_string(rest.size()) + " bytes, its header says " + std::to_string(size);
  if (Sha256Hex(llvm::StringRef(rest.data(), rest.size())) != sizes.substr(space + 1))
    return "its content hash differs from its header's";
  *payload = rest;
  return "";
}

void Warn(const std::string& line) { ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + line); }

}  // namespace

std::string ModelContentKey(std::string_view bytes) {
  static const char* digits = "0123456789abcdef";
  uint64_t h = llvm::xxHash64(llvm::StringRef(bytes.data(), bytes.size()));
  std::string hex(16, '0');
  for (int i = 15; i >= 0; --i, h >>= 4) hex[i] = digits[h & 15];
  return "xxh64:" + hex + ":" + std::to_string(bytes.size());
}

LoadCacheEntry LoadCacheEntryFor(const std::string& cache_path, const std::string& content_key, bool symbolic_shapes) {
  LoadCacheEntry entry;
  const std::string& build = RuntimeBuildId();
  if (cache_path.empty() || content_key.empty() || build.empty()) return entry;
  entry.key = content_key + " shapes:" + (symbolic_shapes ? "onnx+symbolic" : "onnx") + " build:" + build;
  entry.path = (fs::path(cache_path) / kCacheVersion / ("load_" + Sha256Hex(entry.key).substr(0, 32) + ".bin")).string();
  return entry;
}

bool ReadInferredValues(const LoadCacheEntry& entry, ModelContext* model) {
  if (!entry.enabled()) return false;
  std::error_code ec;
  if (!fs::exists(entry.path, ec)) return false;
  auto file = ReadFile(entry.path);
  std::string why = file.ok() ? "" : "cannot be read (" + file.message() + ")";
  std::string_view payload;
  if (why.empty()) why = CheckEntry(entry, *file, &payload);
  if (why.empty() && !DecodeInferredValues(payload, model)) why = "its payload does not decode";
  if (why.empty()) return true;
  model->value_types.clear();
  model->value_shapes.clear();
  Warn("cache: " + entry.path + " is not used: " + why + "; the model's shapes are inferred again");
  return false;
}

void SaveInferredValues(const LoadCacheEntry& entry, const ModelContext& model) {
  if (!entry.enabled()) return;
  const std::string dir = fs::path(entry.path).parent_path().string();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) {
    WarnOnce("dir:" + dir, "cache: cannot create " + dir + " (" + ec.message() + "); nothing is saved");
    return;
  }
  const std::string payload = EncodeInferredValues(model);
  const std::string file = HeaderFirstLine() + "\nkey " + entry.key + "\npayload " + std::to_string(payload.size()) +
                           " " + Sha256Hex(payload) + "\n" + payload;
  const Status written = WriteFileAtomic(entry.path, file);
  if (!written.ok()) WarnOnce("load:" + dir, "cache: cannot save " + entry.path + " (" + written.message() + ")");
}

}  // namespace nuphar::jit
