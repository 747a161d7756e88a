// The build id of the running runtime: caches of what the runtime derived from a model
// (runtime/jit/load_cache.h) are only read back by the same build.
#pragma once

#include <string>

namespace nuphar {

/// Hex of the GNU build-id note (ld --build-id) of the executable or shared library this code is
/// linked into; "" when it has none (then nothing derived by "this build" can be recognized).
/// Read once per process.
const std::string& RuntimeBuildId();

}  // namespace nuphar
