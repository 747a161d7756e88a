// model_quantizer: MatMul/Gemm -> MatMulInteger (spec editor_quantizer.md §3, Q1, Q2).
// Parses flags, calls nuphar::quant::Quantize, prints the original's stdout lines; diagnostics
// go to stderr and any error exits non-zero without writing the output (SaveModel is atomic).
// Exit codes (tools/common/cli.h): 0 done, 1 error, 2 bad command line, 3 nothing was
// quantized (nothing written; the message says why and what to run first).
#include <CLI/CLI.hpp>
#include <onnx/onnx_pb.h>

#include <cstdio>
#include <iostream>
#include <set>
#include <string>

#include "graph/error.h"
#include "graph/model_io.h"
#include "quantizer/qcfg_json.h"
#include "quantizer/quantizer.h"
#include "tools/common/cli.h"

namespace {

int Fail(const nuphar::Status& status) { return nuphar::tools::ReportError("model_quantizer", status); }

std::string Side(const nuphar::quant::QuantizeConfig& c) {
  return std::string(c.is_signed ? "s" : "u") + std::to_string(c.type_bits) + "r" + std::to_string(c.reserved_bits);
}

void PrintReport(const nuphar::quant::QuantizeReport& report) {
  std::printf("Quantized %zu MatMul/Gemm node(s); opset %lld, IR version %lld\n", report.quantized.size(),
              static_cast<long long>(report.opset), static_cast<long long>(report.ir_version));
  std::printf("%-40s %-24s %11s %-14s %12s %12s %12s\n", "node", "weight", "KxN", "config", "max_abs_err",
              "max_abs_w", "rel_l2_err");
  for (const auto& q : report.quantized) {
    const std::string shape = std::to_string(q.k) + "x" + std::to_string(q.n);
    const std::string cfg = std::string(q.config.symmetric ? "sym " : "asym ") + "W" + Side(q.config.w) + " X" + Side(q.config.x);
    std::printf("%-40s %-24s %11s %-14s %12.6g %12.6g %12.6g%s\n", (q.graph + ":" + q.node).c_str(), q.weight.c_str(),
                shape.c_str(), cfg.c_str(), q.weight_max_abs_error, q.weight_max_abs, q.weight_rel_l2_error,
                q.weight_reused ? " (shared)" : "");
  }
}

// Op types anywhere in the model, subgraphs included.
void CollectOpTypes(const onnx::GraphProto& g, std::set<std::string>* out) {
  for (const auto& n : g.node()) {
    out->insert(n.op_type());
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectOpTypes(a.g(), out);
      for (const auto& sg : a.graphs()) CollectOpTypes(sg, out);
    }
  }
}

// A run that quantized nothing wrote the float model back under a new name and said "Done!";
// the usual causes are a float LSTM not yet converted to Scan and weights that are not
// initializers, so the error names them and what to run first.
int FailNothingQuantized(const onnx::ModelProto& model, const nuphar::quant::QuantizeReport& report,
                         bool only_for_scan, const std::string& input) {
  std::set<std::string> ops;
  CollectOpTypes(model.graph(), &ops);
  std::fprintf(stderr, "model_quantizer: error: %s: quantized nothing (%zu MatMul/Gemm candidate(s) left float); "
               "no output written\n", input.c_str(), report.skipped.size());
  for (size_t i = 0; i < report.skipped.size() && i < 5; ++i) std::fprintf(stderr, "  %s\n", report.skipped[i].c_str());
  if (report.skipped.size() > 5) std::fprintf(stderr, "  ... (--verbose lists all)\n");
  if (ops.count("LSTM") || ops.count("GRU") || ops.count("RNN"))
    std::fprintf(stderr, "hint: the model has LSTM/GRU/RNN ops, whose weights the quantizer does not touch: run "
                 "model_editor --mode to_scan first, then quantize its output\n");
  bool not_initializer = false, outside_scan = false;
  for (const auto& line : report.skipped) {
    not_initializer |= line.find("is not an initializer") != std::string::npos;
    outside_scan |= line.find("--only_for_scan") != std::string::npos;
  }
  if (not_initializer)
    std::fprintf(stderr, "hint: weights held in Constant nodes or computed at run time are not quantized; "
                 "model_editor --mode to_scan writes the weights it touches as initializers\n");
  if (only_for_scan && outside_scan)
    std::fprintf(stderr, "hint: --only_for_scan quantizes only MatMuls inside Scan/Loop bodies; drop it to "
                 "quantize the others\n");
  if (report.skipped.empty()) std::fprintf(stderr, "hint: the model has no MatMul or Gemm node\n");
  return nuphar::tools::kExitIncomplete;
}

}  // namespace

int main(int argc, char** argv) {
  nuphar::tools::PrintDiagnosticsToStderr();
  CLI::App app{"Quantize MatMul (and Gemm) to MatMulInteger with per-column int8/int16 weights"};
  std::string input, output, preset = nuphar::quant::kDefaultPreset, qcfg_json;
  bool export_qcfg = false, only_for_scan = false, share_input = false, guard = false, report = false, verbose = false;
  app.add_option("--input", input, "The input model file")->required();
  app.add_option("--output", output, "The output model file")->required();
  app.add_option("--default_qcfg", preset,
                 "The preset of quantization of <asymm|symm><qbits>_param<reserve_bit>_input<reserve_bit>")
      ->check(CLI::IsMember({"asymm8_param0_input1", "symm16_param3_input3"}));
  app.add_option("--qcfg_json", qcfg_json, "The quantization config json file for read or write.");
  app.add_flag("--export_qcfg_json", export_qcfg, "If set, write default quantization config to qcfg_json file.");
  app.add_flag("--only_for_scan", only_for_scan, "If set, apply quantization of MatMul only inside scan");
  app.add_flag("--share_input_quantization", share_input,
               "If set, allow input quantization to be shared if the same input is used in multiple MatMul");
  app.add_flag("--guard_zero_delta", guard, "Insert Max(delta, FLT_MIN) before Reciprocal (constant input rows)");
  app.add_flag("--report", report, "Print per quantized MatMul the weight quantization error");
  app.add_flag("--verbose", verbose, "Explain every MatMul/Gemm left float");
  if (int rc = nuphar::tools::ParseCommandLine(app, argc, argv); rc >= 0) return rc;

  std::printf("input model: %s\n", input.c_str());
  std::printf("output model %s\n", output.c_str());
  std::printf("Quantize MatMul to MatMulInteger...\n");
  std::fflush(stdout);
  if (export_qcfg && qcfg_json.empty()) {
    return Fail(nuphar::Diag::Msg("--qcfg_json must be specified when --export_qcfg_json is used"));
  }

  auto default_config = nuphar::quant::PresetConfig(preset);
  if (!default_config.ok()) return Fail(default_config.status());
  nuphar::quant::QuantizeOptions options;
  options.only_for_scan = only_for_scan;
  options.share_input_quantization = share_input;
  options.guard_zero_delta = guard;
  options.compute_weight_error = report;
  options.default_config = *default_config;
  if (!qcfg_json.empty() && !export_qcfg) {
    auto text = nuphar::ReadFile(qcfg_json);
    if (!text.ok()) return Fail(text.status());
    auto table = nuphar::quant::ParseQcfgJson(*text, qcfg_json);
    if (!table.ok()) return Fail(table.status());
    options.node_configs = std::move(*table);
  }

  onnx::ModelProto model;
  if (nuphar::Status s = nuphar::LoadModel(input, &model); !s.ok()) return Fail(s);
  auto result = nuphar::quant::Quantize(&model, options);
  if (!result.ok()) return Fail(result.status().WithFile(input));
  for (const auto& line : result->messages) std::printf("%s\n", line.c_str());
  if (verbose) {
    for (const auto& line : result->skipped) std::printf("note: %s\n", line.c_str());
  }
  if (result->quantized.empty()) return FailNothingQuantized(model, *result, only_for_scan, input);
  if (nuphar::Status s = nuphar::SaveModel(model, output); !s.ok()) return Fail(s);
  if (export_qcfg) {
    // Written after the model, as the original does.
    if (nuphar::Status s = nuphar::WriteFileAtomic(qcfg_json, nuphar::quant::QcfgToJson(result->used_configs)); !s.ok()) {
      return Fail(s);
    }
  }
  if (report) PrintReport(*result);
  std::printf("Done!\n");
  return 0;
}
