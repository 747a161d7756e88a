// libFuzzer target: model bytes -> Session::CreateFromBytes (load, checks, plan compile, kernel
// creation, load-time folding). Every outcome but an error value or a session is a bug.
#include <cstddef>
#include <cstdint>

#include "runtime/session.h"
#include "tests/fuzz/model_mutator.h"

NUPHAR_FUZZ_USE_MODEL_MUTATOR

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nuphar::SessionOptions options;
  auto session = nuphar::Session::CreateFromBytes(data, size, options);
  (void)session.ok();
  return 0;
}
