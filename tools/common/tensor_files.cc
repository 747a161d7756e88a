// Tensor file formats and numpy-compatible random inputs (tools/common/tensor_files.h).
#include "tools/common/tensor_files.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "graph/model_io.h"
#include "graph/tensor_data.h"
#include "runtime/core/tensor_proto.h"

namespace nuphar::tools {
namespace fs = std::filesystem;

namespace {
const std::pair<const char*, DType> kNumpyNames[] = {
    {"float32", DType::kFloat}, {"float64", DType::kDouble}, {"uint8", DType::kUint8},   {"int8", DType::kInt8},
    {"uint16", DType::kUint16}, {"int16", DType::kInt16},    {"int32", DType::kInt32},   {"int64", DType::kInt64},
    {"uint32", DType::kUint32}, {"uint64", DType::kUint64},  {"bool", DType::kBool},     {"float16", DType::kFloat16},
};
}  // namespace

const char* NumpyDTypeName(DType t) {
  for (const auto& [n, d] : kNumpyNames)
    if (d == t) return n;
  return "unknown";
}

Expected<NamedTensor> ReadTensorFile(const std::string& path_in) {
  std::string path = path_in;
  if (path.size() > 5 && path.substr(path.size() - 5) == ".json") path = path.substr(0, path.size() - 5) + ".bin";
  auto bytes = ReadFile(path);
  if (!bytes) return bytes.status();
  if (path.size() > 3 && path.substr(path.size() - 3) == ".pb") {
    onnx::TensorProto proto;
    if (!proto.ParseFromString(*bytes)) return Diag::File(path, "not a serialized TensorProto");
    auto t = TensorFromProto(proto);
    if (!t) return Status(Diag::File(path, t.diag().reason));
    return NamedTensor{proto.name(), std::move(*t)};
  }
  if (path.size() > 4 && path.substr(path.size() - 4) == ".bin") {
    const std::string meta_path = path.substr(0, path.size() - 4) + ".json";
    auto meta_text = ReadFile(meta_path);
    if (!meta_text) return meta_text.status();
    nlohmann::json meta = nlohmann::json::parse(*meta_text, nullptr, false);
    if (meta.is_discarded() || !meta.is_object() || !meta.contains("dtype") || !meta.contains("shape"))
      return Diag::File(meta_path, "expected a JSON object with \"name\", \"dtype\" and \"shape\"");
    DType dtype = DType::kUndefined;
    for (const auto& [n, d] : kNumpyNames)
      if (meta["dtype"] == n) dtype = d;
    if (dtype == DType::kUndefined) return Diag::File(meta_path, "unknown dtype " + meta["dtype"].dump());
    std::vector<int64_t> shape;
    for (const auto& d : meta["shape"]) {
      if (!d.is_number_integer() || d.get<int64_t>() < 0) return Diag::File(meta_path, "shape must list non-negative integers");
      shape.push_back(d.get<int64_t>());
    }
    // The declared size is checked against the file before anything is allocated: a sidecar
    // declaring [9999999984] floats must not ask for 40 GB (found by tests/fuzz: out-of-memory).
    const int64_t elements = NumElements(shape);
    size_t needed = 0;
    if (elements == INT64_MAX || __builtin_mul_overflow(static_cast<size_t>(elements), DTypeSize(dtype), &needed))
      return Diag::File(meta_path, "shape " + ShapeToString(shape) + " declares more elements than can be addressed");
    if (bytes->size() != needed)
      return Diag::File(path, "holds " + std::to_string(bytes->size()) + " bytes, shape " + ShapeToString(shape) +
                                  " of " + NumpyDTypeName(dtype) + " needs " + std::to_string(needed));
    Tensor t(dtype, shape);
    if (!bytes->empty()) std::memcpy(t.raw(), bytes->data(), bytes->size());
    return NamedTensor{meta.value("name", std::string()), std::move(t)};
  }
  return Diag::File(path, "unknown tensor file type (want .pb, or .bin with a .json sidecar)");
}

Status WriteTensorPb(const std::string& path, const std::string& name, const Tensor& t) {
  std::string bytes;
  TensorToProto(t, name).SerializeToString(&bytes);
  return WriteFileAtomic(path, bytes);
}

Status WriteTensorBin(const std::string& prefix, const std::string& name, const Tensor& t) {
  nlohmann::json meta = {{"name", name}, {"dtype", NumpyDTypeName(t.dtype())}, {"shape", t.shape()}};
  NUPHAR_RETURN_IF_ERROR(WriteFileAtomic(prefix + ".bin", std::string(static_cast<const char*>(t.raw()), t.bytes())));
  return WriteFileAtomic(prefix + ".json", meta.dump() + "\n");
}

namespace {

// Elements of a random input, refused past 2^31 (8 GiB of floats): --dims seq=1e12 should be an
// error, not an allocation that takes the machine down.
Expected<int64_t> ElementCount(const std::vector<int64_t>& shape, const std::string& name) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d != 0 && n > (int64_t{1} << 31) / d)
      return Diag::Msg("input '" + name + "' of shape " + ShapeToString(shape) +
                       " is too large to generate (more than 2^31 elements)");
    n *= d;
  }
  return n;
}

// --dims keys that name nothing in the model: a typo would otherwise be ignored silently and
// the run fail later (or, for a dim with a fixed value, never notice).
Status CheckDimNames(const Session& session, const std::map<std::string, int64_t>& dims) {
  std::vector<std::string> known;
  for (const ValueDesc& d : session.inputs()) {
    for (size_t i = 0; i < d.dims.size(); ++i) {
      if (d.dims[i] >= 0) continue;
      known.push_back(d.name + ":" + std::to_string(i));
      if (!d.dim_params[i].empty()) known.push_back(d.dim_params[i]);
    }
  }
  std::string unknown;
  for (const auto& [key, value] : dims)
    if (std::find(known.begin(), known.end(), key) == known.end()) unknown += (unknown.empty() ? "'" : ", '") + key + "'";
  if (unknown.empty()) return Status::OK();
  std::sort(known.begin(), known.end());
  known.erase(std::unique(known.begin(), known.end()), known.end());
  std::string list;
  for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
  return Diag::Msg("--dims " + unknown + ": no input of the model has such a dim (settable dims: " +
                   (list.empty() ? std::string("none, every input dim is fixed") : list) + ")");
}

}  // namespace

Expected<NamedTensors> MakeInputs(const Session& session, const InputSpec& spec, std::vector<std::string>* sources) {
  if (spec.strict_dims) NUPHAR_RETURN_IF_ERROR(CheckDimNames(session, spec.dims));
  std::map<std::string, std::pair<Tensor, std::string>> by_name;  // tensor, file
  std::map<int, std::pair<Tensor, std::string>> by_position;
  if (!spec.input_dir.empty()) {
    std::error_code ec;
    if (!fs::is_directory(spec.input_dir, ec)) return Diag::File(spec.input_dir, "input directory does not exist");
    std::vector<std::string> files;
    for (const auto& e : fs::directory_iterator(spec.input_dir, ec)) {
      const std::string p = e.path().string();
      if (p.ends_with(".pb") || p.ends_with(".bin")) files.push_back(p);
    }
    if (files.empty())
      return Diag::File(spec.input_dir, "--input-dir holds no tensor file (*.pb, or *.bin with a .json sidecar)");
    std::sort(files.begin(), files.end());
    static const std::regex positional("input_(\\d+)\\.pb");
    for (const auto& f : files) {
      NUPHAR_ASSIGN_OR_RETURN(NamedTensor nt, ReadTensorFile(f));
      bool known = false;
      for (const auto& d : session.inputs()) known |= d.name == nt.name;
      std::smatch m;
      const std::string base = fs::path(f).filename().string();
      if (known) by_name.emplace(nt.name, std::make_pair(nt.tensor, f));
      else if (std::regex_match(base, m, positional)) by_position[std::stoi(m[1])] = {nt.tensor, f};
    }
  }
  NumpyRandomState rng(spec.seed);
  NamedTensors inputs;
  std::vector<std::string> from;
  std::vector<std::string> not_in_dir, missing_dims, dim_hints;
  int position = 0;
  for (const ValueDesc& d : session.inputs()) {
    if (auto it = by_name.find(d.name); it != by_name.end()) {
      inputs.emplace_back(d.name, it->second.first);
      from.push_back("file " + it->second.second);
    } else if (auto pt = by_position.find(position); pt != by_position.end()) {
      inputs.emplace_back(d.name, pt->second.first);
      from.push_back("file " + pt->second.second);
    } else if (d.has_default) {
      continue;  // initializer-backed: not fed, not counted (ort_run.js excludes them too)
    } else if (!spec.input_dir.empty()) {
      // With --input-dir every input comes from a file: a silent random fill would be measured
      // (or compared) as if it were the user's data.
      not_in_dir.push_back("'" + d.name + "'");
      ++position;
      continue;
    } else {
      if (!d.has_shape) return Diag::Msg("input '" + d.name + "' has no shape in the model; feed it from --input-dir");
      std::vector<int64_t> shape;
      bool complete = true;
      for (size_t i = 0; i < d.dims.size(); ++i) {
        if (d.dims[i] >= 0) {
          shape.push_back(d.dims[i]);
          continue;
        }
        // INPUT:AXIS=N names one dim of one input (for dims without a name, e.g. Silero v5's
        // [?, ?]); it wins over the dim's symbol name.
        auto it = spec.dims.find(d.name + ":" + std::to_string(i));
        if (it == spec.dims.end() && !d.dim_params[i].empty()) it = spec.dims.find(d.dim_params[i]);
        if (it == spec.dims.end()) {
          // Collected, so one error lists every missing dim instead of one per attempt.
          missing_dims.push_back("input '" + d.name + "' dim " + std::to_string(i) + " ('" + d.dim_params[i] + "')");
          const std::string hint = (d.dim_params[i].empty() ? d.name + ":" + std::to_string(i) : d.dim_params[i]) + "=N";
          if (std::find(dim_hints.begin(), dim_hints.end(), hint) == dim_hints.end()) dim_hints.push_back(hint);
          complete = false;
          continue;
        }
        shape.push_back(it->second);
      }
      if (!complete) {
        ++position;
        continue;
      }
      NUPHAR_ASSIGN_OR_RETURN(int64_t n, ElementCount(shape, d.name));
      Tensor t(d.dtype, shape);
      switch (d.dtype) {
        case DType::kFloat:
          for (int64_t i = 0; i < n; ++i) t.data<float>()[i] = static_cast<float>(rng.RandomSample());
          from.push_back("random (seed " + std::to_string(spec.seed) + ")");
          break;
        case DType::kDouble:
          for (int64_t i = 0; i < n; ++i) t.data<double>()[i] = rng.RandomSample();
          from.push_back("random (seed " + std::to_string(spec.seed) + ")");
          break;
        default: {
          if (!IsNumeric(d.dtype) || d.dtype == DType::kFloat16)
            return Diag::Msg("input '" + d.name + "' has type " + DTypeName(d.dtype) + "; feed it from --input-dir");
          // Integer and bool inputs are 1, as ort_run.js does (no draw from the generator).
          const size_t es = DTypeSize(d.dtype);
          for (int64_t i = 0; i < n; ++i) {
            std::memset(static_cast<char*>(t.raw()) + i * es, 0, es);
            static_cast<char*>(t.raw())[i * es] = 1;
          }
          from.push_back("ones");
          break;
        }
      }
      inputs.emplace_back(d.name, std::move(t));
    }
    ++position;
  }
  if (!not_in_dir.empty()) {
    std::string list;
    for (const auto& n : not_in_dir) list += (list.empty() ? "" : ", ") + n;
    return Diag::File(spec.input_dir, "--input-dir has no file for input" + std::string(not_in_dir.size() > 1 ? "s " : " ") +
                                          list + " (files match by their stored tensor name, else input_K.pb by position)");
  }
  if (!missing_dims.empty()) {
    std::string list, hints;
    for (const auto& m : missing_dims) list += (list.empty() ? "" : ", ") + m;
    for (const auto& h : dim_hints) hints += (hints.empty() ? "" : ",") + h;
    return Diag::Msg(list + (missing_dims.size() > 1 ? " have" : " has") + " no value; pass --dims " + hints);
  }
  if (sources) *sources = std::move(from);
  return inputs;
}

Expected<std::map<std::string, int64_t>> ParseDimSpecs(const std::vector<std::string>& specs) {
  std::map<std::string, int64_t> dims;
  for (const auto& spec : specs) {
    size_t start = 0;
    while (start < spec.size()) {
      size_t comma = spec.find(',', start);
      std::string kv = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? spec.size() : comma + 1;
      if (kv.empty()) continue;
      const size_t eq = kv.find('=');
      if (eq == std::string::npos || eq == 0) return Diag::Msg("--dims entry '" + kv + "' is not name=value");
      try {
        size_t used = 0;
        const long long v = std::stoll(kv.substr(eq + 1), &used);
        if (used != kv.size() - eq - 1 || v < 0) throw std::invalid_argument(kv);
        dims[kv.substr(0, eq)] = v;
      } catch (const std::exception&) {
        return Diag::Msg("--dims entry '" + kv + "' needs a non-negative integer value");
      }
    }
  }
  return dims;
}

}  // namespace nuphar::tools
