// The kernel interface: what every op implementation sees (the reference kernels in
// runtime/kernels/, the fused kernels, and the JIT's generated kernels in runtime/jit/).
//
// Load time: a factory receives a NodeInfo (attributes, opset, constant inputs, declared
// input types) and either returns a kernel or refuses with a Diag naming the reason. All
// validation that does not depend on run-time shapes happens here.
// Run time: OpKernel::Compute reads inputs and writes outputs through a KernelContext.
// Kernels are immutable after creation and must be safe to call from concurrent Runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "graph/error.h"
#include "runtime/core/tensor.h"

namespace onnx {
class NodeProto;
class GraphProto;
class AttributeProto;
}  // namespace onnx

namespace nuphar {

class ThreadPool;

class GraphPlan;
class Frame;
struct PlanScope;

/// Load-time view of one node.
class NodeInfo {
 public:
  NodeInfo(const onnx::NodeProto& node, int opset, PlanScope* scope,
           std::vector<const Tensor*> constant_inputs, std::vector<DType> input_types);

  const std::string& name() const;
  const std::string& op_type() const;
  const std::string& domain() const;
  /// Opset version in force for this node's domain.
  int opset() const { return opset_; }
  const onnx::NodeProto& proto() const { return node_; }

  size_t num_inputs() const;
  size_t num_outputs() const;
  /// An input/output slot that exists and has a non-empty name.
  bool has_input(size_t i) const;
  bool has_output(size_t i) const;
  /// The value of input i when it is a constant known at load time (initializer), else null.
  const Tensor* constant_input(size_t i) const {
    return i < constant_inputs_.size() ? constant_inputs_[i] : nullptr;
  }
  /// Declared element type of input i (graph input, initializer, value_info); kUndefined if unknown.
  DType input_type(size_t i) const { return i < input_types_.size() ? input_types_[i] : DType::kUndefined; }

  bool has_attr(const std::string& name) const;
  const onnx::AttributeProto* attr(const std::string& name) const;
  int64_t GetInt(const std::string& name, int64_t fallback) const;
  float GetFloat(const std::string& name, float fallback) const;
  std::string GetString(const std::string& name, const std::string& fallback) const;
  std::vector<int64_t> GetInts(const std::string& name) const;
  std::vector<float> GetFloats(const std::string& name) const;
  std::vector<std::string> GetStrings(const std::string& name) const;
  Expected<Tensor> GetTensor(const std::string& name) const;
  const onnx::GraphProto* GetGraph(const std::string& name) const;

  /// Compiles a subgraph attribute (Scan/Loop/If body) in this node's scope, so outer-scope
  /// names resolve to the enclosing graphs.
  Expected<std::shared_ptr<const GraphPlan>> CompileSubgraph(const std::string& attr_name) const;

  /// The session setting `key` (runtime/core/settings.h), or "" when unset.
  std::string setting(const std::string& key) const;
  /// Whether the session setting `key` is `value`, compared case-insensitively (Settings::Is).
  bool setting_is(const std::string& key, const std::string& value) const;
  /// The session's worker pool and nuphar_parallel_min_workloads (ModelContext), for kernels
  /// that split their work; null / 0 outside a session.
  ThreadPool* thread_pool() const;
  int64_t parallel_min_work() const;

  /// Adds `value` to the session's statistic `name` (ModelContext::counters; e.g. "jit_kernels").
  void AddCounter(const std::string& name, int64_t value) const;
  /// The same, as a function that stays valid until the session is loaded (for load jobs).
  std::function<void(const std::string&, int64_t)> CounterSink() const;
  /// `job` runs after the whole plan is built, possibly beside other jobs on another thread, and
  /// before Session::Create returns; its error fails the load. Outside a session it runs now.
  /// The job must not refer to this NodeInfo, and must stay harmless if the kernel that queued it
  /// is gone by then (a node folded at load time drops its kernel).
  Status DeferUntilLoaded(std::function<Status()> job) const;
  /// md5 hex of the model the session loaded (ModelContext::model_checksum), as a function valid
  /// until the session is loaded and safe from load jobs; "" outside a session.
  std::function<std::string()> ModelChecksumFn() const;
  /// The object this session's kernels share under `key` (ModelContext::ShareLoadObject): `fresh`
  /// when the key is new (*added = true), else the one stored first. Outside a session: `fresh`.
  std::shared_ptr<void> ShareLoadObject(const std::string& key, std::shared_ptr<void> fresh, bool* added) const;

  /// A Diag for this node.
  Diag Error(const std::string& reason) const { return Diag::Node(*this, reason); }

 private:
  const onnx::NodeProto& node_;
  int opset_;
  PlanScope* scope_;
  std::vector<const Tensor*> constant_inputs_;
  std::vector<DType> input_types_;
};

/// Run-time view of one node execution. Not thread-safe; one per executing frame.
class KernelContext {
 public:
  KernelContext(Frame& frame, const std::vector<int>& inputs, const std::vector<int>& outputs, int node_index = -1)
      : frame_(frame), inputs_(inputs), outputs_(outputs), node_index_(node_index) {}

  size_t num_inputs() const { return inputs_.size(); }
  size_t num_outputs() const { return outputs_.size(); }
  /// Null for an absent optional input.
  const Tensor* input(size_t i) const;
  /// Output i as last written (compare mode reads generated results back); null when absent.
  const Tensor* output(size_t i) const;
  /// True when output i exists (a non-empty name) — kernels may skip computing the others.
  bool output_needed(size_t i) const { return i < outputs_.size() && outputs_[i] >= 0; }
  /// The tensor to write output i into, sized to dtype x shape. Reuses the previous buffer
  /// when possible. For an absent output it returns a scratch tensor owned by the frame.
  Tensor* Output(size_t i, DType dtype, std::span<const int64_t> shape);
  Tensor* Output(size_t i, DType dtype, const std::vector<int64_t>& shape) {
    return Output(i, dtype, std::span<const int64_t>(shape));
  }
  /// Sets output i to `value` (Identity-like ops): shares the buffer of a large tensor, copies a
  /// small one into the output's reused buffer (op_kernel.cc says why).
  void SetOutputAlias(size_t i, const Tensor& value);
  /// SetOutputAlias of `value` viewed with `shape` (the same element count: Reshape, Squeeze,
  /// Flatten), without building the reshaped tensor first when the value is copied.
  void SetOutputReshaped(size_t i, const Tensor& value, std::span<const int64_t> shape);

  /// 64-byte-aligned scratch memory of at least `bytes`, owned by the frame for this node and
  /// reused by later executions (so a kernel's working buffer costs no allocation per step).
  /// Valid until the next Scratch call of the same node.
  void* Scratch(size_t bytes);

  /// The executing frame, for control-flow kernels that run subgraphs.
  Frame& frame() { return frame_; }
  /// The frame for this node's subgraph `which` that the executing frame keeps between runs
  /// (Frame::SubgraphFrame; graph_plan.h says what the caller binds and unbinds).
  Frame& SubgraphFrame(int which, const GraphPlan& body);

 private:
  Frame& frame_;
  const std::vector<int>& inputs_;
  const std::vector<int>& outputs_;
  int node_index_;
};

/// How generated code calls a kernel without the executor (whole-Scan compilation,
/// runtime/jit/): float buffers in the node's input and output order (null when absent), the
/// element count of every input, the rows of input 0 (its size over its last dim). The caller
/// has validated the shapes by running the kernel through Compute once with the same shapes, and
/// provides `scratch_bytes(state, rows)` bytes of 64-byte-aligned scratch.
struct DirectCall {
  using Fn = void (*)(const void* state, const float* const* inputs, const int64_t* input_sizes,
                      float* const* outputs, int64_t rows, void* scratch);
  Fn fn = nullptr;
  const void* state = nullptr;
  size_t (*scratch_bytes)(const void* state, int64_t rows) = nullptr;
  /// Optional: whether calls with inputs of these shapes may go direct (checked once per Run on
  /// step 0's values); null = always.
  bool (*accepts)(const void* state, const Tensor* const* inputs, size_t num_inputs) = nullptr;
};

/// How a JIT product partition (runtime/jit/jit_product_kernel.h) runs a product kernel
/// (FusedConv, ConvTranspose, MatMul or MatMulAddBias by a constant matrix) through the generated code's C ABI:
/// the state the kernel made at load (packed weights, the constant bias and epilogue) applied to
/// raw float buffers. Only input 0 varies; the state holds the node's other inputs (constants).
/// `run` is the code Compute runs, so both give the same bits.
struct ProductCall {
  static constexpr int kMaxRank = 8;
  /// Caller-provided storage for what prepare derived from x's dims (a conv's window geometry and
  /// layout, a product's rows), so run does not derive it again: a small conv's geometry is a fair
  /// part of its call. Each kernel keeps its own trivially copyable plan type in it.
  struct alignas(16) Plan {
    unsigned char bytes[1024];
  };
  /// The output's shape for an input 0 of shape `x` (`rank` dims <= kMaxRank) into `y` (room for
  /// kMaxRank dims), the plan for such an x into `plan` and the bytes of 64-byte-aligned scratch
  /// `run` needs for it; returns the output's rank, 0 when `run` cannot take such an input (the
  /// caller then runs Compute, which reports why).
  int (*prepare)(const void* state, const int64_t* x, int rank, int64_t* y, Plan* plan, size_t* scratch_bytes) = nullptr;
  /// y = the product of x, for an x prepare accepted and the plan it wrote for x.
  void (*run)(const void* state, const Plan* plan, const float* x, float* y, void* scratch) = nullptr;
  const void* state = nullptr;
};

/// One product call as the generated code passes it to the runtime (runtime/jit/jit_runtime_abi.h,
/// its `call` argument): the kernel's ProductCall and the plan its prepare wrote for this x.
struct ProductInvocation {
  const ProductCall* call = nullptr;
  const ProductCall::Plan* plan = nullptr;
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  virtual Status Compute(KernelContext& ctx) const = 0;
  /// Which implementation runs, for profiles (runtime/core/profiler.h): "reference" unless a
  /// kernel runs a specialised path ("ngemm", "fused_ngemm", "gemv_f32").
  virtual const char* profile_path() const { return "reference"; }
  /// Non-null when generated code may call this kernel directly (float in, float out).
  virtual const DirectCall* direct_call() const { return nullptr; }
  /// Non-null when a JIT product partition may run this kernel on raw buffers (ProductCall).
  virtual const ProductCall* product_call() const { return nullptr; }
};

using KernelFactory = Expected<std::unique_ptr<OpKernel>> (*)(const NodeInfo& node);

/// A kernel built from a lambda-free function: `MakeKernel<MyKernel>(args...)`.
template <class K, class... Args>
Expected<std::unique_ptr<OpKernel>> MakeKernel(Args&&... args) {
  return std::unique_ptr<OpKernel>(new K(std::forward<Args>(args)...));
}

}  // namespace nuphar
