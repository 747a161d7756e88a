// Constant folding of weight producer chains (graph/const_fold.h).
//
// Values are evaluated as (dtype, dims, little-endian bytes); every supported op but Cast only
// moves elements, so it works on bytes whatever the element type.
#include "graph/const_fold.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "graph/tensor_data.h"

namespace nuphar {

ConstantValue::ConstantValue() = default;
ConstantValue::ConstantValue(const onnx::TensorProto* borrowed) : tensor_(borrowed) {}
ConstantValue::ConstantValue(std::unique_ptr<onnx::TensorProto> owned) : owned_(std::move(owned)), tensor_(owned_.get()) {}
ConstantValue::ConstantValue(ConstantValue&&) noexcept = default;
ConstantValue& ConstantValue::operator=(ConstantValue&&) noexcept = default;
ConstantValue::~ConstantValue() = default;

namespace {

struct HostTensor {
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  std::string bytes;
  size_t esize() const { return DTypeSize(dtype); }
};

Expected<HostTensor> ToHost(const onnx::TensorProto& t) {
  HostTensor h;
  h.dtype = static_cast<DType>(t.data_type());
  h.dims.assign(t.dims().begin(), t.dims().end());
  NUPHAR_ASSIGN_OR_RETURN(h.bytes, TensorBytes(t));
  return h;
}

std::unique_ptr<onnx::TensorProto> FromHost(const std::string& name, HostTensor&& h) {
  auto t = std::make_unique<onnx::TensorProto>();
  t->set_name(name);
  t->set_data_type(static_cast<int32_t>(h.dtype));
  for (int64_t d : h.dims) t->add_dims(d);
  t->set_raw_data(std::move(h.bytes));
  return t;
}

std::vector<int64_t> Strides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> s(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * dims[i + 1];
  return s;
}

int64_t NormAxis(int64_t axis, size_t rank) { return axis < 0 ? axis + static_cast<int64_t>(rank) : axis; }

// The chains folded here are weight producers of a model that may be hostile: every axis, index
// and size is checked, and a chain that does not check out is not folded (an error naming the
// node; the caller keeps the node). Found by fuzz_graph_tools (a Gather on a scalar).
constexpr int64_t kMaxFoldElements = int64_t{1} << 28;

Expected<int64_t> CheckedAxis(const onnx::NodeProto& node, int64_t axis, size_t rank) {
  const int64_t r = static_cast<int64_t>(rank);
  if (axis < -r || axis >= r)
    return Diag::Node(node, "axis " + std::to_string(axis) + " is outside a rank-" + std::to_string(r) + " value");
  return NormAxis(axis, rank);
}

// Output element k reads input element map(k); `map` gets the output multi-index. Every read is
// bounds-checked.
template <class Map>
Expected<HostTensor> Gather(const HostTensor& in, std::vector<int64_t> out_dims, Map&& map) {
  HostTensor out{in.dtype, std::move(out_dims), {}};
  for (int64_t d : out.dims)
    if (d < 0) return Diag::Msg("a folded value would have a negative dimension");
  const int64_t n = NumElements(out.dims);
  if (n > kMaxFoldElements) return Diag::Msg("a folded value would have more than 2^28 elements");
  const size_t es = in.esize();
  const int64_t in_elements = es == 0 ? 0 : static_cast<int64_t>(in.bytes.size() / es);
  out.bytes.resize(static_cast<size_t>(n) * es);
  std::vector<int64_t> idx(out.dims.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    const int64_t src = map(idx);
    if (src < 0 || src >= in_elements) return Diag::Msg("a folded value would read outside its input");
    std::memcpy(out.bytes.data() + k * es, in.bytes.data() + src * es, es);
    for (int d = static_cast<int>(idx.size()) - 1; d >= 0; --d) {
      if (++idx[d] < out.dims[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

Expected<HostTensor> SliceAxes(const onnx::NodeProto& node, const HostTensor& in, const std::vector<int64_t>& starts,
                               const std::vector<int64_t>& ends, const std::vector<int64_t>& axes,
                               const std::vector<int64_t>& steps) {
  const size_t r = in.dims.size();
  if (starts.size() != axes.size() || ends.size() != axes.size() || (!steps.empty() && steps.size() != axes.size()))
    return Diag::Node(node, "starts, ends, axes and steps differ in length");
  std::vector<int64_t> start(r, 0), step(r, 1), out_dims = in.dims;
  for (size_t j = 0; j < axes.size(); ++j) {
    NUPHAR_ASSIGN_OR_RETURN(const int64_t a, CheckedAxis(node, axes[j], r));
    const int64_t dim = in.dims[a];
    const int64_t st = j < steps.size() ? steps[j] : 1;
    if (st == 0 || st == INT64_MIN) return Diag::Node(node, "a step of " + std::to_string(st));
    if (starts[j] == INT64_MIN || ends[j] == INT64_MIN) return Diag::Node(node, "a start or end of INT64_MIN");
    if (dim == 0) {
      out_dims[a] = 0;
      continue;
    }
    int64_t s = starts[j] < 0 ? starts[j] + dim : starts[j];
    int64_t e = ends[j] < 0 ? ends[j] + dim : ends[j];
    if (st > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
      out_dims[a] = e > s ? (e - s - 1) / st + 1 : 0;  // no overflow for a step near INT64_MAX
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
      out_dims[a] = s > e ? (s - e - 1) / (-st) + 1 : 0;
    }
    start[a] = s;
    step[a] = st;
  }
  const auto strides = Strides(in.dims);
  return Gather(in, out_dims, [&](const std::vector<int64_t>& i) {
    int64_t off = 0;
    for (size_t d = 0; d < r; ++d) off += (start[d] + i[d] * step[d]) * strides[d];
    return off;
  });
}

template <class Dst>
void CastInto(const std::vector<double>& src, std::string* bytes) {
  bytes->resize(src.size() * sizeof(Dst));
  for (size_t i = 0; i < src.size(); ++i) {
    Dst v = static_cast<Dst>(src[i]);
    std::memcpy(bytes->data() + i * sizeof(Dst), &v, sizeof(Dst));
  }
}

Expected<HostTensor> Cast(const onnx::NodeProto& node, HostTensor in) {
  const DType to = static_cast<DType>(AttrInt(node, "to", 0));
  if (to == in.dtype) return in;
  onnx::TensorProto tmp = MakeTensor("", in.dtype, in.dims, in.bytes.data(), in.bytes.size());
  NUPHAR_ASSIGN_OR_RETURN(auto values, ReadTensorAsDouble(tmp));
  HostTensor out{to, in.dims, {}};
  switch (to) {
    case DType::kFloat: CastInto<float>(values, &out.bytes); break;
    case DType::kDouble: CastInto<double>(values, &out.bytes); break;
    case DType::kInt8: CastInto<int8_t>(values, &out.bytes); break;
    case DType::kInt16: CastInto<int16_t>(values, &out.bytes); break;
    case DType::kInt32: CastInto<int32_t>(values, &out.bytes); break;
    case DType::kInt64: CastInto<int64_t>(values, &out.bytes); break;
    case DType::kUint8: CastInto<uint8_t>(values, &out.bytes); break;
    case DType::kUint16: CastInto<uint16_t>(values, &out.bytes); break;
    case DType::kUint32: CastInto<uint32_t>(values, &out.bytes); break;
    case DType::kUint64: CastInto<uint64_t>(values, &out.bytes); break;
    case DType::kBool: {
      out.bytes.resize(values.size());
      for (size_t i = 0; i < values.size(); ++i) out.bytes[i] = values[i] != 0 ? 1 : 0;
      break;
    }
    case DType::kFloat16: {
      out.bytes.resize(values.size() * 2);
      for (size_t i = 0; i < values.size(); ++i) {
        uint16_t h = FloatToHalf(static_cast<float>(values[i]));
        std::memcpy(out.bytes.data() + 2 * i, &h, 2);
      }
      break;
    }
    default: return Diag::Node(node, std::string("cannot fold a Cast to ") + DTypeName(to));
  }
  return out;
}

Expected<std::vector<int64_t>> IntsFromInputOrAttr(const std::vector<HostTensor>& in, size_t input_index,
                                                   const onnx::NodeProto& node, const std::string& attr, bool* present) {
  *present = true;
  if (in.size() > input_index && in[input_index].dtype != DType::kUndefined) {
    const auto& h = in[input_index];
    onnx::TensorProto tmp = MakeTensor("", h.dtype, h.dims, h.bytes.data(), h.bytes.size());
    return ReadTensorAsInt64(tmp);
  }
  if (const auto* a = FindAttr(node, attr)) return std::vector<int64_t>(a->ints().begin(), a->ints().end());
  *present = false;
  return std::vector<int64_t>{};
}

// Evaluates one node; `in` holds its evaluated inputs (dtype kUndefined for empty names).
Expected<HostTensor> Evaluate(const onnx::NodeProto& node, std::vector<HostTensor> in, int output_index) {
  const std::string& op = node.op_type();
  bool present = false;
  const size_t needed = (op == "Gather") ? 2 : 1;
  if (in.size() < needed || in[0].dtype == DType::kUndefined || (needed == 2 && in[1].dtype == DType::kUndefined))
    return Diag::Node(node, op + " lacks a required input");
  for (const auto& t : in)
    for (int64_t d : t.dims)
      if (d < 0) return Diag::Node(node, "an input has a negative dimension");
  if (op == "Identity") return std::move(in[0]);
  if (op == "Cast") return Cast(node, std::move(in[0]));
  if (op == "Reshape") {
    NUPHAR_ASSIGN_OR_RETURN(auto shape, IntsFromInputOrAttr(in, 1, node, "shape", &present));
    const bool allow_zero = AttrInt(node, "allowzero", 0) != 0;
    int64_t known = 1, infer = -1;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (shape[i] == 0 && !allow_zero) {
        if (i >= in[0].dims.size()) return Diag::Node(node, "Reshape copies a dimension the input does not have");
        shape[i] = in[0].dims[i];
      }
      if (shape[i] == -1 && infer < 0) infer = static_cast<int64_t>(i);
      else if (shape[i] < 0) return Diag::Node(node, "Reshape to a negative dimension");
      else if (__builtin_mul_overflow(known, shape[i], &known)) return Diag::Node(node, "Reshape to too many elements");
    }
    if (infer >= 0) shape[infer] = known ? NumElements(in[0].dims) / known : 0;
    if (NumElements(shape) != NumElements(in[0].dims)) return Diag::Node(node, "Reshape to a different element count");
    in[0].dims = shape;
    return std::move(in[0]);
  }
  if (op == "Unsqueeze" || op == "Squeeze") {
    NUPHAR_ASSIGN_OR_RETURN(auto axes, IntsFromInputOrAttr(in, 1, node, "axes", &present));
    auto dims = in[0].dims;
    if (op == "Unsqueeze") {
      const size_t r = dims.size() + axes.size();
      for (auto& a : axes) {
        NUPHAR_ASSIGN_OR_RETURN(a, CheckedAxis(node, a, r));
      }
      std::sort(axes.begin(), axes.end());
      if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return Diag::Node(node, "Unsqueeze repeats an axis");
      for (int64_t a : axes) dims.insert(dims.begin() + a, 1);
    } else {
      std::vector<int64_t> kept;
      for (int64_t a : axes) NUPHAR_RETURN_IF_ERROR(CheckedAxis(node, a, dims.size()).status());
      for (size_t i = 0; i < dims.size(); ++i) {
        bool drop = axes.empty() ? dims[i] == 1 : false;
        for (int64_t a : axes) drop |= NormAxis(a, dims.size()) == static_cast<int64_t>(i);
        if (!drop) kept.push_back(dims[i]);
      }
      dims = kept;
    }
    in[0].dims = dims;
    return std::move(in[0]);
  }
  if (op == "Transpose") {
    const size_t r = in[0].dims.size();
    std::vector<int64_t> perm(r);
    if (const auto* a = FindAttr(node, "perm")) perm.assign(a->ints().begin(), a->ints().end());
    else std::iota(perm.rbegin(), perm.rend(), 0);
    std::vector<int64_t> sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    bool permutation = sorted.size() == r;
    for (size_t i = 0; permutation && i < r; ++i) permutation = sorted[i] == static_cast<int64_t>(i);
    if (!permutation) return Diag::Node(node, "perm is not a permutation of the axes");
    std::vector<int64_t> out_dims(r);
    for (size_t i = 0; i < r; ++i) out_dims[i] = in[0].dims[perm[i]];
    const auto strides = Strides(in[0].dims);
    return Gather(in[0], out_dims, [&](const std::vector<int64_t>& i) {
      int64_t off = 0;
      for (size_t d = 0; d < r; ++d) off += i[d] * strides[perm[d]];
      return off;
    });
  }
  if (op == "Concat") {
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, CheckedAxis(node, AttrInt(node, "axis", 0), in[0].dims.size()));
    for (const auto& t : in) {
      if (t.dtype != in[0].dtype || t.dims.size() != in[0].dims.size())
        return Diag::Node(node, "Concat of values of different types or ranks");
      for (size_t d = 0; d < t.dims.size(); ++d)
        if (static_cast<int64_t>(d) != axis && t.dims[d] != in[0].dims[d])
          return Diag::Node(node, "Concat of values whose other dimensions differ");
      if (t.bytes.size() != static_cast<size_t>(NumElements(t.dims)) * t.esize())
        return Diag::Node(node, "a Concat input's size does not match its dimensions");
    }
    HostTensor out{in[0].dtype, in[0].dims, {}};
    out.dims[axis] = 0;
    for (const auto& t : in) out.dims[axis] += t.dims[axis];
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= in[0].dims[i];
    for (int64_t o = 0; o < outer; ++o)
      for (const auto& t : in) {
        const size_t chunk = t.bytes.size() / static_cast<size_t>(std::max<int64_t>(outer, 1));
        out.bytes.append(t.bytes, o * chunk, chunk);
      }
    return out;
  }
  if (op == "Slice") {
    std::vector<int64_t> starts, ends, axes, steps;
    if (in.size() > 1) {
      NUPHAR_ASSIGN_OR_RETURN(starts, IntsFromInputOrAttr(in, 1, node, "", &present));
      NUPHAR_ASSIGN_OR_RETURN(ends, IntsFromInputOrAttr(in, 2, node, "", &present));
      NUPHAR_ASSIGN_OR_RETURN(axes, IntsFromInputOrAttr(in, 3, node, "", &present));
      NUPHAR_ASSIGN_OR_RETURN(steps, IntsFromInputOrAttr(in, 4, node, "", &present));
    } else {
      NUPHAR_ASSIGN_OR_RETURN(starts, IntsFromInputOrAttr(in, 9, node, "starts", &present));
      NUPHAR_ASSIGN_OR_RETURN(ends, IntsFromInputOrAttr(in, 9, node, "ends", &present));
      NUPHAR_ASSIGN_OR_RETURN(axes, IntsFromInputOrAttr(in, 9, node, "axes", &present));
    }
    if (axes.empty()) {
      axes.resize(starts.size());
      std::iota(axes.begin(), axes.end(), 0);
    }
    return SliceAxes(node, in[0], starts, ends, axes, steps);
  }
  if (op == "Gather") {
    const auto& data = in[0];
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, CheckedAxis(node, AttrInt(node, "axis", 0), data.dims.size()));
    onnx::TensorProto tmp = MakeTensor("", in[1].dtype, in[1].dims, in[1].bytes.data(), in[1].bytes.size());
    NUPHAR_ASSIGN_OR_RETURN(auto indices, ReadTensorAsInt64(tmp));
    if (static_cast<int64_t>(indices.size()) != NumElements(in[1].dims))
      return Diag::Node(node, "Gather indices do not match their dimensions");
    for (int64_t g : indices)
      if (g < -data.dims[axis] || g >= data.dims[axis]) return Diag::Node(node, "a Gather index is out of range");
    std::vector<int64_t> out_dims(data.dims.begin(), data.dims.begin() + axis);
    out_dims.insert(out_dims.end(), in[1].dims.begin(), in[1].dims.end());
    out_dims.insert(out_dims.end(), data.dims.begin() + axis + 1, data.dims.end());
    const auto strides = Strides(data.dims);
    const size_t idx_rank = in[1].dims.size();
    return Gather(data, out_dims, [&](const std::vector<int64_t>& i) {
      int64_t flat = 0;
      for (size_t k = 0; k < idx_rank; ++k) flat = flat * in[1].dims[k] + i[axis + k];
      int64_t g = indices[flat];
      if (g < 0) g += data.dims[axis];
      int64_t off = g * strides[axis];
      for (int64_t d = 0; d < axis; ++d) off += i[d] * strides[d];
      for (size_t d = axis + 1; d < data.dims.size(); ++d) off += i[d - 1 + idx_rank] * strides[d];
      return off;
    });
  }
  if (op == "Split") {
    NUPHAR_ASSIGN_OR_RETURN(const int64_t axis, CheckedAxis(node, AttrInt(node, "axis", 0), in[0].dims.size()));
    NUPHAR_ASSIGN_OR_RETURN(auto split, IntsFromInputOrAttr(in, 1, node, "split", &present));
    if (node.output_size() == 0) return Diag::Node(node, "Split without outputs");
    if (split.empty()) split.assign(node.output_size(), in[0].dims[axis] / node.output_size());
    if (static_cast<int>(split.size()) <= output_index) return Diag::Node(node, "split has fewer sizes than outputs");
    int64_t start = 0;
    for (int i = 0; i <= output_index; ++i)
      if (split[i] < 0 || split[i] > in[0].dims[axis]) return Diag::Node(node, "a split size is out of range");
    for (int i = 0; i < output_index; ++i) start += split[i];
    return SliceAxes(node, in[0], {start}, {start + split[output_index]}, {axis}, {});
  }
  return Diag::Node(node, "cannot fold op " + op + " into a constant");
}

}  // namespace

Expected<std::unique_ptr<onnx::TensorProto>> ConstantNodeValue(const onnx::NodeProto& node) {
  const std::string& name = node.output(0);
  for (const auto& a : node.attribute()) {
    if (a.name() == "value") {
      auto t = std::make_unique<onnx::TensorProto>(a.t());
      t->set_name(name);
      return t;
    }
    if (a.name() == "value_float") return std::make_unique<onnx::TensorProto>(MakeTensor<float>(name, {}, {a.f()}));
    if (a.name() == "value_int") return std::make_unique<onnx::TensorProto>(MakeTensor<int64_t>(name, {}, {a.i()}));
    if (a.name() == "value_floats") {
      std::vector<float> v(a.floats().begin(), a.floats().end());
      return std::make_unique<onnx::TensorProto>(MakeTensor<float>(name, {static_cast<int64_t>(v.size())}, v));
    }
    if (a.name() == "value_ints") {
      std::vector<int64_t> v(a.ints().begin(), a.ints().end());
      return std::make_unique<onnx::TensorProto>(MakeTensor<int64_t>(name, {static_cast<int64_t>(v.size())}, v));
    }
  }
  return Diag::Node(node, "Constant without a supported value attribute");
}

namespace {

// Weight chains are a few nodes long: a longer one is not folded, so the recursion stays far
// from the stack's end whatever the file. A chain that reaches a node already on it is a cycle,
// which only a model that skipped the structural check (graph/model_check.h) can have: the
// library entry points take a ModelProto as given (found by tests/fuzz: a stack overflow).
constexpr size_t kMaxFoldDepth = 256;

Expected<ConstantValue> FoldAt(const GraphScope& scope, const std::string& name,
                               std::vector<const onnx::NodeProto*>* producers,
                               std::vector<const onnx::NodeProto*>* chain) {
  if (const auto* init = scope.FindInitializer(name)) return ConstantValue(init);
  const GraphScope* owner = nullptr;
  const onnx::NodeProto* node = scope.FindProducer(name, &owner);
  if (!node) return Diag::Msg("'" + name + "' is neither an initializer nor computed from constants");
  if (std::find(chain->begin(), chain->end(), node) != chain->end())
    return Diag::Node(*node, "'" + name + "' is computed from itself (a cycle)");
  if (chain->size() >= kMaxFoldDepth)
    return Diag::Node(*node, "'" + name + "' is at the end of a chain of more than " + std::to_string(kMaxFoldDepth) +
                                 " nodes: not folded into a constant");
  if (producers) producers->push_back(node);
  if (node->op_type() == "Constant") {
    NUPHAR_ASSIGN_OR_RETURN(auto t, ConstantNodeValue(*node));
    return ConstantValue(std::move(t));
  }
  std::vector<HostTensor> inputs;
  for (const auto& in : node->input()) {
    if (in.empty()) {
      inputs.emplace_back();
      continue;
    }
    chain->push_back(node);
    auto v = FoldAt(*owner, in, producers, chain);
    chain->pop_back();
    if (!v.ok()) {
      Status s = v.status();
      return s.WithNode(*node);
    }
    NUPHAR_ASSIGN_OR_RETURN(auto h, ToHost(v->tensor()));
    inputs.push_back(std::move(h));
  }
  if (inputs.empty()) return Diag::Node(*node, "cannot fold op " + node->op_type() + " into a constant");
  int output_index = 0;
  while (node->output(output_index) != name) ++output_index;
  auto result = Evaluate(*node, std::move(inputs), output_index);
  if (!result.ok()) return result.status();
  return ConstantValue(FromHost(name, std::move(result).value()));
}

}  // namespace

Expected<ConstantValue> FoldConstant(const GraphScope& scope, const std::string& name,
                                     std::vector<const onnx::NodeProto*>* producers) {
  std::vector<const onnx::NodeProto*> chain;
  return FoldAt(scope, name, producers, &chain);
}

}  // namespace nuphar
