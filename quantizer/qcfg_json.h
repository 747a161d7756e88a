// qcfg JSON: the original's per-node quantization config file (spec §3.9).
//
//   { "<matmul output>": { "W": {"QuantizeBit": 8, "QuantizationType": "Signed", "ReservedBit": 0},
//                          "X": {"QuantizeBit": 8, "QuantizationType": "Unsigned", "ReservedBit": 1},
//                          "Symmetric": 0 }, ... }
//
// Unlike the original (which treats any type string but "Signed" as unsigned and crashes on a
// missing key), unknown keys, missing keys and bad values are errors naming the entry.
#pragma once

#include <string>

#include "graph/error.h"
#include "quantizer/quantizer.h"

namespace nuphar::quant {

/// Parses and validates (ValidateNodeConfig) every entry. `origin` names the file in errors.
Expected<QcfgTable> ParseQcfgJson(const std::string& text, const std::string& origin);
/// The original's json.dumps(indent=2) layout, entries and keys in table order.
std::string QcfgToJson(const QcfgTable& table);

}  // namespace nuphar::quant
