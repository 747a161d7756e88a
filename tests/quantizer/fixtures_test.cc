// Issue 5 acceptance 1: every row of fixtures/quantizer/README.md, compared with the original
// tool's output: initializers bit for bit, node sequence with names/attributes/wiring, qcfg JSON.
// Allowed differences (spec Q1): the IR version (E2: max(input, required)).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <string>

#include "graph/model_io.h"
#include "model_compare.h"
#include "quantizer/qcfg_json.h"
#include "quantizer/quantizer.h"

namespace nuphar::quant {
namespace {

const std::string kDir = NUPHAR_SHARED_DIR "/fixtures/quantizer/";

onnx::ModelProto Load(const std::string& name) {
  onnx::ModelProto m;
  Status s = LoadModel(kDir + name, &m);
  EXPECT_TRUE(s.ok()) << s.message();
  return m;
}

QcfgTable LoadQcfg(const std::string& name) {
  auto text = ReadFile(kDir + name);
  EXPECT_TRUE(text.ok()) << text.message();
  auto table = ParseQcfgJson(*text, name);
  EXPECT_TRUE(table.ok()) << table.message();
  return table.ok() ? *table : QcfgTable{};
}

struct Row {
  std::string input;
  std::string expected;
  QuantizeOptions options;
};

QuantizeReport RunRow(const Row& row) {
  onnx::ModelProto model = Load(row.input);
  const int64_t input_ir = model.ir_version();
  auto report = Quantize(&model, row.options);
  EXPECT_TRUE(report.ok()) << report.message();
  if (!report.ok()) return {};
  const onnx::ModelProto expected = Load(row.expected);
  for (const auto& d : testing::CompareGraphs(expected.graph(), model.graph())) ADD_FAILURE() << d;
  // Opset imports equal; IR version follows E2 instead of the original's forced 5.
  EXPECT_EQ(expected.opset_import_size(), model.opset_import_size());
  for (int i = 0; i < std::min(expected.opset_import_size(), model.opset_import_size()); ++i) {
    EXPECT_EQ(expected.opset_import(i).domain(), model.opset_import(i).domain());
    EXPECT_EQ(expected.opset_import(i).version(), model.opset_import(i).version());
  }
  EXPECT_EQ(model.ir_version(), std::max<int64_t>(input_ir, 6));  // opset 11 -> IR 6
  return *report;
}

QuantizeOptions Defaults() {
  QuantizeOptions o;
  o.default_config = *PresetConfig(kDefaultPreset);
  return o;
}

TEST(QuantizerFixtures, OnlyForScan) {
  Row row{"lstm_scan.onnx", "only_for_scan.onnx", Defaults()};
  row.options.only_for_scan = true;
  const QuantizeReport r = RunRow(row);
  EXPECT_EQ(r.quantized.size(), 4u);
}

TEST(QuantizerFixtures, AllMatMuls) {
  const QuantizeReport r = RunRow({"lstm_scan.onnx", "all.onnx", Defaults()});
  EXPECT_EQ(r.quantized.size(), 8u);
  EXPECT_TRUE(r.messages.empty());
}

TEST(QuantizerFixtures, Symm16) {
  Row row{"lstm_scan.onnx", "symm16_all.onnx", Defaults()};
  row.options.default_config = *PresetConfig("symm16_param3_input3");
  RunRow(row);
}

TEST(QuantizerFixtures, SharedInput) {
  Row row{"lstm_scan.onnx", "shared_input.onnx", Defaults()};
  row.options.share_input_quantization = true;
  RunRow(row);
}

TEST(QuantizerFixtures, ExportQcfgJson) {
  const QuantizeReport r = RunRow({"lstm_scan.onnx", "all.onnx", Defaults()});
  const QcfgTable expected = LoadQcfg("qcfg.json");
  EXPECT_EQ(r.used_configs, expected);
  // Our writer's text parses back to the same table (JSON equality, order included).
  auto reparsed = ParseQcfgJson(QcfgToJson(r.used_configs), "<export>");
  ASSERT_TRUE(reparsed.ok()) << reparsed.message();
  EXPECT_EQ(*reparsed, expected);
}

TEST(QuantizerFixtures, MixedQcfg) {
  Row row{"lstm_scan.onnx", "mixed.onnx", Defaults()};
  row.options.node_configs = LoadQcfg("qcfg_mixed.json");
  ASSERT_EQ(row.options.node_configs.size(), 8u);
  const QuantizeReport r = RunRow(row);
  EXPECT_TRUE(r.messages.empty());  // every node has an entry: no fall-back warning
}

TEST(QuantizerFixtures, MatMulEdges) {
  const QuantizeReport r = RunRow({"matmul_edges.onnx", "matmul_edges_q.onnx", Defaults()});
  EXPECT_EQ(r.quantized.size(), 3u);
  // The shared weight W is quantized once and reused by the second MatMul.
  ASSERT_GE(r.quantized.size(), 2u);
  EXPECT_FALSE(r.quantized[0].weight_reused);
  EXPECT_TRUE(r.quantized[1].weight_reused);
  EXPECT_EQ(r.skipped.size(), 2u);  // weight that is a graph input; rank-3 weight
}

TEST(QuantizerFixtures, MatMulEdgesSharedInput) {
  Row row{"matmul_edges.onnx", "matmul_edges_q_shared.onnx", Defaults()};
  row.options.share_input_quantization = true;
  RunRow(row);
}

}  // namespace
}  // namespace nuphar::quant
