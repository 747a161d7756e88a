// libFuzzer target: tensor files as the tools read them (tools/common/tensor_files.h): byte 0
// picks a serialized TensorProto (.pb) or a raw .bin with its .json sidecar (the JSON is the
// text up to the first NUL, the payload the rest). Files go to a private temp folder.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "tools/common/tensor_files.h"

namespace {

const std::filesystem::path& Dir() {
  static const std::filesystem::path dir = [] {
    auto d = std::filesystem::temp_directory_path() / ("nuphar_fuzz_tensor_" + std::to_string(getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

void Write(const std::filesystem::path& p, const uint8_t* data, size_t size) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  if (data[0] % 2 == 0) {
    const auto path = Dir() / "t.pb";
    Write(path, data + 1, size - 1);
    (void)nuphar::tools::ReadTensorFile(path.string()).ok();
  } else {
    const uint8_t* body = data + 1;
    const size_t n = size - 1;
    const void* nul = std::memchr(body, 0, n);
    const size_t json_len = nul ? static_cast<size_t>(static_cast<const uint8_t*>(nul) - body) : n;
    Write(Dir() / "t.json", body, json_len);
    Write(Dir() / "t.bin", body + json_len + (nul ? 1 : 0), n - json_len - (nul ? 1 : 0));
    (void)nuphar::tools::ReadTensorFile((Dir() / "t.bin").string()).ok();
  }
  return 0;
}
