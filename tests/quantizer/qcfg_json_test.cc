// qcfg JSON: round trip, the original's layout, and clear errors for unknown keys / bad values.
#include "quantizer/qcfg_json.h"

#include <gtest/gtest.h>

namespace nuphar::quant {
namespace {

TEST(QcfgJson, RoundTripKeepsOrder) {
  QcfgTable t = {{"b_out", *PresetConfig("symm16_param3_input3")}, {"a_out", *PresetConfig(kDefaultPreset)}};
  const std::string text = QcfgToJson(t);
  auto back = ParseQcfgJson(text, "<mem>");
  ASSERT_TRUE(back.ok()) << back.message();
  EXPECT_EQ(*back, t);
  EXPECT_LT(text.find("b_out"), text.find("a_out"));
}

TEST(QcfgJson, WritesTheOriginalsLayout) {
  const std::string text = QcfgToJson({{"y", *PresetConfig(kDefaultPreset)}});
  const std::string expected =
      "{\n  \"y\": {\n    \"W\": {\n      \"QuantizeBit\": 8,\n      \"QuantizationType\": \"Signed\",\n"
      "      \"ReservedBit\": 0\n    },\n    \"X\": {\n      \"QuantizeBit\": 8,\n"
      "      \"QuantizationType\": \"Unsigned\",\n      \"ReservedBit\": 1\n    },\n    \"Symmetric\": 0\n  }\n}";
  EXPECT_EQ(text, expected);
  EXPECT_EQ(QcfgToJson({}), "{}");
}

std::string Entry(const std::string& w, const std::string& x, const std::string& sym) {
  return "{\"y\": {\"W\": " + w + ", \"X\": " + x + ", \"Symmetric\": " + sym + "}}";
}
const std::string kW = R"({"QuantizeBit": 8, "QuantizationType": "Signed", "ReservedBit": 0})";
const std::string kX = R"({"QuantizeBit": 8, "QuantizationType": "Unsigned", "ReservedBit": 1})";

void ExpectError(const std::string& text, const std::string& needle) {
  auto r = ParseQcfgJson(text, "cfg.json");
  ASSERT_FALSE(r.ok()) << text;
  EXPECT_NE(r.message().find(needle), std::string::npos) << r.message();
  EXPECT_NE(r.message().find("cfg.json"), std::string::npos) << r.message();
}

TEST(QcfgJson, Errors) {
  ExpectError("{", "not valid JSON");
  ExpectError("[]", "top level");
  ExpectError(Entry(kW, kX, "0").substr(0, 5) + "}", "JSON");
  ExpectError("{\"y\": {\"W\": " + kW + ", \"X\": " + kX + ", \"Symmetric\": 0, \"Extra\": 1}}", "unknown key \"Extra\"");
  ExpectError("{\"y\": {\"W\": " + kW + ", \"Symmetric\": 0}}", "missing key \"X\"");
  ExpectError(Entry(R"({"QuantizeBit": 8, "QuantizationType": "signed", "ReservedBit": 0})", kX, "0"), "QuantizationType");
  ExpectError(Entry(R"({"QuantizeBit": 4, "QuantizationType": "Signed", "ReservedBit": 0})", kX, "0"), "8 or 16");
  ExpectError(Entry(R"({"QuantizeBit": 8, "QuantizationType": "Signed", "ReservedBit": 7})", kX, "0"), "no value bits");
  ExpectError(Entry(R"({"QuantizeBit": "8", "QuantizationType": "Signed", "ReservedBit": 0})", kX, "0"), "integer");
  ExpectError(Entry(R"({"QuantizeBit": 8, "QuantizationType": "Signed", "ReservedBit": 0, "Bits": 1})", kX, "0"), "unknown key");
  ExpectError(Entry(kW, kX, "2"), "Symmetric");
  ExpectError(Entry(kW, kX, "1"), "symmetric quantization needs signed");
  ExpectError(Entry(kW, R"({"QuantizeBit": 16, "QuantizationType": "Signed", "ReservedBit": 3})", "0"), "same QuantizeBit");
}

TEST(QcfgJson, PresetsAndConfigNumbers) {
  const NodeQuantConfig a = *PresetConfig("asymm8_param0_input1");
  EXPECT_EQ(a.w.q_min(), -128);
  EXPECT_EQ(a.w.q_max(), 127);
  EXPECT_EQ(a.w.q_range(), 127.5);
  EXPECT_EQ(a.x.q_min(), 0);
  EXPECT_EQ(a.x.q_max(), 127);
  EXPECT_EQ(a.x.q_range(), 128);
  const NodeQuantConfig s = *PresetConfig("symm16_param3_input3");
  EXPECT_EQ(s.w.q_min(), -4096);
  EXPECT_EQ(s.w.q_max(), 4095);
  EXPECT_EQ(s.w.q_range(), 4095.5);
  EXPECT_TRUE(s.symmetric);
  EXPECT_FALSE(PresetConfig("asymm4").ok());
}

}  // namespace
}  // namespace nuphar::quant
