// libFuzzer target: the runtime settings string parser (runtime/core/settings.h).
#include <cstddef>
#include <cstdint>
#include <string>

#include "runtime/core/settings.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> warnings;
  auto settings = nuphar::Settings::Parse(text, &warnings);
  if (settings.ok()) {
    (void)settings->GetInt("nuphar_num_threads", 1);
    (void)settings->Is("nuphar_execution_mode", "jit");
  }
  return 0;
}
