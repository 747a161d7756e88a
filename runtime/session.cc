// Session: model loading, input validation and the Run loop (runtime/session.h).
#include "runtime/session.h"

#include <onnx/onnx_pb.h>
#include <onnx/checker.h>
#include <onnx/shape_inference/implementation.h>
#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <iterator>
#include <map>
#include <unordered_map>

#include "graph/diagnostics.h"
#include "graph/graph_view.h"
#include "graph/model_io.h"
#include "graph/onnx_infer_guard.h"
#include "graph/opset_schema.h"
#include "graph/tensor_data.h"
#include "runtime/core/graph_plan.h"
#include "runtime/core/profiler.h"
#include "runtime/core/settings.h"
#include "runtime/fusion/conv_activation_fusion.h"
#include "runtime/fusion/dynamic_quant_matmul_fusion.h"
#include "runtime/fusion/lstm_cell_fusion.h"
#include "runtime/fusion/matmul_bias_fusion.h"
#include "runtime/jit/jit.h"
#include "runtime/jit/load_cache.h"
#include "runtime/kernels/kernel.h"
#include "runtime/platform/thread_pool.h"
#include "runtime/core/tensor_budget.h"
#include "shape_infer/shape_infer.h"

namespace nuphar {
namespace {

ValueDesc DescribeValue(const onnx::ValueInfoProto& vi) {
  ValueDesc d;
  d.name = vi.name();
  if (vi.type().has_tensor_type()) {
    const auto& tt = vi.type().tensor_type();
    d.dtype = static_cast<DType>(tt.elem_type());
    if (tt.has_shape()) {
      d.has_shape = true;
      for (const auto& dim : tt.shape().dim()) {
        d.dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
        d.dim_params.push_back(dim.has_dim_param() ? dim.dim_param() : "");
      }
    }
  }
  return d;
}

// Element types and shapes declared in value_info, graph inputs and outputs, over every graph.
// True for a floating-point tensor of more than 1024 elements: a weight, whose values ONNX's
// inference never reads (it reads the data of small shape-like inputs: Reshape's shape, Slice's
// starts).
bool IsLargeFloatTensor(const onnx::TensorProto& t) {
  const int type = t.data_type();
  const bool floating = type == onnx::TensorProto::FLOAT || type == onnx::TensorProto::DOUBLE ||
                        type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16;
  if (!floating) return false;
  for (int64_t d : t.dims())
    if (d <= 0) return false;  // empty, or a negative dim the checks refuse later
  // Overflow-safe (fuzz_session_create: dims of 2^62): NumElements saturates at INT64_MAX.
  return NumElements(std::vector<int64_t>(t.dims().begin(), t.dims().end())) > 1024;
}

// Fills `copy` with the model for ONNX's inference, with weights (initializers and Constant values, IsLargeFloatTensor)
// reduced to their type and dims.
void CopyForInference(const onnx::ModelProto& model, onnx::ModelProto* copy) {
  copy->Clear();
  copy->set_ir_version(model.ir_version());
  *copy->mutable_opset_import() = model.opset_import();
  *copy->mutable_functions() = model.functions();
  WeightFreeCopyOptions options;
  options.is_weight = IsLargeFloatTensor;
  options.constants = ConstantWeights::kKeepNode;
  CopyWithoutWeights(model.graph(), options, copy->mutable_graph());
}

void CollectTypes(const onnx::GraphProto& g, ModelContext& model) {
  auto add = [&](const onnx::ValueInfoProto& vi) {
    ValueDesc d = DescribeValue(vi);
    if (d.dtype != DType::kUndefined) model.value_types[vi.name()] = d.dtype;
    if (d.has_shape) model.value_shapes[vi.name()] = {std::move(d.dims), std::move(d.dim_params)};
  };
  for (const auto& vi : g.input()) add(vi);
  for (const auto& vi : g.output()) add(vi);
  for (const auto& vi : g.value_info()) add(vi);
  for (const auto& n : g.node())
    for (const auto* sub : Subgraphs(n)) CollectTypes(*sub, model);
}

// Whether some node output of `g` (or of a subgraph) has no complete declared shape: no shape,
// or a dim with neither a value nor a symbol name.
bool HasNodeOutputWithoutShape(const onnx::GraphProto& g) {
  std::unordered_map<std::string, const onnx::ValueInfoProto*> declared;
  for (const auto& vi : g.value_info()) declared[vi.name()] = &vi;
  for (const auto& vi : g.output()) declared[vi.name()] = &vi;
  for (const auto& n : g.node()) {
    for (const auto* sub : Subgraphs(n))
      if (HasNodeOutputWithoutShape(*sub)) return true;
    for (const auto& o : n.output()) {
      if (o.empty()) continue;
      auto it = declared.find(o);
      if (it == declared.end()) return true;
      const auto& t = it->second->type();
      if (!t.has_tensor_type()) continue;  // sequences and maps: not the JIT's concern
      if (!t.tensor_type().has_shape()) return true;
      for (const auto& d : t.tensor_type().shape().dim())
        if (!d.has_dim_value() && d.dim_param().empty()) return true;
    }
  }
  return false;
}

// JIT partitions need declared shapes (spec R1). ONNX's inference gives up on shapes computed at
// run time (a Reshape to a Concat of Shape/Gather results, a Slice whose ends come from Shape), so
// when it leaves node outputs without shapes, the project's symbolic inference (shape_infer/) runs
// on the same weight-free copy and names them by expressions over the input symbols
// ('floor(sequence/64) + 1'). Its failure is not fatal: the partitioner then refuses those nodes.
// The names only decide which nodes the JIT groups; every generated kernel re-checks the actual
// shapes on each call, so a merge auto_merge got wrong costs a fallback, never a wrong result.
void AddSymbolicShapes(onnx::ModelProto* inferred) {
  if (!HasNodeOutputWithoutShape(inferred->graph())) return;
  ShapeInferOptions options;
  options.auto_merge = true;
  options.keep_value_info = true;
  try {
    (void)InferShapes(inferred, options);
  } catch (const std::exception&) {
    // libonnx's per-node inference throws on models it distrusts: keep what ONNX's pass gave.
  }
}

// The reference kernels and the JIT's partition kernel.
const KernelRegistry& SessionKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r = BuiltinKernels();
    jit::RegisterJitKernels(r);
    return r;
  }();
  return registry;
}

// libonnx 1.12's inference functions trust the model: a value produced twice or an axis far out
// of range makes some of them index out of bounds (found by tests/fuzz: LayerNormalization with
// axis = 2^63 - 1 crashes inside libonnx). Such models skip ONNX's inference (their types then
// come from run time); the runtime's own checks still reject what is wrong with them.
bool AttributesInRange(const onnx::GraphProto& g, int depth) {
  constexpr int64_t kMaxAxis = 1024;
  if (depth > 64) return false;
  for (const auto& n : g.node())
    for (const auto& a : n.attribute()) {
      if (a.name() == "axis" && (a.i() > kMaxAxis || a.i() < -kMaxAxis)) return false;
      if (a.name() == "axes" || a.name() == "perm")
        for (int64_t v : a.ints())
          if (v > kMaxAxis || v < -kMaxAxis) return false;
      if (a.has_g() && !AttributesInRange(a.g(), depth + 1)) return false;
      for (const auto& sg : a.graphs())
        if (!AttributesInRange(sg, depth + 1)) return false;
    }
  return true;
}

bool SafeForOnnxInference(const onnx::ModelProto& model) {
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception&) {
    return false;
  }
  return AttributesInRange(model.graph(), 0);
}

// Rejects element types the runtime has no kernels for, before any node is compiled.
Status CheckValueTypes(const std::unordered_map<std::string, DType>& types) {
  for (const auto& [name, t] : types)
    if (!IsNumeric(t))
      return Diag::Msg("value '" + name + "' has type " + DTypeName(t) + ", which the runtime does not support");
  return Status::OK();
}

// The parsed model lives only while the session is created. On an arena its thousands of small
// messages and repeated fields are carved from a few blocks and freed at once, instead of one
// malloc and one free each (a tenth of a warm load went to allocating and destroying them). The
// first block is sized for the model's small messages; large payloads (raw_data) stay on the heap.
google::protobuf::ArenaOptions ModelArenaOptions() {
  google::protobuf::ArenaOptions options;
  options.start_block_size = 64 * 1024;
  options.max_block_size = 1024 * 1024;
  return options;
}

}  // namespace

Session::~Session() {
  if (profiling_ && !profile_file_.empty()) {
    auto written = EndProfiling();
    if (!written) ReportDiagnostic(Severity::kWarning, "nuphar: warning: the profile was not written: " + written.message());
  }
}

Expected<std::string> Session::EndProfiling() {
  if (!profiler_) return Diag::File(origin_, "profiling is off (SessionOptions::enable_profiling, nuphar_profile_file)");
  profiling_ = false;
  if (profile_file_.empty())
    return Diag::File(origin_, "profiling has no file to write (set nuphar_profile_file); the events are in profiler()");
  NUPHAR_RETURN_IF_ERROR(WriteFileAtomic(profile_file_, profiler_->TraceJson()));
  return profile_file_;
}

Expected<std::unique_ptr<Session>> Session::Create(const std::string& model_path, const SessionOptions& options) {
  google::protobuf::Arena arena(ModelArenaOptions());
  onnx::ModelProto& model = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  LoadOptions load;
  std::string content_key;
  load.whole_model_bytes = [&content_key](std::string_view bytes) { content_key = jit::ModelContentKey(bytes); };
  NUPHAR_RETURN_IF_ERROR(LoadModel(model_path, &model, load));
  return CreateImpl(
      model, options, model_path,
      [model_path] {
        std::ifstream in(model_path, std::ios::binary);
        std::ostringstream bytes;
        bytes << in.rdbuf();
        return std::move(bytes).str();
      },
      content_key);
}

Expected<std::unique_ptr<Session>> Session::CreateFromBytes(const void* data, size_t size,
                                                            const SessionOptions& options) {
  google::protobuf::Arena arena(ModelArenaOptions());
  onnx::ModelProto& model = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  NUPHAR_RETURN_IF_ERROR(LoadModelFromBytes(data, size, &model));
  return CreateImpl(
      model, options, "<memory>", [data, size] { return std::string(static_cast<const char*>(data), size); },
      jit::ModelContentKey(std::string_view(static_cast<const char*>(data), size)));
}

Expected<std::unique_ptr<Session>> Session::CreateFromModel(const onnx::ModelProto& model,
                                                            const SessionOptions& options,
                                                            const std::string& origin) {
  return CreateImpl(model, options, origin, [&model] {
    std::string bytes;
    google::protobuf::io::StringOutputStream stream(&bytes);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    model.SerializeToCodedStream(&coded);
    coded.Trim();
    return bytes;
  }, /*content_key=*/"");
}

Expected<std::unique_ptr<Session>> Session::CreateImpl(const onnx::ModelProto& model, const SessionOptions& options,
                                                       const std::string& origin,
                                                       const std::function<std::string()>& model_bytes,
                                                       const std::string& content_key) {
  std::unique_ptr<Session> s(new Session());
  s->options_ = options;
  std::vector<std::string> warnings;
  auto settings = Settings::Parse(options.settings, &warnings);
  if (!settings) return settings.status();
  for (const auto& w : warnings) ReportDiagnostic(Severity::kWarning, "nuphar: warning: " + w);
  s->settings_ = std::make_unique<Settings>(std::move(*settings));
  s->profile_file_ = s->settings_->Get("nuphar_profile_file");
  const int64_t t0 = Profiler::NowNs();
  Status st = s->Init(model, origin, model_bytes, content_key);
  if (!st.ok()) return st.WithFile(origin);
  if (options.enable_profiling || !s->profile_file_.empty()) {
    s->profiler_ = std::make_unique<Profiler>(t0);
    s->profiler_->AddSessionEvent("session_initialization", t0, Profiler::NowNs());
    s->profiling_ = true;
  }
  return s;
}

Status Session::Init(const onnx::ModelProto& model_in, const std::string& origin,
                     const std::function<std::string()>& model_bytes, const std::string& content_key) {
  origin_ = origin;
  model_ = std::make_unique<ModelContext>();
  model_->file = origin;
  // Asked by kernel factories and load jobs (possibly side by side); `model_bytes` refers to the
  // caller's model, so the function is dropped once loading is done.
  struct Memo {
    std::mutex mutex;
    std::string md5;
  };
  model_->model_checksum = [&model_bytes, memo = std::make_shared<Memo>()]() {
    std::lock_guard<std::mutex> lock(memo->mutex);
    if (memo->md5.empty()) memo->md5 = jit::ModelChecksum(model_bytes());
    return memo->md5;
  };
  model_->settings = settings_.get();
  model_->registry = &SessionKernels();
  // "reference" executes the model's nodes exactly as written: no fusion, no generated code.
  if (!settings_->Is("nuphar_execution_mode", "reference")) {
    model_->rewrites.push_back(CreateDynQuantMatMulFusion());
    model_->rewrites.push_back(CreateDynQuantLstmCellFusion());
    model_->rewrites.push_back(CreateConvActivationFusion());
    model_->rewrites.push_back(CreateMatMulAddBiasFusion());
    model_->rewrites.push_back(jit::CreateJitPartitionPass());
  }
  // Settings::Parse has checked both are non-negative integers.
  NUPHAR_ASSIGN_OR_RETURN(const long long threads, settings_->GetInt("nuphar_num_threads", 1));
  if (threads > 1024) return Diag::Msg("settings: nuphar_num_threads must be at most 1024, not " + std::to_string(threads));
  thread_pool_ = ThreadPool::Create(threads < 1 ? 1 : static_cast<int>(threads));
  model_->pool = thread_pool_.get();
  NUPHAR_ASSIGN_OR_RETURN(const long long min_work, settings_->GetInt("nuphar_parallel_min_workloads", 0));
  model_->parallel_min_work = min_work;
  NUPHAR_RETURN_IF_ERROR(CheckOpsetKnown(model_in, origin));
  for (const auto& op : model_in.opset_import())
    model_->opsets[op.domain() == "ai.onnx" ? "" : op.domain()] = static_cast<int>(op.version());
  if (!model_->opsets.count("")) {
    if (model_in.ir_version() < 3) model_->opsets[""] = 1;  // IR < 3 models predate opset_import
    else return Diag::Msg("the model imports no ONNX opset");
  }

  InferValueTypes(model_in, content_key);
  NUPHAR_RETURN_IF_ERROR(CheckValueTypes(model_->value_types));

  NUPHAR_ASSIGN_OR_RETURN(const long long max_bytes,
                          settings_->GetInt("nuphar_max_tensor_bytes", static_cast<long long>(kDefaultMaxTensorBytes)));
  max_tensor_bytes_ = static_cast<size_t>(max_bytes);
  // Initializers, packed weights and folded constants are tensors too: the same budget applies
  // while the plan is built (graph_plan.cc catches it per folded node; this catches the rest).
  Expected<std::shared_ptr<GraphPlan>> plan = Diag::Msg("internal: plan not built");
  try {
    ScopedTensorByteLimit budget(max_tensor_bytes_);  // only where a refusal is caught
    plan = GraphPlan::Compile(model_in.graph(), *model_, nullptr);
  } catch (const std::bad_alloc& e) {
    const auto* big = dynamic_cast<const TensorTooLarge*>(&e);
    return Diag::File(origin, big ? "loading needs a tensor of " + std::to_string(big->bytes) +
                                        " bytes, above nuphar_max_tensor_bytes (" + std::to_string(big->limit) + ")"
                                  : std::string("out of memory while loading the model"));
  }
  if (!plan) return plan.status();
  plan_ = std::move(*plan);
  NUPHAR_RETURN_IF_ERROR(RunLoadJobs());
  model_->model_checksum = nullptr;

  std::unordered_map<std::string, bool> has_initializer;
  for (const auto& t : model_in.graph().initializer()) has_initializer[t.name()] = true;
  for (const auto& vi : model_in.graph().input()) {
    bool repeated = false;
    for (const auto& d : inputs_) repeated |= d.name == vi.name();
    if (repeated) continue;
    inputs_.push_back(DescribeValue(vi));
    inputs_.back().has_default = has_initializer.count(vi.name()) > 0;
  }
  for (const auto& vi : model_in.graph().output()) outputs_.push_back(DescribeValue(vi));
  return Status::OK();
}

void Session::InferValueTypes(const onnx::ModelProto& model_in, const std::string& content_key) {
  const bool symbolic = !settings_->Is("nuphar_execution_mode", "reference");
  const jit::LoadCacheEntry cached =
      jit::LoadCacheEntryFor(settings_->Get("nuphar_cache_path"), content_key, symbolic);
  if (jit::ReadInferredValues(cached, model_.get())) {
    model_->AddCounter("shapes_from_cache", 1);
    return;
  }
  // ONNX's own inference supplies element types of intermediate values, so kernels can refuse
  // unsupported types at load time. Failure here is not fatal: types then come from run time.
  // The copy and what the inference adds to it live until the types are collected: on an arena.
  google::protobuf::Arena arena(ModelArenaOptions());
  onnx::ModelProto& inferred = *google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena);
  CopyForInference(model_in, &inferred);
  if (SafeForOnnxInference(model_in)) {
    try {
      onnx::shape_inference::InferShapes(inferred, GuardedSchemaRegistry());
    } catch (const std::exception&) {
      CopyForInference(model_in, &inferred);
    }
  }
  if (symbolic) AddSymbolicShapes(&inferred);
  CollectTypes(inferred.graph(), *model_);
  jit::SaveInferredValues(cached, *model_);
}

// The kernels' deferred work (ModelContext::load_jobs: the JIT's compiles), side by side on the
// session's workers when it has more than one thread. What a job reports (cache warnings, dumps)
// is collected on its thread and replayed here in queue order, so it reaches the caller's sink
// (graph/diagnostics.h sinks are per thread); errors too are taken in queue order.
Status Session::RunLoadJobs() {
  std::vector<std::function<Status()>> jobs = std::move(model_->load_jobs);
  model_->load_jobs.clear();
  std::vector<Status> results(jobs.size());
  std::vector<std::vector<std::pair<Severity, std::string>>> reports(jobs.size());
  auto run = [&](int i) {
    ScopedDiagnosticSink collect([&reports, i](Severity s, const std::string& line) { reports[i].emplace_back(s, line); });
    results[i] = jobs[i]();
  };
  if (thread_pool_ && thread_pool_->num_threads() > 1 && jobs.size() > 1) {
    thread_pool_->ParallelFor(static_cast<int>(jobs.size()), run);
  } else {
    for (size_t i = 0; i < jobs.size(); ++i) run(static_cast<int>(i));
  }
  for (const auto& lines : reports)
    for (const auto& [severity, line] : lines) ReportDiagnostic(severity, line);
  for (Status& s : results)
    if (!s.ok()) return s.WithFile(origin_);
  return Status::OK();
}

int Session::fused_pattern_count() const { return model_->fused_patterns; }

int64_t Session::counter(const std::string& name) const {
  auto it = model_->counters.find(name);
  return it == model_->counters.end() ? 0 : it->second;
}

int Session::num_threads() const { return thread_pool_ ? thread_pool_->num_threads() : 1; }

int64_t Session::parallel_regions_run() const { return thread_pool_ ? thread_pool_->regions_run() : 0; }

int Session::concurrent_node_pairs() const {
  int pairs = 0;
  for (const PlanNode& node : plan_->nodes()) pairs += node.run_with_next ? 1 : 0;
  return pairs;
}

Status Session::CheckInputs(const NamedTensors& inputs) const {
  std::map<std::string, int64_t> symbols;  // dim_param -> value, first writer wins
  for (const auto& [name, tensor] : inputs) {
    const ValueDesc* desc = nullptr;
    for (const auto& d : inputs_)
      if (d.name == name) desc = &d;
    if (!desc) return Diag::Msg("'" + name + "' is not an input of the model");
    if (!tensor.defined()) return Diag::Msg("input '" + name + "' has no value");
    if (desc->dtype != DType::kUndefined && desc->dtype != tensor.dtype())
      return Diag::Msg("input '" + name + "' has type " + DTypeName(tensor.dtype()) + ", the model expects " +
                       DTypeName(desc->dtype));
    if (!desc->has_shape) continue;
    if (desc->dims.size() != tensor.shape().size())
      return Diag::Msg("input '" + name + "' has rank " + std::to_string(tensor.rank()) + " (shape " +
                       ShapeToString(tensor.shape()) + "), the model expects rank " + std::to_string(desc->dims.size()));
    for (size_t i = 0; i < desc->dims.size(); ++i) {
      const int64_t got = tensor.shape()[i];
      if (desc->dims[i] >= 0 && desc->dims[i] != got)
        return Diag::Msg("input '" + name + "' has shape " + ShapeToString(tensor.shape()) + ", dim " +
                         std::to_string(i) + " must be " + std::to_string(desc->dims[i]));
      const std::string& sym = desc->dim_params[i];
      if (desc->dims[i] < 0 && !sym.empty()) {
        auto [it, inserted] = symbols.emplace(sym, got);
        if (!inserted && it->second != got)
          return Diag::Msg("input '" + name + "' dim " + std::to_string(i) + " ('" + sym + "') is " +
                           std::to_string(got) + " but another input set '" + sym + "' to " +
                           std::to_string(it->second));
      }
    }
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (inputs_[i].has_default) continue;
    bool fed = false;
    for (const auto& kv : inputs) fed |= kv.first == inputs_[i].name;
    if (!fed) return Diag::Msg("missing input '" + inputs_[i].name + "'");
  }
  return Status::OK();
}

std::unique_ptr<Frame> Session::AcquireFrame() const {
  {
    std::lock_guard<std::mutex> lock(pool_mutex_);
    if (!frame_pool_.empty()) {
      auto f = std::move(frame_pool_.back());
      frame_pool_.pop_back();
      return f;
    }
  }
  return std::make_unique<Frame>(*plan_, nullptr);
}

void Session::ReleaseFrame(std::unique_ptr<Frame> frame) const {
  std::lock_guard<std::mutex> lock(pool_mutex_);
  frame_pool_.push_back(std::move(frame));
}

Expected<std::vector<Tensor>> Session::Run(const NamedTensors& inputs,
                                           const std::vector<std::string>& output_names) const {
  const bool profiling = profiling_.load(std::memory_order_relaxed);
  const int64_t t0 = profiling ? Profiler::NowNs() : 0;
  NUPHAR_RETURN_IF_ERROR(CheckInputs(inputs).WithFile(origin_));
  std::vector<int> refs;
  if (output_names.empty()) {
    for (size_t i = 0; i < plan_->output_names().size(); ++i) refs.push_back(plan_->output_ref(i));
  } else {
    for (const auto& n : output_names) {
      int ref = -1;
      for (size_t i = 0; i < plan_->output_names().size(); ++i)
        if (plan_->output_names()[i] == n) ref = plan_->output_ref(i);
      if (ref == -1) return Diag::File(origin_, "'" + n + "' is not an output of the model");
      refs.push_back(ref);
    }
  }

  std::unique_ptr<Frame> frame = AcquireFrame();
  for (size_t i = 0; i < plan_->input_names().size(); ++i) {
    const Tensor* value = nullptr;
    for (const auto& [name, t] : inputs)
      if (name == plan_->input_names()[i]) value = &t;
    if (!value && plan_->input_default(i) >= 0) value = frame->Get(plan_->input_default(i));
    frame->SetInput(i, value ? *value : Tensor());
  }
  RunProfile run_profile;
  if (profiling) frame->set_profile(&run_profile);
  Status status = Status::OK();
  {
    ScopedTensorByteLimit budget(max_tensor_bytes_);
    status = frame->Execute();
  }
  frame->set_profile(nullptr);
  std::vector<Tensor> outputs;
  if (status.ok()) {
    // A view of a value the frame keeps for its next Run (shape_values.h) goes out as a copy;
    // the plan knows from load whether any output can be one.
    const bool may_view_kept = plan_->outputs_may_view_kept_values();
    for (int ref : refs) {
      const Tensor* t = frame->Get(ref);
      outputs.push_back(!t ? Tensor() : may_view_kept && frame->KeepsBufferOf(*t) ? t->Clone() : *t);
    }
  }
  // Drop the bindings to the caller's inputs so the pooled frame does not keep them alive.
  for (size_t i = 0; i < plan_->input_names().size(); ++i) frame->SetInput(i, Tensor());
  // The outputs now belong to the caller alone. A pooled frame that kept sharing them would
  // decide whether it may write into such a buffer again from its use count, a relaxed read
  // that does not order the caller's last reads on another thread before the frame's next
  // writes (ThreadSanitizer reported it on concurrent Runs).
  for (int ref : refs)
    if (ref >= 0 && ref < plan_->num_locals()) frame->Local(ref) = Tensor();
  ReleaseFrame(std::move(frame));
  if (profiling) profiler_->AddRun(t0, Profiler::NowNs(), std::move(run_profile));
  if (!status.ok()) return status.WithFile(origin_);
  return outputs;
}

}  // namespace nuphar
