// Compiled form of one ONNX graph (the main graph or a Scan/Loop/If body) and the frame that
// executes it.
//
// Values are addressed by an integer "ref":
//   [0, num_locals)        values produced in this graph or fed as its inputs
//   [num_locals, ...)      constants: initializers and nodes folded at load time
//   -1                     an absent optional input
//   <= -2                  outer ref k = -ref - 2: a name defined in an enclosing graph
// A Frame resolves every ref to a tensor pointer once, when it is created, so a node's inputs
// are one indexed load each; executing a frame again reuses every output buffer.
//
// Load-time folding: a node whose inputs are all constants (Constant, Shape of a constant,
// Transpose/Unsqueeze/Cast chains that exporters emit for weights) runs once during Compile
// and its outputs become constants, so kernels see their weights through
// NodeInfo::constant_input and can pre-pack them.
#pragma once

#include <deque>
#include <functional>
#include <mutex>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/error.h"
#include "runtime/core/function_expand.h"
#include "runtime/core/graph_rewrite.h"
#include "runtime/core/kernel_registry.h"
#include "runtime/core/op_kernel.h"
#include "runtime/core/tensor.h"

namespace onnx {
class GraphProto;
class ModelProto;
}  // namespace onnx

namespace nuphar {

class Settings;
class ThreadPool;

/// Weights of the graph being compiled that its rewrite copy holds by name, type and dims only,
/// the payload staying in the caller's (const) graph: large initializers and the values of large
/// Constant nodes (which the copy turns into initializers). Each is converted to a Tensor once,
/// shared by the rewrites' constant lookups and the plan's constants.
struct BorrowedWeights {
  std::unordered_map<std::string, const onnx::TensorProto*> by_name;
  std::unordered_map<const onnx::TensorProto*, Tensor> converted;
  void clear() {
    by_name.clear();
    converted.clear();
  }
};

/// Facts about the whole model that every graph compile needs.
struct ModelContext {
  const Settings* settings = nullptr;                   ///< the session's settings (never null in a session)
  const KernelRegistry* registry = nullptr;             ///< kernels by op (never null in a session)
  /// Applied in order to every graph (main graph and bodies) before it is compiled: the fusion
  /// passes and the JIT partitioner (empty in "reference" execution mode).
  std::vector<std::unique_ptr<GraphPass>> rewrites;
  std::unordered_map<std::string, int> opsets;          ///< domain ("" for ONNX) -> version
  std::unordered_map<std::string, DType> value_types;   ///< declared or inferred element types
  /// Declared or inferred shapes (value_info, graph inputs/outputs, ONNX inference): -1 for a
  /// dim without a value; dim_params alongside ("" when the dim has no name).
  struct DeclaredShape {
    std::vector<int64_t> dims;
    std::vector<std::string> dim_params;
  };
  std::unordered_map<std::string, DeclaredShape> value_shapes;
  std::string file;                                     ///< for error messages
  /// md5 hex of the model's bytes (the file, or the serialized proto), for the JIT cache
  /// (runtime/jit/kernel_cache.h). Computed on first use (it costs ~2 ms per MB), memoized.
  std::function<std::string()> model_checksum;
  /// The session's workers (nuphar_num_threads; null or 1 thread = everything on the caller) and
  /// nuphar_parallel_min_workloads (R6). Frames run independent Scans/Loops/RNNs side by side on
  /// it; NGEMM kernels split products on it above the threshold.
  ThreadPool* pool = nullptr;
  int64_t parallel_min_work = 0;
  /// Patterns the fusion passes replaced, over all graphs compiled so far (for tools and tests).
  mutable int fused_patterns = 0;
  /// Statistics of the rewrites and kernels, over all graphs compiled so far, by name (e.g.
  /// "jit_nodes"; runtime/jit/partitioner.h lists its own). Compilation is single-threaded.
  mutable std::unordered_map<std::string, int64_t> counters;
  /// Adds to `counters` under a lock: load jobs (below) run side by side.
  void AddCounter(const std::string& name, int64_t value) const;
  mutable std::mutex counters_mutex;
  /// Work that kernel factories leave for the end of loading (NodeInfo::DeferUntilLoaded: the
  /// JIT's compiles). Session::Create runs every job once the whole plan is built, side by side on
  /// the session's workers when it has more than one thread; the first failure fails the load.
  mutable std::vector<std::function<Status()>> load_jobs;
  /// Load-time objects that kernel factories of this session share by key (NodeInfo::ShareLoadObject;
  /// the JIT's compiled code by content hash, so identical partitions compile once per session).
  /// Type-erased because core/ knows no JIT type; each key's owner fixes the type behind it.
  std::shared_ptr<void> ShareLoadObject(const std::string& key, std::shared_ptr<void> fresh, bool* added) const;
  mutable std::unordered_map<std::string, std::shared_ptr<void>> shared_load_objects;
  mutable std::mutex shared_load_objects_mutex;
  int OpsetFor(const std::string& domain) const;
};

struct PlanNode {
  std::string name;
  std::string op_type;
  std::vector<int> inputs;   ///< refs; -1 for an absent optional input
  std::vector<int> outputs;  ///< local slots; -1 for an absent output
  std::vector<int> implicit_inputs;  ///< refs a subgraph of the node reads from this graph
  /// Runs concurrently with the next node on the session's pool (they are independent; see
  /// PairIndependentNodes in graph_plan.cc).
  bool run_with_next = false;
  /// Its outputs are a function of the shapes of the graph inputs and outer values
  /// (shape_values.h): a frame skips it when they repeat its previous successful execution's.
  bool value_decided = false;
  /// A subgraph's outputs may view a value its frame keeps between Runs (GraphPlan::
  /// outputs_may_view_kept_values of a body compiled by this node's kernel).
  bool body_outputs_may_view_kept = false;
  int graph_index = -1;  ///< the node's index in the compiled GraphProto
  std::unique_ptr<OpKernel> kernel;
};

class GraphPlan {
 public:
  /// Compiles `graph`. `parent` is the enclosing scope for subgraphs, null for the main graph.
  static Expected<std::shared_ptr<GraphPlan>> Compile(const onnx::GraphProto& graph, const ModelContext& model,
                                                      PlanScope* parent);

  const std::string& name() const { return name_; }
  int num_locals() const { return num_locals_; }
  const std::vector<std::string>& input_names() const { return input_names_; }
  const std::vector<std::string>& output_names() const { return output_names_; }
  /// Local slot of graph input i.
  int input_slot(size_t i) const { return input_slots_[i]; }
  /// Constant ref that supplies graph input i when it is not fed (initializer default), or -1.
  int input_default(size_t i) const { return input_defaults_[i]; }
  /// Ref of graph output i.
  int output_ref(size_t i) const { return output_refs_[i]; }
  const std::vector<PlanNode>& nodes() const { return nodes_; }
  /// Whether a graph output may share its buffer with a value a frame keeps between Runs (a
  /// value_decided output here or in a body, shape_values.h), directly or through views; decided
  /// at load. When false, Session::Run hands the outputs out without asking Frame::KeepsBufferOf.
  bool outputs_may_view_kept_values() const { return outputs_may_view_kept_values_; }

 private:
  friend class Frame;
  friend struct PlanScope;
  // Compile stages, in order (graph_plan.cc):
  /// 1. Function expansion and the session's rewrites, on a copy made only when one applies.
  Expected<const onnx::GraphProto*> ApplyRewrites(const onnx::GraphProto& graph, const ModelContext& model,
                                                  PlanScope* parent, OpsetOverrides* overrides);
  /// 2. Locals (graph inputs, node outputs), constants (initializers) and input defaults.
  Status DefineValues(const onnx::GraphProto& graph, PlanScope& scope);
  /// 3. A kernel per node in topological order; nodes of constants only are folded.
  Status CreateKernels(const onnx::GraphProto& graph, PlanScope& scope, const OpsetOverrides& overrides);
  /// 4. Marks independent sequence nodes to run side by side (needs a pool).
  static void PairIndependentNodes(GraphPlan* plan);
  /// 5. Graph outputs.
  Status ResolveOutputs(const onnx::GraphProto& graph, PlanScope& scope);
  /// 6. Marks the nodes whose outputs the shapes of the inputs and outer values decide
  /// (shape_values.h), unless nuphar_reuse_shape_values is off.
  void MarkValueDecidedNodes(const onnx::GraphProto& graph, PlanScope& scope);
  /// 7. outputs_may_view_kept_values, and tells the enclosing scope (PlanScope::
  /// body_outputs_may_view_kept).
  void FindOutputsThatMayViewKeptValues(PlanScope& scope);
  std::string name_;
  int num_locals_ = 0;
  std::deque<Tensor> constants_;  ///< deque: references stay valid while folding appends
  std::vector<int> outer_refs_;  ///< ref in the parent plan, per outer ref
  std::vector<std::string> input_names_, output_names_;
  std::vector<int> input_slots_, input_defaults_, output_refs_;
  std::vector<PlanNode> nodes_;
  bool has_value_decided_ = false;  ///< some node is value_decided
  std::vector<int> decided_slots_;  ///< the local slots the value_decided nodes write
  std::vector<int> body_nodes_;     ///< indices in nodes_ of the nodes with subgraphs
  bool outputs_may_view_kept_values_ = false;
  ThreadPool* pool_ = nullptr;  ///< the session's (ModelContext::pool)
  /// While compiling (ApplyRewrites to DefineValues): the weights the rewrite copy left in the
  /// caller's graph (graph_plan.cc CopyForRewrites).
  BorrowedWeights borrowed_;
  std::shared_ptr<onnx::GraphProto> expanded_;  ///< the graph with function ops expanded, if any were
};

/// Name resolution while a plan is being compiled (lives only during GraphPlan::Compile).
struct PlanScope {
  GraphPlan* plan = nullptr;
  PlanScope* parent = nullptr;
  const ModelContext* model = nullptr;
  std::unordered_map<std::string, int> refs;  ///< locals and constants by name
  std::unordered_map<std::string, int> outer_by_name;
  /// Set by the Compile of a subgraph of the node being created whose outputs may view a value its
  /// frame keeps (GraphPlan::outputs_may_view_kept_values); CreateKernels reads it per node.
  bool body_outputs_may_view_kept = false;

  /// The ref for `name` in this scope, adding an outer ref when an enclosing graph defines it;
  /// -1 when nothing defines it.
  int Resolve(const std::string& name);
  const Tensor* ConstantFor(int ref) const;
};

class RunProfile;

/// One execution of a plan. Not thread-safe: one per concurrent Run (or per control-flow
/// kernel invocation for subgraphs).
class Frame {
 public:
  Frame(const GraphPlan& plan, const Frame* parent);
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;

  const GraphPlan& plan() const { return plan_; }
  /// Whether this frame runs a subgraph (made with a parent frame): its nodes may run once per
  /// loop step instead of once per Run.
  bool is_body() const { return is_body_; }
  const Tensor* Get(int ref) const {
    if (ref >= 0) return ptrs_[static_cast<size_t>(ref)];
    return ref == -1 ? nullptr : outer_[static_cast<size_t>(-ref - 2)];
  }
  Tensor& Local(int slot) { return locals_[static_cast<size_t>(slot)]; }
  /// Binds outer ref `ref` (<= -2) to `value`: load-time folding has no parent frame, but an
  /// enclosing graph's constants are known.
  void BindOuter(int ref, const Tensor* value) { outer_[static_cast<size_t>(-ref - 2)] = value; }
  /// Load-time folding reuses one frame while the plan grows: adds the constants and outer refs
  /// appended since the frame was made (existing entries stay valid: constants_ is a deque).
  void SyncWithPlan();
  /// Binds graph input i (a shallow copy; the plan never writes into inputs).
  void SetInput(size_t i, const Tensor& value) { locals_[static_cast<size_t>(plan_.input_slot(i))] = value; }
  /// Where outputs nobody names are written: one tensor per plan node (two nodes that run side
  /// by side must not share it), a frame-wide one for index -1.
  Tensor& UnnamedOutput(int node_index) {
    return node_index < 0 ? scratch_ : node_unnamed_[static_cast<size_t>(node_index)];
  }
  /// Working memory of node `index` (KernelContext::Scratch); -1 = a frame-wide buffer.
  Tensor& NodeScratch(int index) {
    return index < 0 ? frame_scratch_ : node_scratch_[static_cast<size_t>(index)];
  }

  /// The frame that runs subgraph `which` (If: 0 then, 1 else; Scan and Loop: 0) of node
  /// `node_index` of this frame: made on first use, then kept and reused by every later
  /// execution of the node in this frame. A session pools its frames, so a body's value buffers
  /// are allocated by the first Run of a pooled frame, not by every Run. A frame made for
  /// another plan (node index -1, shared by load-time folding) is replaced. The caller binds the
  /// body's inputs and unbinds them when done (ClearInputs), so that the kept frame does not hold
  /// buffers of the enclosing graph, whose producers would otherwise find them shared and
  /// allocate new ones.
  Frame& SubgraphFrame(int node_index, int which, const GraphPlan& body);
  /// Unbinds every graph input (SetInput with an empty tensor).
  void ClearInputs();

  /// Runs every node in order (a node marked run_with_next together with the next one, on the
  /// session's pool). Errors name the node and graph. A frame skips the value_decided nodes when
  /// the shapes of its inputs and outer values equal those of its previous successful execution:
  /// their outputs are still in its locals from then.
  Status Execute();

  /// Records every kernel run of this frame and of the body frames created under it
  /// (runtime/core/profiler.h); null turns profiling off. Body frames inherit it.
  void set_profile(RunProfile* profile) { profile_ = profile; }

 private:
  Status ExecuteProfiled();
  Status NodeError(Status s, const PlanNode& node) const;
  /// Whether this Run may skip the value_decided nodes; records the input shapes for the next
  /// Run and invalidates them until FinishRun(ok) says the Run completed.
  bool BeginRun();
  void FinishRun(bool ok) { decided_valid_ = ok && plan_.has_value_decided_; }

 public:
  /// Whether `value` shares its buffer with a value_decided output this frame or a body frame
  /// under it keeps for its next execution: a caller that wrote into such an output would change
  /// what the next Run reads.
  bool KeepsBufferOf(const Tensor& value) const;

 private:

  const GraphPlan& plan_;
  const bool is_body_;
  RunProfile* profile_ = nullptr;
  std::vector<Tensor> locals_;
  /// The input shapes of the last Run; valid when that Run completed (value_decided outputs kept).
  std::vector<std::vector<int64_t>> decided_shapes_;
  bool decided_valid_ = false;
  std::vector<const Tensor*> ptrs_;   ///< locals then constants
  std::vector<const Tensor*> outer_;  ///< outer refs, resolved through the parent frame
  Tensor scratch_;
  Tensor frame_scratch_;
  std::vector<Tensor> node_scratch_;  ///< one per plan node
  std::vector<Tensor> node_unnamed_;  ///< one per plan node
  /// SubgraphFrame's frames: kSubgraphsPerNode for node index -1, then as many per plan node.
  static constexpr int kSubgraphsPerNode = 2;
  std::vector<std::unique_ptr<Frame>> subgraph_frames_;
};

}  // namespace nuphar
