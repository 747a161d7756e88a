// model_quantizer: MatMul/Gemm -> MatMulInteger (spec editor_quantizer.md §3, Q1, Q2).
// Parses flags, calls nuphar::quant::Quantize, prints the original's stdout lines; diagnostics
// go to stderr and any error exits non-zero without writing the output (SaveModel is atomic).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <string>

#include "api/graph_tools.h"
#include "graph/error.h"
#include "quantizer/quantizer.h"

namespace {

int Fail(const nuphar::Status& status) {
  std::cerr << "model_quantizer: error: " << status.message() << "\n";
  return 1;
}

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

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Quantize MatMul (and Gemm) to MatMulInteger with per-column int8/int16 weights"};
  std::string input, output;
  nuphar::api::QuantizeFileOptions file_options;
  std::string& preset = file_options.default_qcfg;
  std::string& qcfg_json = file_options.qcfg_json;
  bool& export_qcfg = file_options.export_qcfg_json;
  bool& only_for_scan = file_options.quantize.only_for_scan;
  bool& share_input = file_options.quantize.share_input_quantization;
  bool& guard = file_options.quantize.guard_zero_delta;
  bool report = false, verbose = false;
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
  CLI11_PARSE(app, argc, argv);

  std::printf("input model: %s\n", input.c_str());
  std::printf("output model %s\n", output.c_str());
  std::printf("Quantize MatMul to MatMulInteger...\n");
  std::fflush(stdout);
  file_options.quantize.compute_weight_error = report;
  nuphar::quant::QuantizeReport result;
  if (auto r = nuphar::api::QuantizeModelFile(input, output, file_options, &result); !r.ok()) return Fail(r.status);
  for (const auto& line : result.messages) std::printf("%s\n", line.c_str());
  if (verbose) {
    for (const auto& line : result.skipped) std::printf("note: %s\n", line.c_str());
  }
  if (report) PrintReport(result);
  std::printf("Done!\n");
  return 0;
}
