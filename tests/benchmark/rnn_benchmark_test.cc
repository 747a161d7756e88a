// libnuphar_benchmark: the C++ model generator against make_rnn_model.py (bit-identical weights,
// same graph), --sweep expansion, and one small end-to-end RunBenchmark with its result files.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <onnx/onnx_pb.h>

#include <cstdlib>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "benchmark/rnn_benchmark.h"
#include "benchmark/rnn_model_gen.h"
#include "graph/model_io.h"
#include "graph/node_builder.h"
#include "graph/tensor_data.h"
#include "tools/common/tensor_files.h"

namespace nuphar::bench {
namespace {

namespace fs = std::filesystem;

struct GenCase {
  std::string op;
  int64_t layers;
  bool bidirectional, lbr;
};

class GeneratorVsPython : public ::testing::TestWithParam<GenCase> {};

TEST_P(GeneratorVsPython, SameGraphAndBitIdenticalWeights) {
  const GenCase& c = GetParam();
  const std::string script = std::string(NUPHAR_SHARED_DIR) + "/peer/make_rnn_model.py";
  if (!fs::exists(script) || std::system("/usr/bin/python3 -c 'import onnx, numpy' 2>/dev/null") != 0)
    GTEST_SKIP() << "needs " << script << " and Debian's python3-onnx";
  const fs::path out = fs::temp_directory_path() / ("gen_" + c.op + std::to_string(::getpid()) + ".onnx");
  const std::string cmd = "/usr/bin/python3 " + script + " --op " + c.op + " --input_dim 12 --hidden_dim 16 --layers " +
                          std::to_string(c.layers) + (c.bidirectional ? " --bidirectional" : "") +
                          (c.lbr ? " --linear_before_reset 1" : "") + " --seed 7 -o " + out.string() + " > /dev/null";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  onnx::ModelProto py;
  ASSERT_TRUE(LoadModel(out.string(), &py).ok());
  fs::remove(out);

  RnnModelSpec spec;
  spec.op = c.op;
  spec.input_dim = 12;
  spec.hidden_dim = 16;
  spec.layers = c.layers;
  spec.bidirectional = c.bidirectional;
  spec.linear_before_reset = c.lbr;
  spec.seed = 7;
  auto ours = MakeRnnModel(spec);
  ASSERT_TRUE(ours) << ours.message();
  const auto& g = ours->graph();
  ASSERT_EQ(g.node_size(), py.graph().node_size());
  for (int i = 0; i < g.node_size(); ++i) {
    const auto &a = g.node(i), &b = py.graph().node(i);
    EXPECT_EQ(a.op_type(), b.op_type());
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(std::vector<std::string>(a.input().begin(), a.input().end()),
              std::vector<std::string>(b.input().begin(), b.input().end()));
    EXPECT_EQ(a.output(0), b.output(0));
    for (const auto& attr : b.attribute()) {
      const auto* mine = FindAttr(a, attr.name());
      ASSERT_NE(mine, nullptr) << a.name() << " lacks " << attr.name();
      EXPECT_EQ(mine->SerializeAsString(), attr.SerializeAsString()) << a.name() << "." << attr.name();
    }
    EXPECT_EQ(a.attribute_size(), b.attribute_size()) << a.name();
  }
  ASSERT_EQ(g.initializer_size(), py.graph().initializer_size());
  for (int i = 0; i < g.initializer_size(); ++i) {
    const auto &a = g.initializer(i), &b = py.graph().initializer(i);
    EXPECT_EQ(a.name(), b.name());
    EXPECT_EQ(std::vector<int64_t>(a.dims().begin(), a.dims().end()), std::vector<int64_t>(b.dims().begin(), b.dims().end()));
    EXPECT_EQ(TensorBytes(a).value(), TensorBytes(b).value()) << "initializer " << a.name() << " differs";
  }
  EXPECT_EQ(g.output(0).name(), py.graph().output(0).name());
}

INSTANTIATE_TEST_SUITE_P(Ops, GeneratorVsPython,
                         ::testing::Values(GenCase{"lstm", 2, true, false}, GenCase{"gru", 2, false, true},
                                           GenCase{"rnn", 3, false, false}),
                         [](const auto& info) { return info.param.op; });

TEST(RnnModelGen, RefusesBadSpecs) {
  RnnModelSpec s;
  s.op = "transformer";
  EXPECT_NE(MakeRnnModel(s).message().find("not one of lstm, gru, rnn"), std::string::npos);
  s.op = "lstm";
  s.hidden_dim = 0;
  EXPECT_FALSE(MakeRnnModel(s));
  s.hidden_dim = 4;
  s.opset = 6;
  EXPECT_NE(MakeRnnModel(s).message().find("opset 6"), std::string::npos);
}

TEST(Sweeps, ProductWithFirstSweepSlowest) {
  BenchConfig base;
  auto configs = ExpandSweeps(base, {"rnn_type=lstm,gru", "hidden=8,16,32"});
  ASSERT_TRUE(configs) << configs.message();
  ASSERT_EQ(configs->size(), 6u);
  EXPECT_EQ((*configs)[0].rnn_type, "lstm");
  EXPECT_EQ((*configs)[0].hidden_dim, 8);
  EXPECT_EQ((*configs)[2].hidden_dim, 32);
  EXPECT_EQ((*configs)[3].rnn_type, "gru");
  EXPECT_EQ((*configs)[3].hidden_dim, 8);
  auto flags = ExpandSweeps(base, {"bidirectional=0,1", "seq=5", "threads=2", "linear_before_reset=1", "batch_size=3"});
  ASSERT_TRUE(flags);
  EXPECT_TRUE((*flags)[1].bidirectional && (*flags)[1].linear_before_reset);
  EXPECT_EQ((*flags)[1].seq_len, 5);
  EXPECT_EQ((*flags)[1].num_threads, 2);
  EXPECT_EQ((*flags)[1].batch_size, 3);
  EXPECT_NE(ExpandSweeps(base, {"width=3"}).message().find("unknown key 'width'"), std::string::npos);
  EXPECT_NE(ExpandSweeps(base, {"hidden=12,x"}).message().find("'x' is not a positive integer"), std::string::npos);
  EXPECT_NE(ExpandSweeps(base, {"hidden"}).message().find("is not KEY=V1,V2"), std::string::npos);
  EXPECT_NE(ExpandSweeps(base, {"rnn_type=lstm,cnn"}).message().find("'cnn'"), std::string::npos);
}

BenchOptions SmallOptions(const std::string& dir) {
  BenchOptions o;
  o.min_seconds = 0.02;
  o.min_runs = 4;
  o.top_n = 2;
  o.model_dir = dir;
  o.make_inputs = [](const Session& s, const std::map<std::string, int64_t>& dims) {
    tools::InputSpec spec;
    spec.dims = dims;
    return tools::MakeInputs(s, spec);
  };
  return o;
}

TEST(RunBenchmark, EndToEndSmallBidirectionalLstmAndGruBatch) {
  const fs::path dir = fs::temp_directory_path() / ("rnn_bench_test_" + std::to_string(::getpid()));
  BenchConfig lstm;
  lstm.input_dim = 8;
  lstm.hidden_dim = 16;
  lstm.layers = 2;
  lstm.bidirectional = true;
  lstm.seq_len = 6;
  lstm.num_threads = 1;
  BenchConfig gru = lstm;
  gru.rnn_type = "gru";
  gru.bidirectional = false;
  gru.linear_before_reset = true;
  gru.batch_size = 3;  // symbolic batch dim, as the original for batch > 1
  std::vector<BenchResult> results;
  for (const BenchConfig& c : {lstm, gru}) {
    auto r = RunBenchmark(c, SmallOptions(dir.string()));
    ASSERT_TRUE(r) << c.Label() << ": " << r.message();
    for (Engine e : {Engine::kRnn, Engine::kScan, Engine::kInt8}) {
      EXPECT_GE(r->at(e).runs, 4) << EngineName(e);
      EXPECT_GT(r->at(e).top_n_avg_ms, 0);
      EXPECT_LE(r->at(e).min_ms, r->at(e).median_ms);
    }
    EXPECT_FALSE(r->at(Engine::kOrtRnn).measured());
    EXPECT_GT(r->quantized_matmuls, 0);
    EXPECT_LT(r->scan_max_abs, 1e-5) << "to_scan must not change the float result";
    EXPECT_GT(r->int8_max_abs, 0) << "int8 cannot be exact";
    EXPECT_LT(r->int8_max_abs, 0.05 * r->output_absmax + 1e-3);
    EXPECT_TRUE(fs::exists(r->model_file));
    results.push_back(*r);
  }
  BenchOptions only_scan = SmallOptions(dir.string());
  only_scan.only_for_scan = true;
  auto scan_only = RunBenchmark(lstm, only_scan);
  ASSERT_TRUE(scan_only) << scan_only.message();
  EXPECT_EQ(scan_only->quantized_matmuls, results[0].quantized_matmuls / 2)
      << "--only_for_scan leaves the hoisted input projection (one per layer and direction) float";
  fs::remove_all(dir);

  const std::string csv = ResultsCsv(results);
  EXPECT_EQ(csv.rfind("rnn_type,threads,hidden,seq_len,batch_size,avg_rnn,avg_nuphar_fp,avg_nuphar_int8,speedup_fp,"
                      "speedup_int8,",
                      0),
            0u);
  std::istringstream lines(csv);
  std::string header, row;
  std::getline(lines, header);
  std::getline(lines, row);
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), std::count(row.begin(), row.end(), ','));
  EXPECT_EQ(row.rfind("lstm,1,16,6,1,", 0), 0u) << row;

  const auto json = nlohmann::json::parse(ResultsJson(results, DescribeMachine(), SmallOptions("")));
  ASSERT_EQ(json["results"].size(), 2u);
  EXPECT_EQ(json["results"][1]["config"]["batch_size"], 3);
  EXPECT_TRUE(json["results"][0]["engines"].contains("int8"));
  EXPECT_FALSE(json["machine"]["isa_tier"].get<std::string>().empty());

  const std::string auto_csv = OriginalAutoCsv(results, "single thread test", {"rnn_type", "hidden", "seq_len"});
  EXPECT_EQ(auto_csv.rfind("single thread test\nrnn_type,hidden,seq_len,avg_rnn,avg_nuphar_fp,avg_nuphar_int8,"
                           "speedup_fp,speedup_int8\nlstm,16,6,",
                           0),
            0u)
      << auto_csv;

  const std::string html = ReportHtml(results, DescribeMachine(), "rnn_benchmark --test");
  for (const char* id : {"<svg id=\"latency\"", "<svg id=\"speedup\"", "<svg id=\"error\""})
    EXPECT_NE(html.find(id), std::string::npos) << id;
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_NE(html.find("h16 l2 s6 t1"), std::string::npos) << "the common fields go to the title";
}

// The tool: exit codes, messages, and the three files of a good run (nothing written on error).
std::string RunTool(const std::string& args, int* code) {
  const std::string cmd = std::string(NUPHAR_BIN_DIR) + "/rnn_benchmark " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::string out;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  const int status = pclose(p);
  *code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(RnnBenchmarkTool, ExitCodesAndFiles) {
  const fs::path dir = fs::temp_directory_path() / ("rnn_bench_cli_" + std::to_string(::getpid()));
  int code = 0;
  std::string out = RunTool("--rnn_type cnn --out " + dir.string(), &code);
  EXPECT_EQ(code, 2) << out;
  out = RunTool("--sweep hidden=16,x --out " + dir.string(), &code);
  EXPECT_EQ(code, 1);
  EXPECT_NE(out.find("rnn_benchmark: error: --sweep hidden: 'x' is not a positive integer"), std::string::npos) << out;
  EXPECT_FALSE(fs::exists(dir)) << "nothing is written for a bad command line";

  out = RunTool("--rnn_type gru --linear_before_reset --input_dim 8 --hidden_dim 16 --layers 1 --seq_len 4 "
                "--num_threads 1 --min_seconds 0.01 --min_runs 2 --sweep batch=1,2 --out " + dir.string(), &code);
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("Testing model: gru"), std::string::npos) << out;
  EXPECT_NE(out.find("gru i8 h16 l1 s4 b2 t1 lbr"), std::string::npos) << "one table row per configuration\n" << out;
  for (const char* f : {"results.json", "results.csv", "report.html", "models/gru_i8_h16__l1_batched_int8.onnx"})
    EXPECT_TRUE(fs::exists(dir / f)) << f;
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nuphar::bench
