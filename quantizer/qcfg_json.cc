// qcfg JSON import/export (spec §3.9) on nlohmann::ordered_json, which keeps key order so an
// exported file lists nodes in quantization order like the original's dict. nlohmann is used
// without exceptions: parse with allow_exceptions=false, check every type before reading.
#include "quantizer/qcfg_json.h"

#include <nlohmann/json.hpp>

#include <set>

namespace nuphar::quant {
namespace {

using Json = nlohmann::ordered_json;

Status CheckKeys(const Json& obj, const std::set<std::string>& allowed, const std::string& where) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!allowed.count(it.key())) return Diag::Msg(where + ": unknown key \"" + it.key() + "\"");
  }
  for (const auto& key : allowed) {
    if (!obj.contains(key)) return Diag::Msg(where + ": missing key \"" + key + "\"");
  }
  return Status::OK();
}

Expected<int> ReadInt(const Json& v, const std::string& where) {
  if (!v.is_number_integer()) return Diag::Msg(where + ": expected an integer, got " + v.dump());
  const int64_t i = v.get<int64_t>();
  if (i < 0 || i > 64) return Diag::Msg(where + ": value " + std::to_string(i) + " is out of range");
  return static_cast<int>(i);
}

Expected<QuantizeConfig> ReadSide(const Json& v, const std::string& where) {
  if (!v.is_object()) return Diag::Msg(where + ": expected an object");
  NUPHAR_RETURN_IF_ERROR(CheckKeys(v, {"QuantizeBit", "QuantizationType", "ReservedBit"}, where));
  QuantizeConfig c;
  NUPHAR_ASSIGN_OR_RETURN(c.type_bits, ReadInt(v["QuantizeBit"], where + ".QuantizeBit"));
  NUPHAR_ASSIGN_OR_RETURN(c.reserved_bits, ReadInt(v["ReservedBit"], where + ".ReservedBit"));
  const Json& type = v["QuantizationType"];
  if (!type.is_string() || (type != "Signed" && type != "Unsigned")) {
    return Diag::Msg(where + ".QuantizationType: expected \"Signed\" or \"Unsigned\", got " + type.dump());
  }
  c.is_signed = type == "Signed";
  return c;
}

Json WriteSide(const QuantizeConfig& c) {
  Json j = Json::object();
  j["QuantizeBit"] = c.type_bits;
  j["QuantizationType"] = c.is_signed ? "Signed" : "Unsigned";
  j["ReservedBit"] = c.reserved_bits;
  return j;
}

}  // namespace

Expected<QcfgTable> ParseQcfgJson(const std::string& text, const std::string& origin) {
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return Diag::File(origin, "qcfg JSON: not valid JSON");
  if (!root.is_object()) return Diag::File(origin, "qcfg JSON: the top level must be an object keyed by MatMul output name");
  QcfgTable table;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string where = "qcfg entry \"" + it.key() + "\"";
    const Json& entry = it.value();
    if (!entry.is_object()) return Diag::File(origin, where + ": expected an object");
    if (Status s = CheckKeys(entry, {"W", "X", "Symmetric"}, where); !s.ok()) return s.WithFile(origin);
    NodeQuantConfig cfg;
    auto w = ReadSide(entry["W"], where + ".W");
    if (!w.ok()) return w.status().WithFile(origin);
    auto x = ReadSide(entry["X"], where + ".X");
    if (!x.ok()) return x.status().WithFile(origin);
    cfg.w = *w;
    cfg.x = *x;
    const Json& sym = entry["Symmetric"];
    if (sym.is_boolean()) {
      cfg.symmetric = sym.get<bool>();
    } else if (sym.is_number_integer() && (sym.get<int64_t>() == 0 || sym.get<int64_t>() == 1)) {
      cfg.symmetric = sym.get<int64_t>() == 1;
    } else {
      return Diag::File(origin, where + ".Symmetric: expected 0 or 1, got " + sym.dump());
    }
    if (Status s = ValidateNodeConfig(cfg, where); !s.ok()) return s.WithFile(origin);
    table.emplace_back(it.key(), cfg);
  }
  return table;
}

std::string QcfgToJson(const QcfgTable& table) {
  Json root = Json::object();
  for (const auto& [output, cfg] : table) {
    Json entry = Json::object();
    entry["W"] = WriteSide(cfg.w);
    entry["X"] = WriteSide(cfg.x);
    entry["Symmetric"] = cfg.symmetric ? 1 : 0;
    root[output] = std::move(entry);
  }
  return root.dump(2);
}

}  // namespace nuphar::quant
