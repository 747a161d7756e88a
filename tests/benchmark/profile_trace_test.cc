// The profiler's trace (runtime/core/profiler.h) on an int8 LSTM H512 model (rnn_benchmark's
// pipeline: generate, to_scan, quantize): valid JSON, every event has ph/ts/dur/name, the main
// graph's kernel events add up to within 10% of the Run time measured around Session::Run, and
// Scan body nodes are aggregated per invocation and nested inside their Scan event.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "benchmark/rnn_model_gen.h"
#include "editor/editor.h"
#include "graph/model_io.h"
#include "quantizer/quantizer.h"
#include "runtime/core/profiler.h"
#include "runtime/session.h"
#include "shape_infer/shape_infer.h"
#include "tools/common/tensor_files.h"

namespace nuphar {
namespace {

namespace fs = std::filesystem;

onnx::ModelProto Int8LstmH512() {
  bench::RnnModelSpec spec;  // input 80, hidden 512, 1 layer, seq symbolic, batch 1
  spec.hidden_dim = 512;
  auto model = bench::MakeRnnModel(spec);
  NUPHAR_CHECK(model.ok(), "generator");
  NUPHAR_CHECK(editor::RunEditor("to_scan", &*model, {}).ok(), "to_scan");
  NUPHAR_CHECK(InferShapes(&*model, {}).ok(), "shape inference");
  NUPHAR_CHECK(quant::Quantize(&*model, {}).ok(), "quantizer");
  return *model;
}

TEST(ProfileTrace, Int8LstmH512EventsCoverTheRunTime) {
  const fs::path trace = fs::temp_directory_path() / ("profile_" + std::to_string(::getpid()) + ".json");
  SessionOptions so;
  so.settings = "nuphar_profile_file:" + trace.string();
  auto session = Session::CreateFromModel(Int8LstmH512(), so);
  ASSERT_TRUE(session) << session.message();
  tools::InputSpec spec;
  spec.dims = {{"seq", 100}};
  auto inputs = tools::MakeInputs(**session, spec);
  ASSERT_TRUE(inputs) << inputs.message();
  constexpr int kRuns = 12;
  double measured_us = 0;
  for (int i = 0; i < kRuns; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    auto out = (*session)->Run(*inputs);
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_TRUE(out) << out.message();
    measured_us += std::chrono::duration<double, std::micro>(t1 - t0).count();
  }
  auto written = (*session)->EndProfiling();
  ASSERT_TRUE(written) << written.message();
  EXPECT_EQ(*written, trace.string());
  auto text = ReadFile(trace.string());
  ASSERT_TRUE(text);
  fs::remove(trace);

  const auto events = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(events.is_discarded()) << "the trace is not valid JSON";
  ASSERT_TRUE(events.is_array());
  int runs = 0, top_level = 0, fused = 0;
  double kernel_us = 0;
  const nlohmann::json* scan = nullptr;
  for (const auto& e : events) {
    for (const char* key : {"ph", "ts", "dur", "name"}) ASSERT_TRUE(e.contains(key)) << key << " missing in " << e.dump();
    ASSERT_EQ(e["ph"], "X");
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number() && e["name"].is_string()) << e.dump();
    ASSERT_GE(e["dur"].get<double>(), 0);
    if (e["name"] == "model_run") ++runs;
    if (e["cat"] != "Node") continue;
    ASSERT_TRUE(e["args"].contains("op_name") && e["args"].contains("path") && e["args"].contains("input_type_shape"));
    if (e["args"]["path"] == "fused_ngemm") ++fused;
    if (e["args"]["depth"] == 0) {
      ++top_level;
      kernel_us += e["dur"].get<double>();
      if ((e["args"]["op_name"] == "Scan" || e["args"]["op_name"] == "JitScan") && !scan) scan = &e;
    }
  }
  EXPECT_EQ(runs, kRuns);
  EXPECT_GT(fused, 0) << "the quantizer's pattern must show as fused NGEMM kernels";
  EXPECT_GE(top_level, kRuns * 3);
  const double ratio = kernel_us / measured_us;
  std::printf("kernel events %.1f us, measured Run time %.1f us over %d runs: %.3f\n", kernel_us, measured_us, kRuns, ratio);
  EXPECT_GT(ratio, 0.90);
  EXPECT_LT(ratio, 1.0 + 1e-6);

  // The first Scan's body nodes: one aggregated event each, inside the Scan's span. A Scan the
  // JIT compiled as one loop (JitScan) shows step 0 only, which runs on the executor; the other
  // 99 steps are the generated loop, part of the Scan's own event.
  ASSERT_NE(scan, nullptr);
  const bool generated_loop = (*scan)["args"]["op_name"] == "JitScan";
  EXPECT_TRUE(generated_loop) << "an int8 LSTM Scan is one generated loop";
  const std::string prefix = (*scan)["name"].get<std::string>().substr(0, (*scan)["name"].get<std::string>().size() -
                                                                             std::string("_kernel_time").size()) + "/";
  const double s0 = (*scan)["ts"].get<double>(), s1 = s0 + (*scan)["dur"].get<double>();
  double body_us = 0;
  int body_nodes = 0;
  for (const auto& e : events) {
    if (e["cat"] != "Node" || e["args"]["depth"] != 1 || e["name"].get<std::string>().rfind(prefix, 0) != 0) continue;
    if (e["ts"].get<double>() < s0 || e["ts"].get<double>() > s1) continue;  // another run's Scan
    ++body_nodes;
    EXPECT_EQ(e["args"]["steps"], generated_loop ? 1 : 100) << e["name"];
    body_us += e["dur"].get<double>();
    EXPECT_LE(e["ts"].get<double>() + e["dur"].get<double>(), s1 + 0.01) << "nested inside the Scan event";
  }
  EXPECT_GE(body_nodes, 2);
  EXPECT_LE(body_us, s1 - s0 + 0.01);
  if (!generated_loop) EXPECT_GT(body_us, 0.5 * (s1 - s0)) << "the body's kernels are most of the Scan";
}

// With two threads the forward and reverse Scans of a bidirectional layer run side by side: each
// keeps its body events, and the second is on a trace row (tid) of its own.
TEST(ProfileTrace, BidirectionalScansRunSideBySide) {
  bench::RnnModelSpec spec;
  spec.hidden_dim = 64;
  spec.input_dim = 16;
  spec.bidirectional = true;
  auto model = bench::MakeRnnModel(spec);
  ASSERT_TRUE(model);
  ASSERT_TRUE(editor::RunEditor("to_scan", &*model, {}).ok());
  const fs::path trace = fs::temp_directory_path() / ("profile_bi_" + std::to_string(::getpid()) + ".json");
  SessionOptions so;
  so.settings = "nuphar_num_threads:2, nuphar_profile_file:" + trace.string();
  auto session = Session::CreateFromModel(*model, so);
  ASSERT_TRUE(session) << session.message();
  tools::InputSpec spec_in;
  spec_in.dims = {{"seq", 20}};
  auto inputs = tools::MakeInputs(**session, spec_in);
  ASSERT_TRUE(inputs && (*session)->Run(*inputs));
  ASSERT_TRUE((*session)->EndProfiling());
  auto text = ReadFile(trace.string());
  ASSERT_TRUE(text);
  fs::remove(trace);
  const auto events = nlohmann::json::parse(*text, nullptr, false);
  ASSERT_FALSE(events.is_discarded());
  std::vector<nlohmann::json> scans;
  std::map<std::string, int> body_nodes;
  for (const auto& e : events) {
    if (e["cat"] != "Node") continue;
    if (e["args"]["depth"] == 0 && (e["args"]["op_name"] == "Scan" || e["args"]["op_name"] == "JitScan"))
      scans.push_back(e);
    if (e["args"]["depth"] == 1) {
      // Step 0 of a generated loop runs on the executor (see above); the others are the loop.
      EXPECT_EQ(e["args"]["steps"], 1) << e["name"];
      const std::string name = e["name"];
      ++body_nodes[name.substr(0, name.find('/'))];
    }
  }
  ASSERT_EQ(scans.size(), 2u);
  EXPECT_NE(scans[0]["tid"], scans[1]["tid"]) << "the two sides of the pair are on separate rows";
  for (const auto& s : scans) {
    const std::string name = s["name"];
    EXPECT_GE(body_nodes[name.substr(0, name.size() - std::string("_kernel_time").size())], 2) << name;
  }
}

TEST(ProfileTrace, OffByDefaultAndInMemoryWithoutAFile) {
  bench::RnnModelSpec spec;
  spec.hidden_dim = 8;
  spec.input_dim = 4;
  auto model = bench::MakeRnnModel(spec);
  ASSERT_TRUE(model);
  auto off = Session::CreateFromModel(*model);
  ASSERT_TRUE(off);
  EXPECT_EQ((*off)->profiler(), nullptr);
  EXPECT_NE((*off)->EndProfiling().message().find("profiling is off"), std::string::npos);

  SessionOptions so;
  so.enable_profiling = true;
  auto on = Session::CreateFromModel(*model, so);
  ASSERT_TRUE(on);
  tools::InputSpec in;
  in.dims = {{"seq", 3}};
  auto inputs = tools::MakeInputs(**on, in);
  ASSERT_TRUE(inputs && (*on)->Run(*inputs));
  ASSERT_NE((*on)->profiler(), nullptr);
  double kernel_ms = 0, run_ms = 0;
  int64_t runs = 0;
  const auto totals = (*on)->profiler()->Totals(&kernel_ms, &run_ms, &runs);
  EXPECT_EQ(runs, 1);
  ASSERT_FALSE(totals.empty());
  bool lstm = false;
  for (const auto& t : totals) lstm |= t.name == "lstm0" && t.op_type == "LSTM" && t.calls == 1;
  EXPECT_TRUE(lstm);
  EXPECT_NE((*on)->EndProfiling().message().find("no file"), std::string::npos);
}

}  // namespace
}  // namespace nuphar
