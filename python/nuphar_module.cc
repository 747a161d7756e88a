// nuphar._nuphar: the pybind11 extension behind the `nuphar` Python package, written over the
// C API (libnuphar.so) like any other embedder. The Python-facing classes (InferenceSession,
// NodeArg, tools) live in nuphar/__init__.py and nuphar/tools.py.
//
// Feeds are numpy arrays viewed in place (made C-contiguous first when they are not; their
// dtype is kept, so a float64 feed to a float input is reported by the runtime, not cast).
// Outputs are numpy arrays over the library's buffers, freed with the last reference.
// The GIL is released while the model runs; one session serves many Python threads at once.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <string>
#include <vector>

#include "nuphar/nuphar_c_api.h"

namespace py = pybind11;

namespace {

// C++ carriers of a status; register_exception turns them into nuphar.NupharError & subclasses.
struct NupharError : std::runtime_error {
  using std::runtime_error::runtime_error;
};
struct InvalidArgument : NupharError {
  using NupharError::NupharError;
};
struct IncompleteError : NupharError {
  using NupharError::NupharError;
};

void Check(NupharStatus* status) {
  if (!status) return;
  const NupharCode code = nuphar_status_code(status);
  std::string message = nuphar_status_message(status);
  nuphar_status_release(status);
  if (code == NUPHAR_INVALID_ARGUMENT) throw InvalidArgument(message);
  if (code == NUPHAR_INCOMPLETE) throw IncompleteError(message);
  throw NupharError(message);
}

NupharDType FromNumpy(const py::dtype& dt, const std::string& name) {
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 4) return NUPHAR_FLOAT;
  if (kind == 'f' && size == 8) return NUPHAR_DOUBLE;
  if (kind == 'f' && size == 2) return NUPHAR_FLOAT16;
  if (kind == 'b' && size == 1) return NUPHAR_BOOL;
  if (kind == 'i') {
    if (size == 1) return NUPHAR_INT8;
    if (size == 2) return NUPHAR_INT16;
    if (size == 4) return NUPHAR_INT32;
    if (size == 8) return NUPHAR_INT64;
  }
  if (kind == 'u') {
    if (size == 1) return NUPHAR_UINT8;
    if (size == 2) return NUPHAR_UINT16;
    if (size == 4) return NUPHAR_UINT32;
    if (size == 8) return NUPHAR_UINT64;
  }
  throw InvalidArgument("feed '" + name + "' has numpy dtype " + py::cast<std::string>(py::str(static_cast<const py::handle&>(dt))) +
                        ", which nuphar does not take");
}

py::dtype ToNumpy(NupharDType t) {
  switch (t) {
    case NUPHAR_FLOAT16: return py::dtype("float16");
    case NUPHAR_BOOL: return py::dtype("bool");
    default: break;
  }
  const std::string name = nuphar_dtype_name(t);
  if (name == "float") return py::dtype("float32");
  if (name == "double") return py::dtype("float64");
  return py::dtype(name);  // int8 ... uint64 are numpy's names too
}

py::object DimToPython(int64_t dim, const char* param) {
  if (dim >= 0) return py::int_(dim);
  if (param && *param) return py::str(param);
  return py::none();
}

// (name, "tensor(float)", shape or None, has_default) for NodeArg.
py::list Infos(const NupharSession* s, bool outputs) {
  py::list out;
  const size_t n = outputs ? nuphar_session_output_count(s) : nuphar_session_input_count(s);
  for (size_t i = 0; i < n; ++i) {
    NupharValueInfo info;
    Check(outputs ? nuphar_session_output_info(s, i, &info) : nuphar_session_input_info(s, i, &info));
    py::object shape = py::none();
    if (info.has_shape) {
      py::list dims;
      for (size_t d = 0; d < info.rank; ++d) dims.append(DimToPython(info.dims[d], info.dim_params[d]));
      shape = dims;
    }
    out.append(py::make_tuple(info.name, std::string("tensor(") + nuphar_dtype_name(info.dtype) + ")", shape,
                              info.has_default != 0));
  }
  return out;
}

class PySession {
 public:
  PySession(const py::object& model, const std::string& settings) {
    NupharSession* s = nullptr;
    if (py::isinstance<py::bytes>(model) || py::isinstance<py::bytearray>(model) ||
        py::isinstance<py::memoryview>(model)) {
      py::buffer_info buf = py::buffer(model).request();
      Check(nuphar_session_create_from_bytes(buf.ptr, static_cast<size_t>(buf.size * buf.itemsize), settings.c_str(),
                                             &s));
    } else {
      // str or os.PathLike
      const std::string path = py::str(py::module_::import("os").attr("fspath")(model));
      py::gil_scoped_release release;  // loading a large model takes a while
      Check(nuphar_session_create(path.c_str(), settings.c_str(), &s));
    }
    session_.reset(s);
  }

  py::list inputs() const { return Infos(session_.get(), false); }
  py::list outputs() const { return Infos(session_.get(), true); }

  py::list run(const py::object& output_names, const py::dict& feeds) const {
    std::vector<py::array> arrays;  // keeps the feeds alive while the GIL is released
    std::vector<std::string> feed_names;
    std::vector<std::vector<int64_t>> shapes;
    for (auto item : feeds) {
      if (!py::isinstance<py::str>(item.first)) throw InvalidArgument("feed names must be str");
      feed_names.push_back(py::cast<std::string>(item.first));
      py::array a = py::array::ensure(item.second, py::array::c_style);
      if (!a) {
        PyErr_Clear();
        throw InvalidArgument("feed '" + feed_names.back() + "' is not convertible to a numpy array");
      }
      shapes.emplace_back(a.shape(), a.shape() + a.ndim());
      arrays.push_back(std::move(a));
    }
    std::vector<NupharTensorView> views;
    for (size_t i = 0; i < arrays.size(); ++i) {
      views.push_back({feed_names[i].c_str(), FromNumpy(arrays[i].dtype(), feed_names[i]), shapes[i].data(),
                       shapes[i].size(), arrays[i].data(), static_cast<size_t>(arrays[i].nbytes())});
    }
    std::vector<std::string> names;
    if (!output_names.is_none()) names = py::cast<std::vector<std::string>>(output_names);
    std::vector<const char*> name_ptrs;
    for (const auto& n : names) name_ptrs.push_back(n.c_str());
    const size_t count = names.empty() ? nuphar_session_output_count(session_.get()) : names.size();
    std::vector<NupharValue*> values(count, nullptr);
    NupharStatus* status;
    {
      py::gil_scoped_release release;
      status = nuphar_session_run(session_.get(), views.data(), views.size(),
                                  names.empty() ? nullptr : name_ptrs.data(), count, values.data());
    }
    Check(status);
    // Own every value before building arrays, so an exception below leaks none.
    std::vector<std::unique_ptr<NupharValue, decltype(&nuphar_value_release)>> owned;
    for (NupharValue* v : values) owned.emplace_back(v, &nuphar_value_release);
    py::list out;
    for (auto& v : owned) {
      const int64_t* s = nuphar_value_shape(v.get());
      std::vector<py::ssize_t> shape(s, s + nuphar_value_rank(v.get()));
      py::dtype dt = ToNumpy(nuphar_value_dtype(v.get()));
      void* data = const_cast<void*>(nuphar_value_data(v.get()));
      NupharValue* raw = v.release();
      py::capsule owner(raw, [](void* p) { nuphar_value_release(static_cast<NupharValue*>(p)); });
      out.append(py::array(dt, shape, data, owner));
    }
    return out;
  }

 private:
  std::unique_ptr<NupharSession, decltype(&nuphar_session_release)> session_{nullptr, &nuphar_session_release};
};

// Runs one graph tool with the GIL released (a conversion of a large model takes seconds).
template <class F>
void RunTool(const std::vector<std::string>& options, F&& call) {
  std::vector<const char*> p;
  for (const auto& o : options) p.push_back(o.c_str());
  NupharStatus* status;
  {
    py::gil_scoped_release release;
    status = call(p.data(), p.size());
  }
  Check(status);
}

}  // namespace

PYBIND11_MODULE(_nuphar, m) {
  m.doc() = "nuphar-cpp's C API for Python; use the nuphar package (InferenceSession, tools)";
  auto base = py::register_exception<NupharError>(m, "NupharError", PyExc_RuntimeError);
  py::register_exception<InvalidArgument>(m, "InvalidArgument", base.ptr());
  py::register_exception<IncompleteError>(m, "IncompleteError", base.ptr());
  m.attr("__version__") = nuphar_version();

  py::class_<PySession>(m, "Session")
      .def(py::init<const py::object&, const std::string&>(), py::arg("model"), py::arg("settings") = "")
      .def("inputs", &PySession::inputs)
      .def("outputs", &PySession::outputs)
      .def("run", &PySession::run, py::arg("output_names"), py::arg("feeds"));

  m.def(
      "model_editor",
      [](const std::string& in, const std::string& out, const std::string& mode, const std::vector<std::string>& opts) {
        RunTool(opts, [&](const char* const* o, size_t n) {
          return nuphar_model_editor(in.c_str(), out.c_str(), mode.c_str(), o, n);
        });
      },
      py::arg("input"), py::arg("output"), py::arg("mode"), py::arg("options"));
  m.def(
      "symbolic_shape_infer",
      [](const std::string& in, const std::string& out, const std::vector<std::string>& opts) {
        RunTool(opts, [&](const char* const* o, size_t n) {
          return nuphar_symbolic_shape_infer(in.c_str(), out.empty() ? nullptr : out.c_str(), o, n);
        });
      },
      py::arg("input"), py::arg("output"), py::arg("options"));
  m.def(
      "model_quantizer",
      [](const std::string& in, const std::string& out, const std::vector<std::string>& opts) {
        RunTool(opts, [&](const char* const* o, size_t n) { return nuphar_model_quantizer(in.c_str(), out.c_str(), o, n); });
      },
      py::arg("input"), py::arg("output"), py::arg("options"));
}
