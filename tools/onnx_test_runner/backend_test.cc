// Runs one backend test directory on the runtime and compares with the stored outputs.
#include "tools/onnx_test_runner/backend_test.h"

#include <algorithm>
#include <cstring>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "runtime/session.h"
#include "tools/common/tensor_files.h"

namespace nuphar::tools {
namespace fs = std::filesystem;
namespace {

std::vector<std::string> SortedFiles(const fs::path& dir, const std::string& prefix) {
  std::vector<std::pair<int, std::string>> found;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && name.ends_with(".pb"))
      found.emplace_back(std::stoi(name.substr(prefix.size())), e.path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(f.second);
  return out;
}

double ElementAsDouble(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::kFloat: return t.data<float>()[i];
    case DType::kDouble: return t.data<double>()[i];
    case DType::kFloat16: return HalfToFloat(t.data<uint16_t>()[i]);
    default: return 0;
  }
}

bool IsFloating(DType t) { return t == DType::kFloat || t == DType::kDouble || t == DType::kFloat16; }

Status CompareTensors(const std::string& what, const Tensor& expected, const Tensor& got, const Tolerance& tol) {
  if (!got.defined()) return Diag::Msg(what + ": no value was produced");
  if (expected.dtype() != got.dtype())
    return Diag::Msg(what + ": type " + DTypeName(got.dtype()) + ", expected " + DTypeName(expected.dtype()));
  if (expected.shape() != got.shape())
    return Diag::Msg(what + ": shape " + ShapeToString(got.shape()) + ", expected " + ShapeToString(expected.shape()));
  if (IsFloating(expected.dtype())) {
    for (int64_t i = 0; i < expected.size(); ++i) {
      const double e = ElementAsDouble(expected, i), g = ElementAsDouble(got, i);
      if (std::isnan(e) || std::isnan(g)) {
        if (std::isnan(e) != std::isnan(g)) return Diag::Msg(what + ": NaN mismatch at element " + std::to_string(i));
        continue;
      }
      if (std::isinf(e) || std::isinf(g)) {
        if (e != g) return Diag::Msg(what + ": infinity mismatch at element " + std::to_string(i));
        continue;
      }
      if (std::fabs(e - g) > tol.atol + tol.rtol * std::fabs(e)) {
        std::ostringstream ss;
        ss.precision(9);
        ss << what << ": element " << i << " is " << g << ", expected " << e << " (diff " << std::fabs(e - g) << ")";
        return Diag::Msg(ss.str());
      }
    }
    return Status::OK();
  }
  const size_t es = DTypeSize(expected.dtype());
  const auto* a = static_cast<const unsigned char*>(expected.raw());
  const auto* b = static_cast<const unsigned char*>(got.raw());
  for (int64_t i = 0; i < expected.size(); ++i) {
    if (expected.dtype() == DType::kBool ? ((a[i] != 0) != (b[i] != 0)) : std::memcmp(a + i * es, b + i * es, es) != 0)
      return Diag::Msg(what + ": element " + std::to_string(i) + " differs");
  }
  return Status::OK();
}

}  // namespace

Status RunBackendTest(const std::string& dir, const std::string& settings, const Tolerance& tol) {
  SessionOptions options;
  options.settings = settings;
  auto session = Session::Create((fs::path(dir) / "model.onnx").string(), options);
  if (!session) return Status(Diag::Msg("load: " + session.message()));
  std::vector<std::string> sets;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_directory() && e.path().filename().string().rfind("test_data_set_", 0) == 0) sets.push_back(e.path().string());
  std::sort(sets.begin(), sets.end());
  if (sets.empty()) return Diag::Msg("no test_data_set_* directory");

  std::vector<const ValueDesc*> feedable;
  for (const auto& d : (*session)->inputs())
    if (!d.has_default) feedable.push_back(&d);
  for (const auto& set : sets) {
    const std::string set_name = fs::path(set).filename().string();
    NamedTensors inputs;
    const auto input_files = SortedFiles(set, "input_");
    for (size_t k = 0; k < input_files.size(); ++k) {
      auto nt = ReadTensorFile(input_files[k]);
      if (!nt) return Status(Diag::Msg(set_name + ": " + nt.message()));
      std::string name = nt->name;
      bool known = false;
      for (const auto& d : (*session)->inputs()) known |= d.name == name;
      if (!known) {
        if (k >= feedable.size()) return Diag::Msg(set_name + ": more input files than model inputs");
        name = feedable[k]->name;
      }
      inputs.emplace_back(name, std::move(nt->tensor));
    }
    auto outputs = (*session)->Run(inputs);
    if (!outputs) return Status(Diag::Msg(set_name + ": run: " + outputs.message()));
    const auto output_files = SortedFiles(set, "output_");
    if (output_files.size() != outputs->size())
      return Diag::Msg(set_name + ": the model has " + std::to_string(outputs->size()) + " outputs, the test stores " +
                       std::to_string(output_files.size()));
    for (size_t k = 0; k < output_files.size(); ++k) {
      auto expected = ReadTensorFile(output_files[k]);
      if (!expected) return Status(Diag::Msg(set_name + ": " + expected.message()));
      NUPHAR_RETURN_IF_ERROR(CompareTensors(set_name + " output " + std::to_string(k) + " '" +
                                                (*session)->outputs()[k].name + "'",
                                            expected->tensor, (*outputs)[k], tol));
    }
  }
  return Status::OK();
}

}  // namespace nuphar::tools
