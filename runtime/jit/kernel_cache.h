// The JIT's kernel cache on disk and the AOT shared library (spec runtime.md R4, §8.4).
//
//   <nuphar_cache_path>/<kCacheVersion>/
//       k_<hash>.o      one relocatable, position-independent object per kernel, defining k_<hash>
//       manifest.json   per object its size and SHA-256; per model md5 the kernels it compiled
//       jit.so          the AOT library create_shared links from the objects (nuphar_cache_so_name)
//
// The hash is the kernel's key (jit_engine.cc KernelKey): SHA-256 over the unoptimized LLVM IR of
// the kernel (static dims, dtypes, loop structure), the codegen options, the target's CPU and
// features, the LLVM version and kCacheVersion. There are no counters: different models never
// collide, and identical kernels share one object.
//
// Lookup per kernel: the AOT library, then k_<hash>.o (verified against the manifest and parsed:
// it must define k_<hash>), then the compiler, whose object is saved when a cache path is set.
// Every fault (a truncated, garbage or unlisted object, a garbage manifest, a library of another
// version or model, an unwritable directory, a full disk) is a warning through graph/diagnostics.h
// and a recompile; files are written to a temporary name and renamed, so a reader never sees a
// partial file; object and manifest change together under an advisory lock (flock), so two
// processes filling one directory leave every object verifiable.
//
// Only runtime/jit/ includes this header (the engine, load_cache.cc, and create_shared.cc for the tool).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "graph/error.h"

namespace llvm {
class MemoryBuffer;
class StringRef;
}  // namespace llvm

namespace nuphar {
class NodeInfo;
}

namespace nuphar::jit {

/// The cache and ABI version (semver, R4): bump it whenever generated code or the calling
/// convention may change. Objects and libraries of another version are never loaded: they live
/// in another directory, the version is part of every key, and a library's version symbol must
/// equal it.
inline constexpr const char kCacheVersion[] = "1.1.0";  // 1.1.0: Log calls the vector math

/// Symbols create_shared adds to an AOT library: `const char* nuphar_cache_version(void)` and,
/// with --input_model, `const char* nuphar_cache_model_md5(void)`.
inline constexpr const char kVersionSymbol[] = "nuphar_cache_version";
inline constexpr const char kChecksumSymbol[] = "nuphar_cache_model_md5";

/// How a session's kernels are looked up and saved (the nuphar_cache_* settings).
struct CachePolicy {
  std::string dir;              ///< <nuphar_cache_path>/<kCacheVersion>; empty: no cache
  std::string so_name;          ///< nuphar_cache_so_name (default jit.so)
  /// md5 hex of the bytes the session loaded (NodeInfo::model_checksum), asked only when needed:
  /// an AOT library records a checksum, or an object is saved (the manifest lists it per model).
  std::function<std::string()> model_md5;
  std::string expected_md5;     ///< nuphar_cache_model_checksum, lower-cased; empty when unset
  bool force_no_jit = false;    ///< nuphar_cache_force_no_jit:on
  bool enabled() const { return !dir.empty(); }
  std::string ModelMd5() const { return model_md5 ? model_md5() : std::string(); }
};

/// The policy of `node`'s session.
CachePolicy CachePolicyFor(const NodeInfo& node);

/// Where a kernel's code came from.
enum class CodeSource { kCompiled, kObjectCache, kSharedLibrary };

/// Address of `name` in the policy's AOT library, or null: no library, not usable (another
/// version, another model's checksum, not loadable: each warned once per library), or the
/// library does not define it. The library is opened once per process.
void* FindInSharedLibrary(const CachePolicy& policy, const std::string& name);

/// The verified object `<dir>/<name>.o`, or null (absent, or failed verification: warned).
std::unique_ptr<llvm::MemoryBuffer> LoadCachedObject(const CachePolicy& policy, const std::string& name);

/// Saves `object` as `<dir>/<name>.o` and lists it (and the model's use of it) in the manifest.
/// A failure is a warning; nothing partial is left behind.
void SaveCachedObject(const CachePolicy& policy, const std::string& name, llvm::StringRef object);

/// Reports the warning `line` once per process for `key` (a library path, a directory): a cache
/// fault that every session would meet again is said once.
void WarnOnce(const std::string& key, const std::string& line);

/// SHA-256 hex (lower case) of `bytes`: kernel keys and the manifest's content hashes.
std::string Sha256Hex(llvm::StringRef bytes);

/// md5 hex (lower case) of `bytes`: the model checksum of R4.
std::string Md5Hex(llvm::StringRef bytes);

/// Why `path` is not a usable cache object for kernel `name` ("" when it is): it parses as an
/// object file and defines `name`; with `check_manifest`, its size and SHA-256 also match its
/// directory's manifest.json.
std::string VerifyObjectFile(const std::string& path, const std::string& name, bool check_manifest);

/// Deletes the objects `names` of `dir` and their manifest entries (create_shared without
/// --keep_input).
void ForgetObjects(const std::string& dir, const std::vector<std::string>& names);

}  // namespace nuphar::jit
