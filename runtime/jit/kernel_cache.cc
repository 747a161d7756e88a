// The kernel cache on disk and the AOT library (kernel_cache.h).
#include "runtime/jit/kernel_cache.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <llvm/ADT/StringRef.h>
#include <llvm/Object/ObjectFile.h>
#include <llvm/Support/MD5.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SHA256.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <functional>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>

#include "graph/diagnostics.h"
#include "runtime/core/op_kernel.h"
#include "runtime/jit/jit.h"

namespace nuphar::jit {
namespace fs = std::filesystem;
namespace {

constexpr const char kManifestName[] = "manifest.json";
constexpr const char kLockName[] = "manifest.lock";

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string HexOf(llvm::ArrayRef<uint8_t> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (uint8_t b : bytes) {
    out.push_back(digits[b >> 4]);
    out.push_back(digits[b & 15]);
  }
  return out;
}

}  // namespace

std::string Sha256Hex(llvm::StringRef bytes) {
  llvm::SHA256 sha;
  sha.update(bytes);
  const llvm::StringRef digest = sha.final();
  return HexOf(llvm::arrayRefFromStringRef(digest));
}

namespace {

std::mutex warned_mutex;
std::set<std::string>* warned = new std::set<std::string>();

}  // namespace

void WarnOnce(const std::string& key, const std::string& line) {
  {
    std::lock_guard<std::mutex> lock(warned_mutex);
    if (!warned->insert(key).second) return;
  }
  ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + line);
}

namespace {

void Warn(const std::string& line) { ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + line); }

// Writes `bytes` to a fresh temporary file beside `target`; returns its path, or "" with `why`.
std::string WriteTemporary(const std::string& target, llvm::StringRef bytes, std::string* why) {
  static std::atomic<uint64_t> counter{0};
  const std::string tmp = target + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    *why = std::strerror(errno);
    return "";
  }
  size_t done = 0;
  int error = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : ENOSPC;
      break;
    }
    done += static_cast<size_t>(n);
  }
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    ::unlink(tmp.c_str());
    *why = std::strerror(error);
    return "";
  }
  return tmp;
}

// ---- manifest.json ----

struct ObjectEntry {
  uint64_t size = 0;
  std::string sha256;
};
struct Manifest {
  std::map<std::string, ObjectEntry> objects;
  std::map<std::string, std::set<std::string>> models;  // model md5 -> kernel names
};

// Parses `text`; false (with `why`) when it is not a manifest of this version. (nlohmann's JSON,
// not LLVM's: llvm/Support/JSON.h does not compile under clang's C++20 with libstdc++ 12, which the
// fuzz build uses.)
bool ParseManifest(llvm::StringRef text, Manifest* m, std::string* why) {
  const nlohmann::json root = nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return *why = "not JSON", false;
  if (!root.is_object()) return *why = "not a JSON object", false;
  auto version = root.find("cache_version");
  if (version == root.end() || !version->is_string() || version->get<std::string>() != kCacheVersion)
    return *why = "not a manifest of cache version " + std::string(kCacheVersion), false;
  if (auto objects = root.find("objects"); objects != root.end() && objects->is_object()) {
    for (const auto& [name, e] : objects->items()) {
      if (!e.is_object() || !e.contains("size") || !e["size"].is_number_unsigned() || !e.contains("sha256") ||
          !e["sha256"].is_string())
        return *why = "object entry '" + name + "' lacks size or sha256", false;
      m->objects[name] = ObjectEntry{e["size"].get<uint64_t>(), e["sha256"].get<std::string>()};
    }
  }
  if (auto models = root.find("models"); models != root.end() && models->is_object()) {
    for (const auto& [md5, list] : models->items()) {
      if (!list.is_array()) return *why = "model entry '" + md5 + "' is not a list", false;
      for (const auto& k : list)
        if (k.is_string()) m->models[md5].insert(k.get<std::string>());
    }
  }
  return true;
}

std::string ManifestText(const Manifest& m) {
  nlohmann::json objects = nlohmann::json::object();
  for (const auto& [name, e] : m.objects) objects[name] = {{"size", e.size}, {"sha256", e.sha256}};
  nlohmann::json models = nlohmann::json::object();
  for (const auto& [md5, kernels] : m.models) models[md5] = std::vector<std::string>(kernels.begin(), kernels.end());
  const nlohmann::json root = {{"cache_version", kCacheVersion}, {"objects", objects}, {"models", models}};
  return root.dump(2) + "\n";
}

// The manifest of `dir` as on disk now (empty when absent; a garbage one is warned once and read
// as empty, so its objects are recompiled and the next save replaces it). Reads are memoized per
// (inode, size, mtime): a warm session reads it once.
struct ManifestMemo {
  ino_t ino = 0;
  off_t size = -1;
  int64_t mtime_ns = 0;
  Manifest manifest;
};
std::mutex manifests_mutex;
std::map<std::string, ManifestMemo>* manifests = new std::map<std::string, ManifestMemo>();

Manifest ReadManifest(const std::string& dir) {
  const std::string path = dir + "/" + kManifestName;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return {};
  const int64_t mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  {
    std::lock_guard<std::mutex> lock(manifests_mutex);
    auto it = manifests->find(dir);
    if (it != manifests->end() && it->second.ino == st.st_ino && it->second.size == st.st_size &&
        it->second.mtime_ns == mtime_ns)
      return it->second.manifest;
  }
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  Manifest m;
  std::string why;
  if (!buffer) {
    WarnOnce("manifest:" + path, "cache: " + path + " cannot be read (" + buffer.getError().message() +
                                     "); its objects are compiled again");
    return {};
  }
  if (!ParseManifest((*buffer)->getBuffer(), &m, &why)) {
    WarnOnce("manifest:" + path, "cache: " + path + " is not a valid manifest (" + why +
                                     "); its objects are compiled again and the manifest rewritten");
    m = Manifest();
  }
  std::lock_guard<std::mutex> lock(manifests_mutex);
  (*manifests)[dir] = ManifestMemo{st.st_ino, st.st_size, mtime_ns, m};
  return m;
}

// Holds the directory's advisory lock (flock on manifest.lock): manifest updates of every
// process, and the object renames that go with them, happen one at a time.
class DirectoryLock {
 public:
  explicit DirectoryLock(const std::string& dir) {
    const std::string path = dir + "/" + kLockName;
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      why_ = path + ": " + std::strerror(errno);
      return;
    }
    while (::flock(fd_, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      why_ = path + ": flock: " + std::strerror(errno);
      ::close(fd_);
      fd_ = -1;
      return;
    }
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);  // releases the lock
  }
  bool ok() const { return fd_ >= 0; }
  const std::string& why() const { return why_; }

 private:
  int fd_ = -1;
  std::string why_;
};

// In-process serialization per directory (flock is per open file description; threads of one
// process each open their own, which also works, but this keeps the memo consistent).
std::mutex& DirectoryMutex(const std::string& dir) {
  static std::mutex guard;
  static auto* mutexes = new std::map<std::string, std::unique_ptr<std::mutex>>();
  std::lock_guard<std::mutex> lock(guard);
  auto& m = (*mutexes)[dir];
  if (!m) m = std::make_unique<std::mutex>();
  return *m;
}

// Applies `change` to the manifest of `dir` and writes it, together with renaming `object_tmp`
// (if any) to `object_path`: both or neither. Returns "" or why not.
std::string UpdateManifest(const std::string& dir, const std::function<void(Manifest&)>& change,
                           const std::string& object_tmp = "", const std::string& object_path = "") {
  std::lock_guard<std::mutex> in_process(DirectoryMutex(dir));
  DirectoryLock lock(dir);
  if (!lock.ok()) return lock.why();
  Manifest m = ReadManifest(dir);
  change(m);
  const std::string path = dir + "/" + kManifestName;
  std::string why;
  const std::string tmp = WriteTemporary(path, ManifestText(m), &why);
  if (tmp.empty()) return path + ": " + why;
  if (!object_tmp.empty() && ::rename(object_tmp.c_str(), object_path.c_str()) != 0) {
    why = object_path + ": rename: " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return why;
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    why = path + ": rename: " + std::strerror(errno);
    ::unlink(tmp.c_str());
    return why;
  }
  return "";
}

// Why `bytes` is not an object defining `name` ("" when it is).
std::string CheckObject(llvm::MemoryBufferRef bytes, const std::string& name) {
  auto object = llvm::object::ObjectFile::createObjectFile(bytes);
  if (!object) return "not an object file (" + llvm::toString(object.takeError()) + ")";
  for (const llvm::object::SymbolRef& symbol : (*object)->symbols()) {
    auto symbol_name = symbol.getName();
    if (!symbol_name) {
      llvm::consumeError(symbol_name.takeError());
      continue;
    }
    if (*symbol_name != name) continue;
    auto flags = symbol.getFlags();
    if (!flags) {
      llvm::consumeError(flags.takeError());
      return "its symbol table is damaged";
    }
    if ((*flags & llvm::object::SymbolRef::SF_Undefined) || !(*flags & llvm::object::SymbolRef::SF_Global))
      return "it does not define " + name;
    auto section = symbol.getSection();
    if (!section) {
      llvm::consumeError(section.takeError());
      return "its symbol table is damaged";
    }
    return "";
  }
  return "it does not define " + name;
}

// Why the object at `path` (read into `bytes`) fails the manifest check ("" when it passes).
std::string CheckAgainstManifest(const Manifest& m, const std::string& name, llvm::StringRef bytes) {
  auto it = m.objects.find(name);
  if (it == m.objects.end()) return "it is not listed in manifest.json";
  if (it->second.size != bytes.size())
    return "its size " + std::to_string(bytes.size()) + " differs from the manifest's " + std::to_string(it->second.size);
  if (Sha256Hex(bytes) != it->second.sha256) return "its content hash differs from the manifest's";
  return "";
}

// ---- the AOT library ----

struct SharedLibrary {
  void* handle = nullptr;
  std::string checksum;  // "" when the library records none
};
std::mutex libraries_mutex;
std::map<std::string, SharedLibrary>* libraries = new std::map<std::string, SharedLibrary>();

// The library at `path`, opened once per process; null when it is not usable (warned once).
const SharedLibrary* OpenLibrary(const std::string& path) {
  std::lock_guard<std::mutex> lock(libraries_mutex);
  auto it = libraries->find(path);
  if (it != libraries->end()) return it->second.handle ? &it->second : nullptr;
  SharedLibrary& lib = (*libraries)[path];
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = ::dlerror();
    WarnOnce("so:" + path, "cache: " + path + " cannot be loaded (" + std::string(why ? why : "?") + "); using JIT...");
    return nullptr;
  }
  using TextFn = const char* (*)();
  auto version = reinterpret_cast<TextFn>(::dlsym(handle, kVersionSymbol));
  if (!version) {
    WarnOnce("so:" + path, "cache: " + path + " has no " + kVersionSymbol + " (not made by create_shared); using JIT...");
    ::dlclose(handle);
    return nullptr;
  }
  const std::string v = version() ? version() : "";
  if (v != kCacheVersion) {
    WarnOnce("so:" + path, "cache: " + path + " is cache version " + v + ", this runtime reads " + kCacheVersion +
                               "; using JIT...");
    ::dlclose(handle);
    return nullptr;
  }
  if (auto checksum = reinterpret_cast<TextFn>(::dlsym(handle, kChecksumSymbol)))
    lib.checksum = Lower(checksum() ? checksum() : "");
  lib.handle = handle;
  return &lib;
}

}  // namespace

CachePolicy CachePolicyFor(const NodeInfo& node) {
  CachePolicy p;
  const std::string path = node.setting("nuphar_cache_path");
  if (!path.empty()) p.dir = (fs::path(path) / kCacheVersion).string();
  p.so_name = node.setting("nuphar_cache_so_name");
  if (p.so_name.empty()) p.so_name = "jit.so";
  p.model_md5 = node.ModelChecksumFn();  // valid until the session is loaded, from any thread
  p.expected_md5 = Lower(node.setting("nuphar_cache_model_checksum"));
  p.force_no_jit = node.setting_is("nuphar_cache_force_no_jit", "on");  // R5: `on`, any case
  return p;
}

std::string ModelChecksum(const std::string& model_bytes) { return Md5Hex(model_bytes); }

std::string Md5Hex(llvm::StringRef bytes) {
  llvm::MD5 md5;
  md5.update(bytes);
  llvm::MD5::MD5Result result;
  md5.final(result);
  return result.digest().str().str();
}

void* FindInSharedLibrary(const CachePolicy& policy, const std::string& name) {
  if (!policy.enabled()) return nullptr;
  const std::string path = policy.dir + "/" + policy.so_name;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return nullptr;
  const SharedLibrary* lib = OpenLibrary(path);
  if (!lib) return nullptr;
  if (!lib->checksum.empty()) {
    const std::string model_md5 = policy.ModelMd5();
    const bool model_differs = !model_md5.empty() && model_md5 != lib->checksum;
    const bool setting_differs = !policy.expected_md5.empty() && policy.expected_md5 != lib->checksum;
    if (model_differs || setting_differs) {
      WarnOnce("checksum:" + path,
               "Cache checksum validation failed, using JIT... (" + path + " was built for model md5 " + lib->checksum +
                   (model_differs ? "; this model's is " + model_md5 : "") +
                   (setting_differs ? "; nuphar_cache_model_checksum is " + policy.expected_md5 : "") + ")");
      return nullptr;
    }
  }
  return ::dlsym(lib->handle, name.c_str());
}

std::unique_ptr<llvm::MemoryBuffer> LoadCachedObject(const CachePolicy& policy, const std::string& name) {
  if (!policy.enabled()) return nullptr;
  const std::string path = policy.dir + "/" + name + ".o";
  if (::access(path.c_str(), F_OK) != 0) return nullptr;
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) {
    Warn("cache: " + path + " cannot be read (" + buffer.getError().message() + "); compiling the kernel again");
    return nullptr;
  }
  std::string why = CheckAgainstManifest(ReadManifest(policy.dir), name, (*buffer)->getBuffer());
  if (why.empty()) why = CheckObject((*buffer)->getMemBufferRef(), name);
  if (!why.empty()) {
    Warn("cache: " + path + " is not used: " + why + "; compiling the kernel again");
    return nullptr;
  }
  return std::move(*buffer);
}

std::string VerifyObjectFile(const std::string& path, const std::string& name, bool check_manifest) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!buffer) return "cannot be read (" + buffer.getError().message() + ")";
  if (check_manifest) {
    std::string why = CheckAgainstManifest(ReadManifest(fs::path(path).parent_path().string()), name,
                                           (*buffer)->getBuffer());
    if (!why.empty()) return why;
  }
  return CheckObject((*buffer)->getMemBufferRef(), name);
}

void SaveCachedObject(const CachePolicy& policy, const std::string& name, llvm::StringRef object) {
  if (!policy.enabled()) return;
  std::error_code ec;
  fs::create_directories(policy.dir, ec);
  if (ec) {
    WarnOnce("dir:" + policy.dir, "cache: cannot create " + policy.dir + " (" + ec.message() +
                                      "); kernels are compiled and not saved");
    return;
  }
  const std::string path = policy.dir + "/" + name + ".o";
  std::string why;
  const std::string tmp = WriteTemporary(path, object, &why);
  if (tmp.empty()) {
    WarnOnce("save:" + policy.dir, "cache: cannot save " + path + " (" + why + "); kernels are compiled and not saved");
    return;
  }
  const std::string sha = Sha256Hex(object);
  const std::string model_md5 = policy.ModelMd5();
  why = UpdateManifest(
      policy.dir,
      [&](Manifest& m) {
        m.objects[name] = ObjectEntry{object.size(), sha};
        if (!model_md5.empty()) m.models[model_md5].insert(name);
      },
      tmp, path);
  if (!why.empty()) {
    ::unlink(tmp.c_str());
    WarnOnce("save:" + policy.dir, "cache: cannot save " + path + " (" + why + "); kernels are compiled and not saved");
  }
}

void ForgetObjects(const std::string& dir, const std::vector<std::string>& names) {
  const std::string why = UpdateManifest(dir, [&](Manifest& m) {
    for (const std::string& name : names) {
      std::error_code e;
      fs::remove(fs::path(dir) / (name + ".o"), e);
      m.objects.erase(name);
    }
  });
  if (!why.empty()) Warn("cache: the objects were not removed: " + why);
}

}  // namespace nuphar::jit
