// compare_models: runs two models on the same inputs and reports how far their outputs are
// apart, per output (max abs, mean abs, max relative error). For float vs quantized models, or
// an original against its edited version.
//
//   compare_models [--dims name=value,...] [--seed S] [--input-dir DIR] [--atol A] [--json] REF.onnx TEST.onnx
//
// --json prints {"inputs": [{name, shape, source}], "outputs": [{name, max_abs, ...}]}.
// Outputs are matched by name, else by position. With --atol the exit code is 1 when any
// output differs by more than A (or when shapes differ).
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "runtime/session.h"
#include "tools/common/cli.h"
#include "tools/common/tensor_files.h"

using namespace nuphar;
using namespace nuphar::tools;

namespace {

constexpr const char* kTool = "compare_models";

struct Difference {
  double max_abs = 0, mean_abs = 0, max_rel = 0, ref_absmax = 0;
};

Expected<Difference> Compare(const Tensor& ref, const Tensor& test) {
  if (ref.shape() != test.shape())
    return Diag::Msg("shape " + ShapeToString(test.shape()) + " differs from the reference's " + ShapeToString(ref.shape()));
  auto a = ref.ToDoubleVector();
  auto b = test.ToDoubleVector();
  if (!a || !b) return Diag::Msg("outputs are not numeric");
  Difference d;
  for (size_t i = 0; i < a->size(); ++i) {
    const double diff = std::fabs((*a)[i] - (*b)[i]);
    d.max_abs = std::max(d.max_abs, diff);
    d.mean_abs += diff / static_cast<double>(a->size());
    d.max_rel = std::max(d.max_rel, diff / std::max(std::fabs((*a)[i]), 1e-6));
    d.ref_absmax = std::max(d.ref_absmax, std::fabs((*a)[i]));
  }
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  nuphar::tools::PrintDiagnosticsToStderr();
  CLI::App app{"Runs two models on identical inputs and prints the difference of every output."};
  std::string ref_path, test_path, input_dir;
  std::vector<std::string> dim_specs;
  uint32_t seed = 0;
  double atol = -1;
  bool json = false;
  app.add_option("--dims", dim_specs, "dim values: name=value (a symbol) or INPUT:AXIS=value (a dim without a name), comma-separated");
  app.add_option("--seed", seed, "seed of the numpy-compatible random inputs (default 0)");
  app.add_option("--input-dir", input_dir, "feed inputs from *.pb / *.bin files in DIR");
  app.add_option("--atol", atol, "fail (exit 1) when an output differs by more than this");
  app.add_flag("--json", json, "print one JSON object instead of a table");
  app.add_option("reference", ref_path, "reference model (e.g. the float model)")->required();
  app.add_option("test", test_path, "model to compare (e.g. the quantized model)")->required();
  if (int rc = ParseCommandLine(app, argc, argv); rc >= 0) return rc;

  InputSpec spec;
  spec.seed = seed;
  spec.input_dir = input_dir;
  spec.dims = ExitOnErr(kTool, ParseDimSpecs(dim_specs));
  spec.strict_dims = true;
  auto ref = ExitOnErr(kTool, Session::Create(ref_path));
  auto test = ExitOnErr(kTool, Session::Create(test_path));
  std::vector<std::string> sources;
  auto inputs = ExitOnErr(kTool, MakeInputs(*ref, spec, &sources));
  auto ref_out = ExitOnErr(kTool, ref->Run(inputs));
  auto test_out = ExitOnErr(kTool, test->Run(inputs));

  nlohmann::json in_meta = nlohmann::json::array(), report = nlohmann::json::array();
  for (size_t k = 0; k < inputs.size(); ++k) {
    in_meta.push_back({{"name", inputs[k].first}, {"shape", inputs[k].second.shape()}, {"source", sources[k]}});
    if (!json)
      std::printf("input %s %s from %s\n", inputs[k].first.c_str(), ShapeToString(inputs[k].second.shape()).c_str(),
                  sources[k].c_str());
  }
  bool within = true;
  if (!json) std::printf("%-32s %12s %12s %12s %12s\n", "output", "max_abs", "mean_abs", "max_rel", "ref_absmax");
  for (size_t i = 0; i < ref_out.size(); ++i) {
    const std::string& name = ref->outputs()[i].name;
    size_t j = i;
    for (size_t k = 0; k < test->outputs().size(); ++k)
      if (test->outputs()[k].name == name) j = k;
    if (j >= test_out.size()) return ReportError(kTool, Diag::Msg("output '" + name + "' is missing in " + test_path));
    auto d = Compare(ref_out[i], test_out[j]);
    if (!d) return ReportError(kTool, Diag::Msg("output '" + name + "': " + d.diag().reason));
    within &= atol < 0 || d->max_abs <= atol;
    report.push_back({{"name", name}, {"max_abs", d->max_abs}, {"mean_abs", d->mean_abs}, {"max_rel", d->max_rel},
                      {"ref_absmax", d->ref_absmax}});
    if (!json)
      std::printf("%-32s %12.4g %12.4g %12.4g %12.4g\n", name.c_str(), d->max_abs, d->mean_abs, d->max_rel, d->ref_absmax);
  }
  if (json) std::printf("%s\n", nlohmann::json{{"inputs", in_meta}, {"outputs", report}}.dump().c_str());
  return within ? kExitOk : kExitError;
}
