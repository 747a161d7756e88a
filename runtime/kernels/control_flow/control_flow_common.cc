// Shared control-flow helpers (control_flow_common.h).
#include "runtime/kernels/control_flow/control_flow_common.h"

#include <onnx/onnx_pb.h>

#include <cstring>

#include "runtime/core/graph_plan.h"
#include "runtime/kernels/kernel.h"

namespace nuphar {

Status CheckTensorOnlyGraph(const NodeInfo& node, const onnx::GraphProto& g, const std::string& attr) {
  auto check = [&](const onnx::ValueInfoProto& v, const char* what) -> Status {
    // An empty TypeProto (exporters leave subgraph outputs untyped, e.g. Silero VAD v5) is an
    // unknown tensor: the runtime takes the type from the value at run time, as ONNX Runtime
    // infers it. Only an explicit sequence, map or optional type is refused.
    if (!v.has_type() || v.type().has_tensor_type() || v.type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
      return Status::OK();
    const char* kind = v.type().has_sequence_type() ? "sequence" : v.type().has_optional_type() ? "optional"
                       : v.type().has_map_type()    ? "map"
                                                    : "non-tensor";
    return node.Error(attr + " " + what + " '" + v.name() + "' has " + kind +
                      " type; only tensor-typed subgraph values are supported");
  };
  for (const auto& v : g.input()) NUPHAR_RETURN_IF_ERROR(check(v, "input"));
  for (const auto& v : g.output()) NUPHAR_RETURN_IF_ERROR(check(v, "output"));
  return Status::OK();
}

DeclaredValue DeclaredOutput(const onnx::GraphProto& g, int i) {
  DeclaredValue d;
  if (i >= g.output_size() || !g.output(i).type().has_tensor_type()) return d;
  const auto& tt = g.output(i).type().tensor_type();
  d.dtype = static_cast<DType>(tt.elem_type());
  if (!tt.has_shape()) return d;
  d.static_shape = true;
  for (const auto& dim : tt.shape().dim()) {
    d.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    if (!dim.has_dim_value()) d.static_shape = false;
  }
  return d;
}

CarriedValues::CarriedValues(const GraphPlan& body, std::vector<int> inputs, std::vector<int> outputs)
    : inputs_(std::move(inputs)), outputs_(std::move(outputs)) {
  std::vector<int> input_slots;
  for (size_t i = 0; i < body.input_names().size(); ++i) input_slots.push_back(body.input_slot(i));
  std::vector<int> claimed;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    const int ref = body.output_ref(static_cast<size_t>(outputs_[k]));
    bool ok = ref >= 0 && ref < body.num_locals();
    for (int s : input_slots) ok = ok && s != ref;
    for (int c : claimed) ok = ok && c != ref;
    if (ok) claimed.push_back(ref);
    swap_.push_back(ok);
  }
}

void CarriedValues::Bind(Frame& body, std::span<const Tensor* const> initial) const {
  for (size_t k = 0; k < inputs_.size(); ++k) body.SetInput(static_cast<size_t>(inputs_[k]), *initial[k]);
}

void CarriedValues::Advance(Frame& body, std::span<const Tensor* const> rewritten) const {
  const GraphPlan& plan = body.plan();
  // Values that cannot be swapped are read before any slot changes (outputs may name inputs).
  std::vector<Tensor> rebound;
  for (size_t k = 0; k < inputs_.size(); ++k)
    if (!swap_[k]) rebound.push_back(*body.Get(plan.output_ref(static_cast<size_t>(outputs_[k]))));
  size_t next = 0;
  for (size_t k = 0; k < inputs_.size(); ++k) {
    Tensor& in = body.Local(plan.input_slot(static_cast<size_t>(inputs_[k])));
    if (swap_[k]) std::swap(in, body.Local(plan.output_ref(static_cast<size_t>(outputs_[k]))));
    else in = std::move(rebound[next++]);
    for (const Tensor* r : rewritten)
      if (in.SharesBufferWith(*r)) in = in.Clone();
  }
}

void CarriedValues::Unbind(KernelContext& ctx, const GraphPlan& body_plan, size_t first_initial_input) const {
  Frame& body = ctx.SubgraphFrame(0, body_plan);
  for (size_t k = 0; k < inputs_.size(); ++k) {
    if (!swap_[k]) continue;
    Tensor& out = body.Local(body_plan.output_ref(static_cast<size_t>(outputs_[k])));
    for (size_t j = 0; j < inputs_.size(); ++j) {
      const Tensor* v = ctx.input(first_initial_input + j);
      if (v && out.SharesBufferWith(*v)) out = Tensor();
    }
  }
  body.ClearInputs();
}

const Tensor& CarriedValues::Current(Frame& body, size_t k) const {
  return body.Local(body.plan().input_slot(static_cast<size_t>(inputs_[k])));
}

AxisSlices AxisSlices::Of(const void* data, std::span<const int64_t> shape, int64_t axis, size_t elem_bytes) {
  AxisSlices s;
  s.base = static_cast<char*>(const_cast<void*>(data));
  int64_t inner = static_cast<int64_t>(elem_bytes);
  for (size_t i = 0; i < shape.size(); ++i) {
    if (static_cast<int64_t>(i) < axis) s.outer *= shape[i];
    else if (static_cast<int64_t>(i) > axis) inner *= shape[i];
  }
  s.len = shape[static_cast<size_t>(axis)];
  s.inner = inner;
  s.outer_stride = s.len * inner;
  return s;
}

void AxisSlices::Gather(int64_t p, void* dst) const {
  char* d = static_cast<char*>(dst);
  for (int64_t o = 0; o < outer; ++o) std::memcpy(d + o * inner, base + o * outer_stride + p * inner, size_t(inner));
}

void AxisSlices::Scatter(int64_t p, const void* src) const {
  const char* s = static_cast<const char*>(src);
  for (int64_t o = 0; o < outer; ++o) std::memcpy(base + o * outer_stride + p * inner, s + o * inner, size_t(inner));
}

std::vector<int64_t> ShapeWithout(std::span<const int64_t> shape, int64_t axis) {
  std::vector<int64_t> out;
  for (size_t i = 0; i < shape.size(); ++i)
    if (static_cast<int64_t>(i) != axis) out.push_back(shape[i]);
  return out;
}

std::vector<int64_t> ShapeWith(std::span<const int64_t> shape, int64_t axis, int64_t len) {
  std::vector<int64_t> out(shape.begin(), shape.end());
  out.insert(out.begin() + axis, len);
  return out;
}

}  // namespace nuphar
