// Speed check (issue 5 acceptance 5): quantizing a 5-layer bidirectional hidden-1024 LSTM model
// after to_scan. to_scan is not available here, so the model is built with the structure of
// fixtures/quantizer/lstm_scan.onnx: per layer and direction a top-level MatMul(X, W[I, 4H]) +
// Add feeding a Scan whose body holds MatMul(h, R[H, 4H]) and the cell ops.
// Timing is printed, never asserted (STYLE R15). The full-size case is behind the DISABLED_
// prefix: run it with --gtest_also_run_disabled_tests. Set NUPHAR_SPEED_MODEL_OUT=<path> to
// also save the float model, for timing the model_quantizer CLI end to end.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>

#include "graph/model_io.h"
#include "graph/tensor_data.h"
#include "quantizer/quantizer.h"

namespace nuphar::quant {
namespace {

onnx::TensorProto CheapRandomWeight(const std::string& name, int64_t k, int64_t n, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(k * n));
  uint32_t s = seed * 2654435761u + 1;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;  // LCG: cheap, deterministic; values in [-0.1, 0.1)
    x = (static_cast<float>(s >> 8) / 16777216.0f - 0.5f) * 0.2f;
  }
  return MakeTensor<float>(name, {k, n}, v);
}

onnx::NodeProto* Node(onnx::GraphProto* g, const std::string& op, const std::string& name,
                      std::vector<std::string> in, std::vector<std::string> out) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

void FloatValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name) {
  auto* v = list->Add();
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

onnx::ModelProto ScanLstmModel(int layers, int64_t input, int64_t hidden) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  m.add_opset_import()->set_version(11);
  auto* g = m.mutable_graph();
  FloatValue(g->mutable_input(), "input");
  std::string x = "input";
  int64_t in_size = input;
  for (int l = 0; l < layers; ++l) {
    std::vector<std::string> dir_outputs;
    for (int d = 0; d < 2; ++d) {
      const std::string p = "l" + std::to_string(l) + "_d" + std::to_string(d) + "_";
      *g->add_initializer() = CheapRandomWeight(p + "W", in_size, 4 * hidden, l * 2 + d);
      *g->add_initializer() = CheapRandomWeight(p + "B", 1, 4 * hidden, 100 + l * 2 + d);
      Node(g, "MatMul", p + "MatMul", {x, p + "W"}, {p + "xw"});
      Node(g, "Add", p + "Add", {p + "xw", p + "B"}, {p + "proj"});
      auto* scan = Node(g, "Scan", p + "Scan", {p + "h0", p + "c0", p + "proj"}, {p + "h", p + "c", p + "y"});
      auto* a = scan->add_attribute();
      a->set_name("body");
      a->set_type(onnx::AttributeProto::GRAPH);
      onnx::GraphProto* body = a->mutable_g();
      for (const char* in : {"h_in", "c_in", "x_t"}) FloatValue(body->mutable_input(), p + in);
      *body->add_initializer() = CheapRandomWeight(p + "R", hidden, 4 * hidden, 200 + l * 2 + d);
      Node(body, "MatMul", p + "body_MatMul", {p + "h_in", p + "R"}, {p + "hr"});
      Node(body, "Add", p + "body_Add", {p + "x_t", p + "hr"}, {p + "gates"});
      Node(body, "Sigmoid", p + "body_Sigmoid", {p + "gates"}, {p + "act"});
      Node(body, "Identity", p + "h_out", {p + "act"}, {p + "h_next"});
      Node(body, "Identity", p + "c_out", {p + "c_in"}, {p + "c_next"});
      Node(body, "Identity", p + "y_out", {p + "act"}, {p + "y_t"});
      for (const char* out : {"h_next", "c_next", "y_t"}) FloatValue(body->mutable_output(), p + out);
      auto* n = scan->add_attribute();
      n->set_name("num_scan_inputs");
      n->set_type(onnx::AttributeProto::INT);
      n->set_i(1);
      dir_outputs.push_back(p + "y");
    }
    const std::string concat = "l" + std::to_string(l) + "_out";
    Node(g, "Concat", concat, dir_outputs, {concat});
    x = concat;
    in_size = 2 * hidden;
  }
  FloatValue(g->mutable_output(), x);
  return m;
}

void TimeQuantize(int layers, int64_t input, int64_t hidden) {
  onnx::ModelProto model = ScanLstmModel(layers, input, hidden);
  if (const char* out = std::getenv("NUPHAR_SPEED_MODEL_OUT")) {
    ASSERT_TRUE(SaveModel(model, out).ok());
  }
  QuantizeOptions options;
  options.default_config = *PresetConfig(kDefaultPreset);
  options.only_for_scan = true;
  // CPU time as well as wall time: the shared 2-core machine is often oversubscribed.
  const auto t0 = std::chrono::steady_clock::now();
  const std::clock_t c0 = std::clock();
  auto report = Quantize(&model, options);
  const double only_scan_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double only_scan_cpu = static_cast<double>(std::clock() - c0) / CLOCKS_PER_SEC;
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(report->quantized.size(), static_cast<size_t>(layers * 2));

  onnx::ModelProto all = ScanLstmModel(layers, input, hidden);
  options.only_for_scan = false;
  const auto t1 = std::chrono::steady_clock::now();
  const std::clock_t c1 = std::clock();
  auto report_all = Quantize(&all, options);
  const double all_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  const double all_cpu = static_cast<double>(std::clock() - c1) / CLOCKS_PER_SEC;
  ASSERT_TRUE(report_all.ok()) << report_all.message();
  EXPECT_EQ(report_all->quantized.size(), static_cast<size_t>(layers * 4));
  std::printf("[ speed    ] %d-layer bidirectional LSTM-as-Scan, I=%lld H=%lld: Quantize --only_for_scan %.3f s "
              "(cpu %.3f s), all MatMuls %.3f s (cpu %.3f s)\n",
              layers, static_cast<long long>(input), static_cast<long long>(hidden), only_scan_s, only_scan_cpu, all_s,
              all_cpu);
}

TEST(QuantizerSpeed, TwoLayerHidden128) { TimeQuantize(2, 64, 128); }

TEST(QuantizerSpeed, DISABLED_FiveLayerBidirectionalHidden1024) { TimeQuantize(5, 128, 1024); }

}  // namespace
}  // namespace nuphar::quant
