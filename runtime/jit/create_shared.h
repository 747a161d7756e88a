// create_shared (spec runtime.md R4 "AOT tool"): links the kernel cache's objects into one shared
// library, so a deployed process loads every kernel with dlopen and compiles nothing
// (nuphar_cache_force_no_jit:on). The tool tools/create_shared only parses flags and calls this.
#pragma once

#include <string>
#include <vector>

#include "graph/error.h"

namespace nuphar::jit {

struct SharedLibraryOptions {
  std::string dir;                    ///< the versioned cache directory <nuphar_cache_path>/<version>
  std::string output_name = "jit.so"; ///< written as dir/output_name (atomically)
  std::string input_model;            ///< when set, its md5 becomes the library's model checksum
  bool keep_input = false;            ///< keep the objects (and their manifest entries)
  std::string compiler;               ///< C++ driver; empty: $CXX, else c++
};

struct SharedLibraryReport {
  std::string output;                 ///< the library written
  std::vector<std::string> objects;   ///< kernels linked (k_<hash>)
  std::string model_md5;              ///< "" without input_model
};

/// Verifies every k_<hash>.o of the directory against manifest.json (a corrupt object is an error
/// naming it), compiles the version symbol (and the model checksum) with the system C++
/// toolchain, links everything with `c++ -shared` into a temporary file and renames it into place;
/// then, unless keep_input, deletes the objects. Any failure leaves no library behind.
Expected<SharedLibraryReport> CreateSharedLibrary(const SharedLibraryOptions& options);

/// The cache version this runtime writes and reads (the directory name under nuphar_cache_path).
const char* CacheVersion();

}  // namespace nuphar::jit
