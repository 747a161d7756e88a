// The C ABI (include/nuphar/nuphar_c_api.h) over Session and the graph tools.
//
// # The boundary
// Every exported function runs its body inside Guard(), which turns any C++ exception into a
// NUPHAR_INTERNAL status, so nothing throws into C. When even the status cannot be allocated,
// the preallocated kOutOfMemory is returned; nuphar_status_release knows not to free it.
#include "nuphar/nuphar_c_api.h"

#include <cstring>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "api/graph_tools.h"
#include "runtime/session.h"

struct NupharStatus {
  NupharCode code;
  std::string message;
};

struct NupharSession {
  // Owns what NupharValueInfo points into: dim_param pointers per value.
  struct Info {
    nuphar::ValueDesc desc;
    std::vector<const char*> dim_params;
  };
  std::unique_ptr<nuphar::Session> session;
  std::vector<Info> inputs, outputs;
};

struct NupharValue {
  nuphar::Tensor tensor;
};

namespace {

NupharStatus kOutOfMemory{NUPHAR_INTERNAL, "out of memory"};

NupharStatus* MakeStatus(NupharCode code, std::string message) {
  try {
    return new NupharStatus{code, std::move(message)};
  } catch (...) {
    return &kOutOfMemory;
  }
}
NupharStatus* MakeStatus(NupharCode code, const nuphar::Status& s) { return MakeStatus(code, s.message()); }
NupharStatus* InvalidArgument(std::string message) { return MakeStatus(NUPHAR_INVALID_ARGUMENT, std::move(message)); }

template <class F>
NupharStatus* Guard(const char* function, F&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return &kOutOfMemory;
  } catch (const std::exception& e) {
    return MakeStatus(NUPHAR_INTERNAL, std::string(function) + ": internal error: " + e.what());
  } catch (...) {
    return MakeStatus(NUPHAR_INTERNAL, std::string(function) + ": internal error (unknown exception)");
  }
}

NupharStatus* FromTool(const nuphar::api::ToolResult& r) {
  switch (r.error) {
    case nuphar::api::ToolError::kNone: return nullptr;
    case nuphar::api::ToolError::kBadOption: return MakeStatus(NUPHAR_INVALID_ARGUMENT, r.status);
    case nuphar::api::ToolError::kIncomplete:
    case nuphar::api::ToolError::kUnsupportedOpset: return MakeStatus(NUPHAR_INCOMPLETE, r.status);
    case nuphar::api::ToolError::kFailed: break;
  }
  return MakeStatus(NUPHAR_FAIL, r.status);
}

// NULL entries are skipped, so an argv-style array that ends in NULL may pass its full length.
std::vector<std::string> Options(const char* const* options, size_t n) {
  std::vector<std::string> out;
  for (size_t i = 0; i < n; ++i)
    if (options[i]) out.emplace_back(options[i]);
  return out;
}

NupharStatus* FinishCreate(nuphar::Expected<std::unique_ptr<nuphar::Session>> created, NupharSession** out) {
  if (!created.ok()) return MakeStatus(NUPHAR_FAIL, created.status());
  auto handle = std::make_unique<NupharSession>();
  handle->session = std::move(*created);
  auto fill = [](const std::vector<nuphar::ValueDesc>& descs, std::vector<NupharSession::Info>* infos) {
    infos->resize(descs.size());
    for (size_t i = 0; i < descs.size(); ++i) {
      (*infos)[i].desc = descs[i];
      // dim_params may be shorter than dims in a hand-built ValueDesc; pad with "".
      (*infos)[i].desc.dim_params.resize(descs[i].dims.size());
      for (const auto& p : (*infos)[i].desc.dim_params) (*infos)[i].dim_params.push_back(p.c_str());
    }
  };
  fill(handle->session->inputs(), &handle->inputs);
  fill(handle->session->outputs(), &handle->outputs);
  *out = handle.release();
  return nullptr;
}

NupharStatus* Info(const std::vector<NupharSession::Info>& infos, size_t index, const char* what,
                   NupharValueInfo* info) {
  if (index >= infos.size())
    return InvalidArgument(std::string(what) + " index " + std::to_string(index) + " out of range (the model has " +
                           std::to_string(infos.size()) + ")");
  const auto& v = infos[index];
  info->name = v.desc.name.c_str();
  info->dtype = static_cast<NupharDType>(v.desc.dtype);
  info->has_shape = v.desc.has_shape ? 1 : 0;
  info->rank = v.desc.dims.size();
  info->dims = v.desc.dims.data();
  info->dim_params = v.dim_params.data();
  info->has_default = v.desc.has_default ? 1 : 0;
  return nullptr;
}

bool KnownDType(NupharDType t) { return t >= NUPHAR_UNDEFINED && t <= NUPHAR_BFLOAT16; }

// Checks the views and copies them into tensors (the runtime owns its buffers, 64-byte aligned).
NupharStatus* ToTensors(const NupharTensorView* inputs, size_t n, nuphar::NamedTensors* out) {
  if (n > 0 && !inputs) return InvalidArgument("inputs is NULL but num_inputs is " + std::to_string(n));
  for (size_t i = 0; i < n; ++i) {
    const NupharTensorView& v = inputs[i];
    const std::string where = "input " + std::to_string(i) + (v.name ? " '" + std::string(v.name) + "'" : "");
    if (!v.name) return InvalidArgument(where + ": name is NULL");
    if (!KnownDType(v.dtype) || nuphar::DTypeSize(static_cast<nuphar::DType>(v.dtype)) == 0)
      return InvalidArgument(where + ": unsupported dtype " + std::to_string(static_cast<int>(v.dtype)));
    if (v.rank > 0 && !v.shape) return InvalidArgument(where + ": shape is NULL with rank " + std::to_string(v.rank));
    std::vector<int64_t> shape(v.shape, v.shape + v.rank);
    for (int64_t d : shape)
      if (d < 0) return InvalidArgument(where + ": negative dim in shape " + nuphar::ShapeToString(shape));
    const auto dtype = static_cast<nuphar::DType>(v.dtype);
    const int64_t numel = nuphar::NumElements(shape);
    const size_t elem = nuphar::DTypeSize(dtype);
    if (numel == INT64_MAX || static_cast<uint64_t>(numel) > SIZE_MAX / elem)
      return InvalidArgument(where + ": shape " + nuphar::ShapeToString(shape) + " is too large");
    const size_t bytes = static_cast<size_t>(numel) * elem;
    if (v.data_bytes != bytes)
      return InvalidArgument(where + ": data_bytes is " + std::to_string(v.data_bytes) + ", shape " +
                             nuphar::ShapeToString(shape) + " of " + nuphar::DTypeName(dtype) + " needs " +
                             std::to_string(bytes));
    if (bytes > 0 && !v.data) return InvalidArgument(where + ": data is NULL");
    nuphar::Tensor t(dtype, shape);
    if (bytes > 0) std::memcpy(t.raw(), v.data, bytes);
    out->emplace_back(v.name, std::move(t));
  }
  return nullptr;
}

// The shared half of run and run_into: checks, copies the inputs, runs.
NupharStatus* RunSession(const NupharSession* session, const NupharTensorView* inputs, size_t num_inputs,
                         const char* const* output_names, size_t num_outputs, void* outputs,
                         std::vector<nuphar::Tensor>* results) {
  if (!session) return InvalidArgument("session is NULL");
  if (!outputs && num_outputs > 0) return InvalidArgument("outputs is NULL");
  std::vector<std::string> names;
  if (output_names) {
    for (size_t i = 0; i < num_outputs; ++i) {
      if (!output_names[i]) return InvalidArgument("output_names[" + std::to_string(i) + "] is NULL");
      names.emplace_back(output_names[i]);
    }
  } else if (num_outputs != session->outputs.size()) {
    return InvalidArgument("output_names is NULL (every output) but num_outputs is " + std::to_string(num_outputs) +
                           ", the model has " + std::to_string(session->outputs.size()) + " outputs");
  }
  nuphar::NamedTensors feeds;
  if (NupharStatus* s = ToTensors(inputs, num_inputs, &feeds)) return s;
  auto run = session->session->Run(feeds, names);
  // A bad feed (name, type, shape) is the caller's mistake; Run reports it before executing.
  if (!run.ok()) return MakeStatus(NUPHAR_FAIL, run.status());
  if (run->size() != num_outputs)
    return MakeStatus(NUPHAR_INTERNAL, "Run returned " + std::to_string(run->size()) + " outputs for " +
                                           std::to_string(num_outputs) + " requested");
  *results = std::move(*run);
  return nullptr;
}

}  // namespace

extern "C" {

NupharCode nuphar_status_code(const NupharStatus* status) { return status ? status->code : NUPHAR_OK; }
const char* nuphar_status_message(const NupharStatus* status) { return status ? status->message.c_str() : "OK"; }
void nuphar_status_release(NupharStatus* status) {
  if (status != &kOutOfMemory) delete status;
}

const char* nuphar_version(void) { return NUPHAR_VERSION_STRING; }
size_t nuphar_dtype_size(NupharDType dtype) {
  return KnownDType(dtype) ? nuphar::DTypeSize(static_cast<nuphar::DType>(dtype)) : 0;
}
const char* nuphar_dtype_name(NupharDType dtype) {
  return KnownDType(dtype) ? nuphar::DTypeName(static_cast<nuphar::DType>(dtype)) : "undefined";
}

NupharStatus* nuphar_session_create(const char* model_path, const char* settings, NupharSession** out) {
  return Guard(__func__, [&]() -> NupharStatus* {
    if (!model_path || !out) return InvalidArgument("nuphar_session_create: model_path and out must not be NULL");
    nuphar::SessionOptions options;
    options.settings = settings ? settings : "";
    return FinishCreate(nuphar::Session::Create(model_path, options), out);
  });
}

NupharStatus* nuphar_session_create_from_bytes(const void* model_data, size_t model_bytes, const char* settings,
                                               NupharSession** out) {
  return Guard(__func__, [&]() -> NupharStatus* {
    if (!model_data || !out)
      return InvalidArgument("nuphar_session_create_from_bytes: model_data and out must not be NULL");
    nuphar::SessionOptions options;
    options.settings = settings ? settings : "";
    return FinishCreate(nuphar::Session::CreateFromBytes(model_data, model_bytes, options), out);
  });
}

void nuphar_session_release(NupharSession* session) { delete session; }

size_t nuphar_session_input_count(const NupharSession* session) { return session ? session->inputs.size() : 0; }
size_t nuphar_session_output_count(const NupharSession* session) { return session ? session->outputs.size() : 0; }

NupharStatus* nuphar_session_input_info(const NupharSession* session, size_t index, NupharValueInfo* info) {
  return Guard(__func__, [&]() -> NupharStatus* {
    if (!session || !info) return InvalidArgument("nuphar_session_input_info: session and info must not be NULL");
    return Info(session->inputs, index, "input", info);
  });
}

NupharStatus* nuphar_session_output_info(const NupharSession* session, size_t index, NupharValueInfo* info) {
  return Guard(__func__, [&]() -> NupharStatus* {
    if (!session || !info) return InvalidArgument("nuphar_session_output_info: session and info must not be NULL");
    return Info(session->outputs, index, "output", info);
  });
}

NupharStatus* nuphar_session_run(const NupharSession* session, const NupharTensorView* inputs, size_t num_inputs,
                                 const char* const* output_names, size_t num_outputs, NupharValue** outputs) {
  return Guard(__func__, [&]() -> NupharStatus* {
    std::vector<nuphar::Tensor> results;
    if (NupharStatus* s = RunSession(session, inputs, num_inputs, output_names, num_outputs, outputs, &results))
      return s;
    // Allocate every handle before publishing any, so an error leaves outputs[] untouched.
    std::vector<std::unique_ptr<NupharValue>> values;
    for (auto& t : results) values.push_back(std::make_unique<NupharValue>(NupharValue{std::move(t)}));
    for (size_t i = 0; i < values.size(); ++i) outputs[i] = values[i].release();
    return nullptr;
  });
}

NupharStatus* nuphar_session_run_into(const NupharSession* session, const NupharTensorView* inputs,
                                      size_t num_inputs, const char* const* output_names, size_t num_outputs,
                                      NupharOutputBuffer* outputs) {
  return Guard(__func__, [&]() -> NupharStatus* {
    std::vector<nuphar::Tensor> results;
    if (NupharStatus* s = RunSession(session, inputs, num_inputs, output_names, num_outputs, outputs, &results))
      return s;
    std::string too_small;
    for (size_t i = 0; i < results.size(); ++i) {
      const nuphar::Tensor& t = results[i];
      NupharOutputBuffer& b = outputs[i];
      const std::string name = output_names ? output_names[i] : session->outputs[i].desc.name;
      if (t.rank() > NUPHAR_MAX_RANK)
        return InvalidArgument("output '" + name + "' has rank " + std::to_string(t.rank()) + ", above NUPHAR_MAX_RANK");
      if (nuphar::DTypeSize(t.dtype()) == 0)
        return InvalidArgument("output '" + name + "' has type " + nuphar::DTypeName(t.dtype()) +
                               ", which has no flat buffer form");
      b.dtype = static_cast<NupharDType>(t.dtype());
      b.rank = static_cast<size_t>(t.rank());
      for (size_t d = 0; d < b.rank; ++d) b.shape[d] = t.dim(static_cast<int64_t>(d));
      b.data_bytes = t.bytes();
      if (b.data_bytes > b.capacity_bytes || (b.data_bytes > 0 && !b.data)) {
        too_small += (too_small.empty() ? "" : "; ") + ("output '" + name + "' needs " + std::to_string(b.data_bytes) +
                                                          " bytes, the buffer holds " + std::to_string(b.capacity_bytes));
        continue;
      }
      if (b.data_bytes > 0) std::memcpy(b.data, t.raw(), b.data_bytes);
    }
    if (!too_small.empty()) return InvalidArgument(too_small);
    return nullptr;
  });
}

NupharDType nuphar_value_dtype(const NupharValue* value) {
  return value ? static_cast<NupharDType>(value->tensor.dtype()) : NUPHAR_UNDEFINED;
}
size_t nuphar_value_rank(const NupharValue* value) { return value ? static_cast<size_t>(value->tensor.rank()) : 0; }
const int64_t* nuphar_value_shape(const NupharValue* value) { return value ? value->tensor.shape().data() : nullptr; }
const void* nuphar_value_data(const NupharValue* value) { return value ? value->tensor.raw() : nullptr; }
size_t nuphar_value_bytes(const NupharValue* value) { return value ? value->tensor.bytes() : 0; }
void nuphar_value_release(NupharValue* value) { delete value; }

NupharStatus* nuphar_model_editor(const char* input, const char* output, const char* mode,
                                  const char* const* options, size_t num_options) {
  return Guard(__func__, [&]() -> NupharStatus* {
    if (!input || !output || !mode) return InvalidArgument("nuphar_model_editor: input, output and mode are required");
    if (num_options > 0 && !options) return InvalidArgument("nuphar_model_editor: options is NULL");
    return FromTool(nuphar::api::EditModelFile(input, output, mode, Options(options, num_options)));
  });
}

NupharStatus* nuphar_symbolic_shape_infer(const char* input, const char* output, const char* const* options,
                                          size_t num_options) {
  return Guard(__func__, [&]() -> NupharStatus* {
    if (!input) return InvalidArgument("nuphar_symbolic_shape_infer: input is required");
    if (num_options > 0 && !options) return InvalidArgument("nuphar_symbolic_shape_infer: options is NULL");
    return FromTool(nuphar::api::InferShapesFile(input, output ? output : "", Options(options, num_options)));
  });
}

NupharStatus* nuphar_model_quantizer(const char* input, const char* output, const char* const* options,
                                     size_t num_options) {
  return Guard(__func__, [&]() -> NupharStatus* {
    if (!input || !output) return InvalidArgument("nuphar_model_quantizer: input and output are required");
    if (num_options > 0 && !options) return InvalidArgument("nuphar_model_quantizer: options is NULL");
    return FromTool(nuphar::api::QuantizeModelFile(input, output, Options(options, num_options)));
  });
}

}  // extern "C"
