// nuphar_cxx_api.h: a header-only C++17 wrapper over the C API (nuphar_c_api.h).
//
// # Why header-only
// libnuphar.so exports only C symbols, so the application's compiler and standard library
// never have to match ours. These classes compile into the application: they own the C
// handles (RAII) and turn an error status into nuphar::cxx::Error, whose what() is the Diag
// text. The exception is thrown in the application's code; none crosses the library.
//
//   nuphar::cxx::Session session("model.onnx", "nuphar_num_threads:2");
//   std::vector<float> x(80);
//   auto outputs = session.Run({nuphar::cxx::Input("x", x.data(), {1, 1, 80})});
//   const float* y = outputs[0].Data<float>();
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "nuphar/nuphar_c_api.h"

namespace nuphar::cxx {

class Error : public std::runtime_error {
 public:
  Error(NupharCode code, const char* message) : std::runtime_error(message), code_(code) {}
  NupharCode code() const { return code_; }

 private:
  NupharCode code_;
};

/// Throws Error for a non-null status (and releases it).
inline void ThrowOnError(NupharStatus* status) {
  if (!status) return;
  Error e(nuphar_status_code(status), nuphar_status_message(status));
  nuphar_status_release(status);
  throw e;
}

template <class T> constexpr NupharDType DTypeOf();
template <> constexpr NupharDType DTypeOf<float>() { return NUPHAR_FLOAT; }
template <> constexpr NupharDType DTypeOf<double>() { return NUPHAR_DOUBLE; }
template <> constexpr NupharDType DTypeOf<int8_t>() { return NUPHAR_INT8; }
template <> constexpr NupharDType DTypeOf<uint8_t>() { return NUPHAR_UINT8; }
template <> constexpr NupharDType DTypeOf<int16_t>() { return NUPHAR_INT16; }
template <> constexpr NupharDType DTypeOf<int32_t>() { return NUPHAR_INT32; }
template <> constexpr NupharDType DTypeOf<int64_t>() { return NUPHAR_INT64; }
template <> constexpr NupharDType DTypeOf<bool>() { return NUPHAR_BOOL; }

/// An input over caller memory; the shape is stored here so the view outlives its argument.
struct Input {
  std::string name;
  NupharDType dtype;
  std::vector<int64_t> shape;
  const void* data;
  size_t bytes;

  Input(std::string n, NupharDType t, std::vector<int64_t> s, const void* d, size_t b)
      : name(std::move(n)), dtype(t), shape(std::move(s)), data(d), bytes(b) {}
  template <class T>
  Input(std::string n, const T* d, std::vector<int64_t> s)
      : name(std::move(n)), dtype(DTypeOf<T>()), shape(std::move(s)), data(d) {
    size_t count = 1;
    for (int64_t v : shape) count *= static_cast<size_t>(v);
    bytes = count * sizeof(T);
  }
};

/// A graph input or output as declared; dims are -1 where symbolic (dim_params names them).
struct ValueInfo {
  std::string name;
  NupharDType dtype = NUPHAR_UNDEFINED;
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;
  bool has_default = false;
};

/// An output the library allocated; move-only.
class Value {
 public:
  explicit Value(NupharValue* v) : v_(v) {}
  Value(Value&& o) noexcept : v_(std::exchange(o.v_, nullptr)) {}
  Value& operator=(Value&& o) noexcept {
    std::swap(v_, o.v_);
    return *this;
  }
  Value(const Value&) = delete;
  Value& operator=(const Value&) = delete;
  ~Value() { nuphar_value_release(v_); }

  NupharDType dtype() const { return nuphar_value_dtype(v_); }
  std::vector<int64_t> shape() const {
    const int64_t* s = nuphar_value_shape(v_);
    return std::vector<int64_t>(s, s + nuphar_value_rank(v_));
  }
  size_t bytes() const { return nuphar_value_bytes(v_); }
  const void* data() const { return nuphar_value_data(v_); }
  template <class T>
  const T* Data() const {
    if (DTypeOf<T>() != dtype()) throw Error(NUPHAR_INVALID_ARGUMENT, "Value::Data<T>: T does not match the dtype");
    return static_cast<const T*>(data());
  }
  NupharValue* release() { return std::exchange(v_, nullptr); }

 private:
  NupharValue* v_;
};

class Session {
 public:
  Session(const std::string& model_path, const std::string& settings = "") {
    ThrowOnError(nuphar_session_create(model_path.c_str(), settings.c_str(), &s_));
  }
  Session(const void* data, size_t bytes, const std::string& settings = "") {
    ThrowOnError(nuphar_session_create_from_bytes(data, bytes, settings.c_str(), &s_));
  }
  Session(Session&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() { nuphar_session_release(s_); }

  std::vector<ValueInfo> Inputs() const { return Infos(nuphar_session_input_count(s_), nuphar_session_input_info); }
  std::vector<ValueInfo> Outputs() const {
    return Infos(nuphar_session_output_count(s_), nuphar_session_output_info);
  }

  /// Thread-safe. `output_names` empty = every output in graph order.
  std::vector<Value> Run(const std::vector<Input>& inputs, const std::vector<std::string>& output_names = {}) const {
    std::vector<NupharTensorView> views;
    for (const auto& in : inputs)
      views.push_back({in.name.c_str(), in.dtype, in.shape.data(), in.shape.size(), in.data, in.bytes});
    std::vector<const char*> names;
    for (const auto& n : output_names) names.push_back(n.c_str());
    const size_t count = output_names.empty() ? nuphar_session_output_count(s_) : names.size();
    std::vector<NupharValue*> raw(count, nullptr);
    ThrowOnError(nuphar_session_run(s_, views.data(), views.size(), output_names.empty() ? nullptr : names.data(),
                                    count, raw.data()));
    std::vector<Value> out;
    out.reserve(count);
    for (NupharValue* v : raw) out.emplace_back(v);
    return out;
  }

  const NupharSession* get() const { return s_; }

 private:
  template <class F>
  std::vector<ValueInfo> Infos(size_t count, F info_fn) const {
    std::vector<ValueInfo> out;
    for (size_t i = 0; i < count; ++i) {
      NupharValueInfo c;
      ThrowOnError(info_fn(s_, i, &c));
      ValueInfo v;
      v.name = c.name;
      v.dtype = c.dtype;
      v.has_shape = c.has_shape != 0;
      v.dims.assign(c.dims, c.dims + c.rank);
      for (size_t d = 0; d < c.rank; ++d) v.dim_params.emplace_back(c.dim_params[d]);
      v.has_default = c.has_default != 0;
      out.push_back(std::move(v));
    }
    return out;
  }

  NupharSession* s_ = nullptr;
};

/// The graph tools on files; options as in nuphar_c_api.h ("name=value" or "name").
inline void ModelEditor(const std::string& input, const std::string& output, const std::string& mode,
                        const std::vector<std::string>& options = {}) {
  std::vector<const char*> o;
  for (const auto& s : options) o.push_back(s.c_str());
  ThrowOnError(nuphar_model_editor(input.c_str(), output.c_str(), mode.c_str(), o.data(), o.size()));
}
inline void SymbolicShapeInfer(const std::string& input, const std::string& output,
                               const std::vector<std::string>& options = {}) {
  std::vector<const char*> o;
  for (const auto& s : options) o.push_back(s.c_str());
  ThrowOnError(nuphar_symbolic_shape_infer(input.c_str(), output.empty() ? nullptr : output.c_str(), o.data(),
                                           o.size()));
}
inline void ModelQuantizer(const std::string& input, const std::string& output,
                           const std::vector<std::string>& options = {}) {
  std::vector<const char*> o;
  for (const auto& s : options) o.push_back(s.c_str());
  ThrowOnError(nuphar_model_quantizer(input.c_str(), output.c_str(), o.data(), o.size()));
}

}  // namespace nuphar::cxx
