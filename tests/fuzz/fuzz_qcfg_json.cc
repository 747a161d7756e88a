// libFuzzer target: the quantizer's qcfg JSON reader (quantizer/qcfg_json.h), and writing back
// what it accepted.
#include <cstddef>
#include <cstdint>
#include <string>

#include "quantizer/qcfg_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto table = nuphar::quant::ParseQcfgJson(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json");
  if (table.ok()) (void)nuphar::quant::QcfgToJson(*table);
  return 0;
}
