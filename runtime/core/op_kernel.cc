// NodeInfo attribute access and KernelContext outputs (runtime/core/op_kernel.h).
#include "runtime/core/op_kernel.h"

#include <onnx/onnx_pb.h>

#include <cstring>

#include "graph/node_builder.h"
#include "runtime/core/graph_plan.h"
#include "runtime/core/settings.h"
#include "runtime/core/tensor_proto.h"

namespace nuphar {

NodeInfo::NodeInfo(const onnx::NodeProto& node, int opset, PlanScope* scope, std::vector<const Tensor*> constant_inputs,
                   std::vector<DType> input_types)
    : node_(node),
      opset_(opset),
      scope_(scope),
      constant_inputs_(std::move(constant_inputs)),
      input_types_(std::move(input_types)) {}

const std::string& NodeInfo::name() const { return node_.name(); }
const std::string& NodeInfo::op_type() const { return node_.op_type(); }
const std::string& NodeInfo::domain() const { return node_.domain(); }
size_t NodeInfo::num_inputs() const { return static_cast<size_t>(node_.input_size()); }
size_t NodeInfo::num_outputs() const { return static_cast<size_t>(node_.output_size()); }
bool NodeInfo::has_input(size_t i) const { return i < num_inputs() && !node_.input(static_cast<int>(i)).empty(); }
bool NodeInfo::has_output(size_t i) const { return i < num_outputs() && !node_.output(static_cast<int>(i)).empty(); }

std::string NodeInfo::setting(const std::string& key) const {
  const Settings* s = scope_ && scope_->model ? scope_->model->settings : nullptr;
  return s ? s->Get(key) : std::string();
}

bool NodeInfo::setting_is(const std::string& key, const std::string& value) const {
  const Settings* s = scope_ && scope_->model ? scope_->model->settings : nullptr;
  return s && s->Is(key, value);
}

ThreadPool* NodeInfo::thread_pool() const { return scope_ && scope_->model ? scope_->model->pool : nullptr; }

int64_t NodeInfo::parallel_min_work() const {
  return scope_ && scope_->model ? scope_->model->parallel_min_work : 0;
}

std::function<void(const std::string&, int64_t)> NodeInfo::CounterSink() const {
  const ModelContext* model = scope_ ? scope_->model : nullptr;
  return [model](const std::string& name, int64_t value) {
    if (model) model->AddCounter(name, value);
  };
}


Status NodeInfo::DeferUntilLoaded(std::function<Status()> job) const {
  if (!scope_ || !scope_->model) return job();
  scope_->model->load_jobs.push_back(std::move(job));
  return Status::OK();
}

std::function<std::string()> NodeInfo::ModelChecksumFn() const {
  if (!scope_ || !scope_->model || !scope_->model->model_checksum) return [] { return std::string(); };
  return scope_->model->model_checksum;
}

std::shared_ptr<void> NodeInfo::ShareLoadObject(const std::string& key, std::shared_ptr<void> fresh,
                                                bool* added) const {
  if (!scope_ || !scope_->model) {
    *added = true;
    return fresh;
  }
  return scope_->model->ShareLoadObject(key, std::move(fresh), added);
}

void NodeInfo::AddCounter(const std::string& name, int64_t value) const {
  if (scope_ && scope_->model) scope_->model->AddCounter(name, value);
}

// The attribute readers are graph/node_builder.h's, shared with the graph tools.
const onnx::AttributeProto* NodeInfo::attr(const std::string& name) const { return FindAttr(node_, name); }
bool NodeInfo::has_attr(const std::string& name) const { return attr(name) != nullptr; }

int64_t NodeInfo::GetInt(const std::string& name, int64_t fallback) const { return AttrInt(node_, name, fallback); }
float NodeInfo::GetFloat(const std::string& name, float fallback) const { return AttrFloat(node_, name, fallback); }
std::string NodeInfo::GetString(const std::string& name, const std::string& fallback) const {
  return AttrString(node_, name, fallback);
}
std::vector<int64_t> NodeInfo::GetInts(const std::string& name) const {
  return AttrInts(node_, name).value_or(std::vector<int64_t>{});
}
std::vector<float> NodeInfo::GetFloats(const std::string& name) const {
  return AttrFloats(node_, name).value_or(std::vector<float>{});
}
std::vector<std::string> NodeInfo::GetStrings(const std::string& name) const {
  return AttrStrings(node_, name).value_or(std::vector<std::string>{});
}
Expected<Tensor> NodeInfo::GetTensor(const std::string& name) const {
  const auto* a = attr(name);
  if (!a || !a->has_t()) return Error("attribute '" + name + "' is missing or not a tensor");
  auto t = TensorFromProto(a->t());
  if (!t) return Error("attribute '" + name + "': " + t.diag().reason);
  return t;
}
const onnx::GraphProto* NodeInfo::GetGraph(const std::string& name) const {
  const auto* a = attr(name);
  return a && a->has_g() ? &a->g() : nullptr;
}

Expected<std::shared_ptr<const GraphPlan>> NodeInfo::CompileSubgraph(const std::string& attr_name) const {
  const onnx::GraphProto* g = GetGraph(attr_name);
  if (!g) return Error("graph attribute '" + attr_name + "' is missing");
  auto plan = GraphPlan::Compile(*g, *scope_->model, scope_);
  if (!plan) return plan.status();
  return std::shared_ptr<const GraphPlan>(std::move(*plan));
}

const Tensor* KernelContext::input(size_t i) const {
  if (i >= inputs_.size()) return nullptr;
  const Tensor* t = frame_.Get(inputs_[i]);
  return t && t->defined() ? t : nullptr;
}

const Tensor* KernelContext::output(size_t i) const {
  return output_needed(i) ? frame_.Get(outputs_[i]) : nullptr;
}

Tensor* KernelContext::Output(size_t i, DType dtype, std::span<const int64_t> shape) {
  Tensor* t = output_needed(i) ? &frame_.Local(outputs_[i]) : &frame_.UnnamedOutput(node_index_);
  t->Resize(dtype, shape);
  return t;
}

Frame& KernelContext::SubgraphFrame(int which, const GraphPlan& body) {
  return frame_.SubgraphFrame(node_index_, which, body);
}

void* KernelContext::Scratch(size_t bytes) {
  Tensor& t = frame_.NodeScratch(node_index_);
  const int64_t n = static_cast<int64_t>(bytes);
  t.Resize(DType::kUint8, std::span<const int64_t>(&n, 1));
  return t.raw();
}

namespace {

// SetOutputAlias copies a value below this size into the output's own (reused) buffer instead of
// sharing it: sharing would make the producer of the value find its buffer shared on the next
// step of a loop and allocate a new one, every step. Copying a few KB costs less than that
// allocation.
constexpr size_t kAliasMinBytes = 256 * 1024;

}  // namespace

void KernelContext::SetOutputReshaped(size_t i, const Tensor& value, std::span<const int64_t> shape) {
  if (!output_needed(i)) return;
  if (value.bytes() >= kAliasMinBytes || !value.defined())
    return SetOutputAlias(i, value.Reshaped(std::vector<int64_t>(shape.begin(), shape.end())));
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  NUPHAR_CHECK(count == value.size(), "SetOutputReshaped: element count changes");
  Tensor& out = frame_.Local(outputs_[i]);
  out.Resize(value.dtype(), shape);
  if (value.bytes() > 0) std::memcpy(out.raw(), value.raw(), value.bytes());
}

void KernelContext::SetOutputAlias(size_t i, const Tensor& value) {
  if (!output_needed(i)) return;
  Tensor& out = frame_.Local(outputs_[i]);
  if (value.bytes() >= kAliasMinBytes || !value.defined()) {
    out = value;
    return;
  }
  out.Resize(value.dtype(), value.shape());
  if (value.bytes() > 0) std::memcpy(out.raw(), value.raw(), value.bytes());
}

}  // namespace nuphar
