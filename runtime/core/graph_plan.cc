// Graph compilation (topological order, name resolution, load-time folding) and frame
// execution (runtime/core/graph_plan.h).
#include "runtime/core/graph_plan.h"

#include "runtime/platform/thread_pool.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <unordered_set>
#include <utility>

#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "runtime/core/profiler.h"
#include "runtime/core/settings.h"
#include "runtime/core/shape_values.h"
#include "runtime/core/tensor_budget.h"
#include "runtime/core/tensor_proto.h"

namespace nuphar {

void ModelContext::AddCounter(const std::string& name, int64_t value) const {
  std::lock_guard<std::mutex> lock(counters_mutex);
  counters[name] += value;
}

std::shared_ptr<void> ModelContext::ShareLoadObject(const std::string& key, std::shared_ptr<void> fresh,
                                                    bool* added) const {
  std::lock_guard<std::mutex> lock(shared_load_objects_mutex);
  auto [it, inserted] = shared_load_objects.try_emplace(key, std::move(fresh));
  *added = inserted;
  return it->second;
}

int ModelContext::OpsetFor(const std::string& domain) const {
  // Nodes of the runtime's own rewrites keep the semantics of the ONNX opset they replace (a JitScan
  // is a Scan of the model's opset).
  if (domain == kFusedDomain) return OpsetFor("");
  auto it = opsets.find(domain == "ai.onnx" ? "" : domain);
  return it == opsets.end() ? -1 : it->second;
}

int PlanScope::Resolve(const std::string& name) {
  if (auto it = refs.find(name); it != refs.end()) return it->second;
  if (auto it = outer_by_name.find(name); it != outer_by_name.end()) return it->second;
  if (!parent) return -1;
  const int parent_ref = parent->Resolve(name);
  if (parent_ref == -1) return -1;
  const int ref = -2 - static_cast<int>(plan->outer_refs_.size());
  plan->outer_refs_.push_back(parent_ref);
  outer_by_name.emplace(name, ref);
  return ref;
}

const Tensor* PlanScope::ConstantFor(int ref) const {
  if (ref >= plan->num_locals_) return &plan->constants_[static_cast<size_t>(ref - plan->num_locals_)];
  if (ref <= -2 && parent) return parent->ConstantFor(plan->outer_refs_[static_cast<size_t>(-ref - 2)]);
  return nullptr;
}

namespace {

// Default of nuphar_max_subgraph_depth: real models nest bodies two or three levels (an LSTM's
// Scan inside a Loop inside an If); 16 leaves room and stops a hostile chain early.
constexpr long long kDefaultMaxSubgraphDepth = 16;

bool IsNondeterministic(const onnx::NodeProto& node) {
  const std::string& op = node.op_type();
  return op.rfind("Random", 0) == 0 || op == "Bernoulli" || op == "Multinomial";
}

// The execution order: graph/graph_view.h's one topological order (Kahn over explicit and
// implicit subgraph inputs), taking the lowest ready index so that an ordered graph keeps its
// order. A node reading its own output is a cycle here: the executor cannot run it.
Expected<std::vector<int>> ExecutionOrder(const onnx::GraphProto& g) {
  TopoOrder topo = TopologicalOrder(g, TopoOptions{ReadyOrder::kLowestIndex, /*self_read_is_cycle=*/true});
  if (!topo.ok()) return Diag::Node(g.node(topo.cycle_node), "the graph has a cycle through this node");
  return std::move(topo.order);
}

// The reason of an allocation refused by the tensor budget (runtime/core/tensor_budget.h) or by
// the system.
std::string TensorBudgetReason(const std::bad_alloc& e) {
  if (const auto* big = dynamic_cast<const TensorTooLarge*>(&e))
    return "needs a tensor of " + std::to_string(big->bytes) + " bytes, above nuphar_max_tensor_bytes (" +
           std::to_string(big->limit) + "; the README's settings table says how to raise it)";
  return "out of memory";
}

// One node's Compute under the tensor budget `limit` (the running thread may be a worker that
// has no limit of its own); a refused allocation becomes the node's error.
Status ComputeWithBudget(const OpKernel& kernel, KernelContext& ctx, size_t limit) {
  ScopedTensorByteLimit scope(limit);
  try {
    return kernel.Compute(ctx);
  } catch (const std::bad_alloc& e) {
    return Diag::Msg(TensorBudgetReason(e));
  }
}

// The value of initializer `t` of the graph being compiled: `t` itself, or the original the
// rewrite copy borrowed it from (CopyForRewrites), converted once.
Expected<Tensor> InitializerValue(const onnx::TensorProto& t, BorrowedWeights* borrowed) {
  if (!borrowed || !t.raw_data().empty() || t.float_data_size() || t.int32_data_size() || t.int64_data_size() ||
      t.double_data_size() || t.uint64_data_size() || t.string_data_size())
    return TensorFromProto(t);
  auto it = borrowed->by_name.find(t.name());
  if (it == borrowed->by_name.end()) return TensorFromProto(t);
  if (auto done = borrowed->converted.find(it->second); done != borrowed->converted.end()) return done->second;
  NUPHAR_ASSIGN_OR_RETURN(Tensor value, TensorFromProto(*it->second));
  return borrowed->converted.emplace(it->second, std::move(value)).first->second;
}

// Payload bytes of an in-memory tensor (0 for external data).
size_t InMemoryBytes(const onnx::TensorProto& t) {
  return t.raw_data().size() + 4 * static_cast<size_t>(t.float_data_size() + t.int32_data_size()) +
         8 * static_cast<size_t>(t.int64_data_size() + t.double_data_size() + t.uint64_data_size());
}

// A tensor worth borrowing instead of copying.
bool Borrowable(const onnx::TensorProto& t) {
  return InMemoryBytes(t) >= 4096 && t.string_data_size() == 0 && t.data_location() != onnx::TensorProto::EXTERNAL;
}

// The graph the rewrites work on: `graph` with every large in-memory initializer reduced to its
// name, type and dims, the payload staying in `graph` (listed in `borrowed`). A large Constant
// node becomes such an initializer too (its output is a constant either way; exporters such as
// Paddle's hold every weight in Constant nodes). Copying the weights cost a full copy of the
// model per load and doubled its memory for the session's lifetime.
std::shared_ptr<onnx::GraphProto> CopyForRewrites(const onnx::GraphProto& graph, BorrowedWeights* borrowed) {
  WeightFreeCopyOptions options;
  options.is_weight = Borrowable;
  options.constants = ConstantWeights::kAsInitializer;
  std::vector<std::pair<std::string, const onnx::TensorProto*>> stripped;
  auto copy = std::make_shared<onnx::GraphProto>();
  CopyWithoutWeights(graph, options, &stripped).Swap(copy.get());
  borrowed->clear();
  for (auto& [name, tensor] : stripped) borrowed->by_name[name] = tensor;
  return copy;
}

}  // namespace

// Constant values visible from `graph` before it is compiled: its initializers, its Constant
// nodes, and constants of the enclosing scopes. Converted on first use and cached. Which names the
// graph computes is indexed (the partitioner asks about every value: scanning the graph per lookup
// made loading quadratic in its size); the index is rebuilt when a rewrite has changed the
// graph's node or initializer count, and values are always read from the live graph.
static ConstantLookup LocalConstants(const onnx::GraphProto& graph, PlanScope* parent, BorrowedWeights* borrowed) {
  struct Index {
    int nodes = -1, initializers = -1;  // the graph's sizes when built
    std::unordered_set<std::string> initializer, constant_output, computed;
    std::unordered_map<std::string, Tensor> converted;
  };
  auto index = std::make_shared<Index>();
  return [&graph, parent, index, borrowed](const std::string& name) -> const Tensor* {
    if (name.empty()) return nullptr;
    if (auto it = index->converted.find(name); it != index->converted.end()) return &it->second;
    if (index->nodes != graph.node_size() || index->initializers != graph.initializer_size()) {
      index->initializer.clear();
      index->constant_output.clear();
      index->computed.clear();
      for (const auto& t : graph.initializer()) index->initializer.insert(t.name());
      for (const auto& n : graph.node())
        for (const auto& o : n.output()) (n.op_type() == "Constant" ? index->constant_output : index->computed).insert(o);
      index->nodes = graph.node_size();
      index->initializers = graph.initializer_size();
    }
    if (index->initializer.count(name)) {
      for (const auto& t : graph.initializer()) {
        if (t.name() != name) continue;
        auto value = InitializerValue(t, borrowed);
        return value ? &index->converted.emplace(name, std::move(*value)).first->second : nullptr;
      }
    }
    if (index->constant_output.count(name)) {
      for (const auto& n : graph.node()) {
        if (n.op_type() != "Constant" || n.output_size() != 1 || n.output(0) != name) continue;
        const onnx::AttributeProto* a = FindAttr(n, "value");
        if (!a || !a->has_t()) return nullptr;
        auto value = TensorFromProto(a->t());
        return value ? &index->converted.emplace(name, std::move(*value)).first->second : nullptr;
      }
      return nullptr;  // an output of a Constant with several outputs: computed here
    }
    if (index->computed.count(name)) return nullptr;  // computed here: not a constant
    if (!parent) return nullptr;
    const int ref = parent->Resolve(name);
    return ref == -1 ? nullptr : parent->ConstantFor(ref);
  };
}

// Inter-op concurrency (R6, §8.5 priority 1): the nodes worth a core of their own are the
// ones that run a whole sequence (the two directions of a bidirectional layer after to_scan,
// independent streams). The first such node is paired with the next one that does not depend
// on it; that node and the nodes it needs are moved up, which keeps the order topological since
// none of them depends on the first, and the pair is marked to run side by side.
namespace {

bool RunsASequence(const PlanNode& node) {
  const std::string& op = node.op_type;
  // JitScan: a Scan the JIT runs (runtime/jit/partitioner.h).
  return op == "Scan" || op == "JitScan" || op == "Loop" || op == "LSTM" || op == "GRU" || op == "RNN";
}

}  // namespace

void GraphPlan::PairIndependentNodes(GraphPlan* plan) {
  std::vector<PlanNode>& nodes = plan->nodes_;
  const int n = static_cast<int>(nodes.size());
  for (int i = 0; i < n; ++i) {
    if (!RunsASequence(nodes[i]) || (i > 0 && nodes[i - 1].run_with_next)) continue;
    // Producer of every local slot, for the current order.
    std::vector<int> producer(static_cast<size_t>(plan->num_locals_), -1);
    for (int k = 0; k < n; ++k)
      for (int slot : nodes[k].outputs)
        if (slot >= 0) producer[static_cast<size_t>(slot)] = k;
    auto deps_of = [&](int k, auto&& visit) {
      for (const auto* refs : {&nodes[k].inputs, &nodes[k].implicit_inputs})
        for (int ref : *refs)
          if (ref >= 0 && ref < plan->num_locals_ && producer[static_cast<size_t>(ref)] >= 0)
            visit(producer[static_cast<size_t>(ref)]);
    };
    for (int j = i + 1; j < n; ++j) {
      if (!RunsASequence(nodes[j])) continue;
      // Ancestors of j after i (j's other ancestors already run before i).
      std::vector<char> needed(static_cast<size_t>(n), 0);
      std::vector<int> stack{j};
      bool depends_on_i = false;
      while (!stack.empty() && !depends_on_i) {
        const int k = stack.back();
        stack.pop_back();
        deps_of(k, [&](int d) {
          if (d == i) depends_on_i = true;
          if (d > i && !needed[static_cast<size_t>(d)]) {
            needed[static_cast<size_t>(d)] = 1;
            stack.push_back(d);
          }
        });
      }
      if (depends_on_i) continue;
      // New order: [.. i) + j's ancestors in (i, j) + i + j + the rest of (i, j) + (j ..].
      std::vector<PlanNode> reordered;
      reordered.reserve(static_cast<size_t>(n));
      for (int k = 0; k < i; ++k) reordered.push_back(std::move(nodes[k]));
      for (int k = i + 1; k < j; ++k)
        if (needed[static_cast<size_t>(k)]) reordered.push_back(std::move(nodes[k]));
      const int first = static_cast<int>(reordered.size());
      reordered.push_back(std::move(nodes[i]));
      reordered.push_back(std::move(nodes[j]));
      for (int k = i + 1; k < j; ++k)
        if (!needed[static_cast<size_t>(k)]) reordered.push_back(std::move(nodes[k]));
      for (int k = j + 1; k < n; ++k) reordered.push_back(std::move(nodes[k]));
      nodes = std::move(reordered);
      nodes[static_cast<size_t>(first)].run_with_next = true;
      i = first + 1;  // continue after the pair
      break;
    }
  }
}

Expected<const onnx::GraphProto*> GraphPlan::ApplyRewrites(const onnx::GraphProto& graph_in, const ModelContext& model,
                                                          PlanScope* parent, OpsetOverrides* overrides) {
  bool any_missing_kernel = false;
  for (const auto& node : graph_in.node())
    any_missing_kernel |= !model.registry->HasOp(node.domain(), node.op_type());
  std::vector<GraphPass*> applicable;
  for (const auto& pass : model.rewrites)
    if (pass->MayApply(graph_in)) applicable.push_back(pass.get());
  if (!any_missing_kernel && applicable.empty()) return &graph_in;
  // Rewrites work on a copy (large initializers borrowed from graph_in until DefineValues), kept
  // only when one of them changed it.
  auto copy = CopyForRewrites(graph_in, &borrowed_);
  int rewrites = 0;
  if (any_missing_kernel) {
    auto expanded = ExpandFunctionNodes(copy.get(), model, overrides);
    if (!expanded) {
      Status s = expanded.status();
      return s.WithGraph(graph_in.name()).WithFile(model.file);
    }
    rewrites += *expanded;
  }
  for (GraphPass* pass : applicable) {
    GraphRewriteContext ctx(model, LocalConstants(*copy, parent, &borrowed_));
    auto done = pass->ApplyToGraph(copy.get(), ctx);
    if (!done) {
      Status s = done.status();
      return s.WithGraph(graph_in.name()).WithFile(model.file);
    }
    rewrites += *done;
  }
  if (rewrites == 0) {
    borrowed_.clear();
    return &graph_in;
  }
  expanded_ = std::move(copy);
  return expanded_.get();
}

Status GraphPlan::DefineValues(const onnx::GraphProto& graph, PlanScope& scope) {
  // Locals: graph inputs, then every node output.
  int next_local = 0;
  auto define_local = [&](const std::string& name) -> Status {
    if (!scope.refs.emplace(name, next_local).second)
      return Diag::Msg("value '" + name + "' is defined more than once");
    ++next_local;
    return Status::OK();
  };
  std::unordered_set<std::string> seen_inputs;
  for (const auto& in : graph.input()) {
    // Some exporters list an initializer-backed input twice; the second entry adds nothing.
    if (!seen_inputs.insert(in.name()).second) continue;
    NUPHAR_RETURN_IF_ERROR(define_local(in.name()));
    input_names_.push_back(in.name());
    input_slots_.push_back(next_local - 1);
  }
  for (const auto& node : graph.node())
    for (const auto& o : node.output())
      if (!o.empty()) {
        Status s = define_local(o);
        if (!s.ok()) return Diag::Node(node, s.diag().reason);
      }
  num_locals_ = next_local;

  // Constants: initializers (those shadowed by a graph input become that input's default).
  std::unordered_set<std::string> input_set(input_names_.begin(), input_names_.end());
  for (const auto& t : graph.initializer()) {
    auto tensor = InitializerValue(t, &borrowed_);
    if (!tensor) return Diag::Msg("initializer '" + t.name() + "': " + tensor.diag().reason);
    const int ref = num_locals_ + static_cast<int>(constants_.size());
    constants_.push_back(std::move(*tensor));
    if (input_set.count(t.name())) continue;
    if (!scope.refs.emplace(t.name(), ref).second)
      return Diag::Msg("initializer '" + t.name() + "' has the same name as a node output");
  }
  for (const auto& name : input_names_) {
    int def = -1;
    for (int c = 0; c < graph.initializer_size(); ++c)
      if (graph.initializer(c).name() == name) def = num_locals_ + c;
    input_defaults_.push_back(def);
  }
  return Status::OK();
}

Status GraphPlan::CreateKernels(const onnx::GraphProto& graph, PlanScope& scope, const OpsetOverrides& overrides) {
  const ModelContext& model = *scope.model;
  auto order = ExecutionOrder(graph);
  if (!order) return order.status();
  // One frame for every load-time fold: a frame per folded node cost O(values) each, quadratic
  // in a graph of many small constant chains (Silero's).
  std::unique_ptr<Frame> fold;
  for (int idx : *order) {
    const onnx::NodeProto& node = graph.node(idx);
    PlanNode pn;
    pn.name = node.name();
    pn.op_type = node.op_type();
    pn.graph_index = idx;
    std::vector<const Tensor*> const_inputs;
    std::vector<DType> types;
    bool all_const = true;
    for (const auto& in : node.input()) {
      int ref = in.empty() ? -1 : scope.Resolve(in);
      if (!in.empty() && ref == -1)
        return Diag::Node(node, "input '" + in + "' is not produced by any node, initializer or graph input");
      pn.inputs.push_back(ref);
      const Tensor* c = in.empty() ? nullptr : scope.ConstantFor(ref);
      const_inputs.push_back(c);
      if (!in.empty() && !c) all_const = false;
      DType t = DType::kUndefined;
      if (c) t = c->dtype();
      else if (auto it = model.value_types.find(in); it != model.value_types.end()) t = it->second;
      types.push_back(t);
    }
    for (const auto& o : node.output()) pn.outputs.push_back(o.empty() ? -1 : scope.refs.at(o));
    const bool has_subgraph = !Subgraphs(node).empty();
    for (const auto& name : ImplicitInputs(node)) {
      auto it = scope.refs.find(name);
      if (it != scope.refs.end()) pn.implicit_inputs.push_back(it->second);
    }

    auto ov = overrides.find(node.name());
    const int opset = ov != overrides.end() ? ov->second : model.OpsetFor(node.domain());
    if (opset < 0) return Diag::Node(node, "the model imports no opset for domain '" + node.domain() + "'");
    KernelFactory factory = model.registry->Find(node.domain(), node.op_type(), opset);
    if (!factory)
      return Diag::Node(node, "unsupported op '" + node.op_type() + "'" +
                                  (node.domain().empty() ? std::string() : " in domain '" + node.domain() + "'") +
                                  " (opset " + std::to_string(opset) + "): no kernel");
    NodeInfo info(node, opset, &scope, const_inputs, types);
    scope.body_outputs_may_view_kept = false;  // the factory compiles the node's subgraphs
    auto kernel = factory(info);
    if (!kernel) {
      Status s = kernel.status();
      return s.WithNode(node);
    }
    pn.kernel = std::move(*kernel);
    pn.body_outputs_may_view_kept = scope.body_outputs_may_view_kept;

    // Load-time folding: run nodes whose inputs are all constants once, now.
    if (all_const && !has_subgraph && !IsNondeterministic(node)) {
      if (!fold) fold = std::make_unique<Frame>(*this, nullptr);
      else fold->SyncWithPlan();
      // A subgraph node may read an enclosing graph's constants (Silero's LSTM weights are
      // sliced inside an If branch); without these bindings the fold failed and the node ran
      // on every Run.
      for (int ref : pn.inputs)
        if (ref <= -2) fold->BindOuter(ref, scope.ConstantFor(ref));
      KernelContext ctx(*fold, pn.inputs, pn.outputs);
      Status folded = Status::OK();
      try {
        folded = pn.kernel->Compute(ctx);
      } catch (const std::bad_alloc& e) {
        return Diag::Node(node, TensorBudgetReason(e));
      }
      if (folded.ok()) {
        for (size_t o = 0; o < pn.outputs.size(); ++o) {
          if (pn.outputs[o] < 0) continue;
          const int ref = num_locals_ + static_cast<int>(constants_.size());
          constants_.push_back(fold->Local(pn.outputs[o]));
          scope.refs[node.output(static_cast<int>(o))] = ref;
        }
        continue;
      }
    }
    ++model.counters["plan_nodes"];
    ++model.counters[std::string("plan_nodes_") + pn.kernel->profile_path()];
    if (has_subgraph) body_nodes_.push_back(static_cast<int>(nodes_.size()));
    nodes_.push_back(std::move(pn));
  }
  return Status::OK();
}

Status GraphPlan::ResolveOutputs(const onnx::GraphProto& graph, PlanScope& scope) {
  for (const auto& out : graph.output()) {
    const int ref = scope.Resolve(out.name());
    if (ref == -1) return Diag::Msg("graph output '" + out.name() + "' is not produced by any node or input");
    output_names_.push_back(out.name());
    output_refs_.push_back(ref);
  }
  return Status::OK();
}

void GraphPlan::MarkValueDecidedNodes(const onnx::GraphProto& graph, PlanScope& scope) {
  const ModelContext& model = *scope.model;
  if (model.settings != nullptr && model.settings->Is("nuphar_reuse_shape_values", "off")) return;
  std::vector<int> order;
  for (const PlanNode& pn : nodes_) order.push_back(pn.graph_index);
  auto is_constant = [&](const std::string& name) {
    auto it = scope.refs.find(name);
    if (it != scope.refs.end()) return scope.ConstantFor(it->second) != nullptr;
    auto outer = scope.outer_by_name.find(name);
    return outer != scope.outer_by_name.end() && scope.ConstantFor(outer->second) != nullptr;
  };
  auto opset = [&](const std::string& domain) { return model.OpsetFor(domain); };
  std::vector<std::string> outer_values;
  for (const auto& [name, ref] : scope.outer_by_name)
    if (!scope.ConstantFor(ref)) outer_values.push_back(name);
  const std::vector<bool> decided = FindValueDecidedNodes(graph, order, is_constant, opset, outer_values);
  // Session::Run hands the graph outputs to the caller and drops them from the frame, and a
  // control-flow kernel takes a body's: a node that writes one runs every time.
  std::unordered_set<int> outputs(output_refs_.begin(), output_refs_.end());
  for (PlanNode& pn : nodes_) {
    if (!decided[static_cast<size_t>(pn.graph_index)] || !pn.implicit_inputs.empty()) continue;
    bool writes_output = false;
    for (int o : pn.outputs) writes_output |= outputs.count(o) > 0;
    if (writes_output) continue;
    pn.value_decided = true;
    has_value_decided_ = true;
    for (int o : pn.outputs)
      if (o >= 0) decided_slots_.push_back(o);
    ++model.counters["plan_nodes_shape_decided"];
  }
}

namespace {

// The explicit inputs [begin, end) whose buffers the outputs of `pn` may share. Only some kernels
// alias (KernelContext::SetOutputAlias, SetOutputReshaped): the ops named here view their data
// input at most, never the shape, axes or repeats a shape value usually feeds; an If shares its
// branches' values, never its condition; a Loop its carried values, not M or cond. Any other op
// is taken to alias any input (Identity, Transpose, a JIT partition).
std::pair<size_t, size_t> InputsOutputsMayView(const PlanNode& pn) {
  static const std::unordered_set<std::string> data_input_only = {
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand", "Slice", "Tile", "Pad", "Split",
      "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
      "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare"};
  const size_t n = pn.inputs.size();
  if (pn.op_type == "If") return {n, n};
  if (pn.op_type == "Loop") return {std::min<size_t>(2, n), n};
  if (data_input_only.count(pn.op_type)) return {0, std::min<size_t>(1, n)};
  return {0, n};
}

}  // namespace

void GraphPlan::FindOutputsThatMayViewKeptValues(PlanScope& scope) {
  // Which locals may share a buffer with a kept value, forward in node order (topological); a
  // subgraph node's outputs may also be views of its bodies' kept values (every body is compiled
  // by its node's factory, NodeInfo::CompileSubgraph, which reports through the scope).
  std::vector<bool> may_view(static_cast<size_t>(num_locals_), false);
  for (int slot : decided_slots_) may_view[static_cast<size_t>(slot)] = true;
  auto tainted = [&](int ref) { return ref >= 0 && ref < num_locals_ && may_view[static_cast<size_t>(ref)]; };
  for (const PlanNode& pn : nodes_) {
    bool taints = pn.body_outputs_may_view_kept;
    const auto [begin, end] = InputsOutputsMayView(pn);
    for (size_t i = begin; i < end; ++i) taints |= tainted(pn.inputs[i]);
    for (int ref : pn.implicit_inputs) taints |= tainted(ref);
    if (!taints) continue;
    for (int o : pn.outputs)
      if (o >= 0) may_view[static_cast<size_t>(o)] = true;
  }
  for (int ref : output_refs_) outputs_may_view_kept_values_ |= tainted(ref);
  if (!outputs_may_view_kept_values_) return;
  ++scope.model->counters["plan_graphs_outputs_may_view_kept"];
  if (scope.parent) scope.parent->body_outputs_may_view_kept = true;
}

Expected<std::shared_ptr<GraphPlan>> GraphPlan::Compile(const onnx::GraphProto& graph_in, const ModelContext& model,
                                                        PlanScope* parent) {
  NUPHAR_CHECK(model.registry != nullptr, "ModelContext::registry must be set");
  // Nesting budget (nuphar_max_subgraph_depth): each level of Scan/Loop/If bodies costs a plan
  // and a frame per execution; a hostile model nests as deep as protobuf's parser lets it.
  int depth = 0;
  for (const PlanScope* p = parent; p != nullptr; p = p->parent) ++depth;
  if (depth > 0 && model.settings != nullptr) {
    auto max_depth = model.settings->GetInt("nuphar_max_subgraph_depth", kDefaultMaxSubgraphDepth);
    if (!max_depth) return max_depth.status();
    if (*max_depth > 0 && depth > *max_depth)
      return Diag::File(model.file, "graph '" + graph_in.name() + "' is a subgraph nested " + std::to_string(depth) +
                                        " levels deep, above nuphar_max_subgraph_depth (" + std::to_string(*max_depth) + ")");
  }
  auto plan = std::make_shared<GraphPlan>();
  OpsetOverrides overrides;
  NUPHAR_ASSIGN_OR_RETURN(const onnx::GraphProto* graph_ptr, plan->ApplyRewrites(graph_in, model, parent, &overrides));
  const onnx::GraphProto& graph = *graph_ptr;
  plan->name_ = graph.name();
  PlanScope scope;
  scope.plan = plan.get();
  scope.parent = parent;
  scope.model = &model;
  auto located = [&](Status s) { return s.WithGraph(graph.name()).WithFile(model.file); };
  if (graph.sparse_initializer_size() > 0) return located(Diag::Msg("sparse initializers are not supported"));
  const Status defined = plan->DefineValues(graph, scope);
  plan->borrowed_.clear();  // the payloads live in the caller's graph, which may go after Compile
  if (!defined.ok()) return located(defined);
  if (Status s = plan->CreateKernels(graph, scope, overrides); !s.ok()) return located(std::move(s));
  plan->pool_ = model.pool;
  if (model.pool != nullptr && model.pool->num_threads() > 1) PairIndependentNodes(plan.get());
  if (Status s = plan->ResolveOutputs(graph, scope); !s.ok()) return located(std::move(s));
  plan->MarkValueDecidedNodes(graph, scope);
  plan->FindOutputsThatMayViewKeptValues(scope);
  return plan;
}

Frame::Frame(const GraphPlan& plan, const Frame* parent)
    : plan_(plan), is_body_(parent != nullptr), profile_(parent ? parent->profile_ : nullptr) {
  locals_.resize(static_cast<size_t>(plan.num_locals_));
  ptrs_.reserve(locals_.size() + plan.constants_.size());
  for (auto& t : locals_) ptrs_.push_back(&t);
  for (const auto& c : plan.constants_) ptrs_.push_back(&c);
  outer_.reserve(plan.outer_refs_.size());
  for (int r : plan.outer_refs_) outer_.push_back(parent ? parent->Get(r) : nullptr);
  node_scratch_.resize(plan.nodes_.size());
  node_unnamed_.resize(plan.nodes_.size());
  // Sized here, not on first use: the two nodes of a pair ask for theirs from two threads.
  subgraph_frames_.resize((plan.nodes_.size() + 1) * kSubgraphsPerNode);
}

Frame& Frame::SubgraphFrame(int node_index, int which, const GraphPlan& body) {
  NUPHAR_CHECK(which >= 0 && which < kSubgraphsPerNode, "SubgraphFrame: a node has at most two subgraphs");
  const size_t slot = static_cast<size_t>(std::max(node_index, -1) + 1) * kSubgraphsPerNode + static_cast<size_t>(which);
  NUPHAR_CHECK(slot < subgraph_frames_.size(), "SubgraphFrame: node index out of range");
  std::unique_ptr<Frame>& frame = subgraph_frames_[slot];
  if (!frame || &frame->plan_ != &body) frame = std::make_unique<Frame>(body, this);
  frame->profile_ = profile_;  // profiling is switched per Run
  return *frame;
}

void Frame::ClearInputs() {
  for (size_t i = 0; i < plan_.input_names().size(); ++i) SetInput(i, Tensor());
}

void Frame::SyncWithPlan() {
  for (size_t c = ptrs_.size() - locals_.size(); c < plan_.constants_.size(); ++c) ptrs_.push_back(&plan_.constants_[c]);
  if (outer_.size() < plan_.outer_refs_.size()) outer_.resize(plan_.outer_refs_.size(), nullptr);
}

Status Frame::NodeError(Status s, const PlanNode& node) const {
  if (s.diag().node.empty() && s.diag().op.empty()) {
    s.diag().node = node.name;
    s.diag().op = node.op_type;
  }
  return s.WithGraph(plan_.name());
}

bool Frame::BeginRun() {
  if (!plan_.has_value_decided_) return false;
  // The key: the shapes of the graph inputs, then of the outer values a body reads.
  const size_t inputs = plan_.input_names().size(), keys = inputs + outer_.size();
  bool repeat = decided_valid_ && decided_shapes_.size() == keys;
  decided_shapes_.resize(keys);
  static const Tensor kUnbound;
  for (size_t i = 0; i < keys; ++i) {
    const Tensor& t = i < inputs ? locals_[static_cast<size_t>(plan_.input_slot(i))]
                                 : (outer_[i - inputs] ? *outer_[i - inputs] : kUnbound);
    const std::span<const int64_t> shape = t.shape();
    // An unbound input (shape {}) and a scalar compare alike, so definedness is part of the key.
    const bool same = decided_shapes_[i].size() == shape.size() + 1 && decided_shapes_[i][0] == t.defined() &&
                      std::equal(shape.begin(), shape.end(), decided_shapes_[i].begin() + 1);
    if (!same) {
      repeat = false;
      decided_shapes_[i].assign(1, t.defined());
      decided_shapes_[i].insert(decided_shapes_[i].end(), shape.begin(), shape.end());
    }
  }
  decided_valid_ = false;
  return repeat;
}

bool Frame::KeepsBufferOf(const Tensor& value) const {
  if (decided_valid_)
    for (int slot : plan_.decided_slots_)
      if (locals_[static_cast<size_t>(slot)].SharesBufferWith(value)) return true;
  for (int node : plan_.body_nodes_)  // an If output may be a view of a branch's kept value
    for (int which = 0; which < kSubgraphsPerNode; ++which) {
      const auto& body = subgraph_frames_[static_cast<size_t>(node + 1) * kSubgraphsPerNode + static_cast<size_t>(which)];
      if (body && body->KeepsBufferOf(value)) return true;
    }
  return false;
}

Status Frame::Execute() {
  // The only cost of profiling when it is off: this branch, once per graph execution.
  if (profile_) [[unlikely]]
    return ExecuteProfiled();
  const bool skip_decided = BeginRun();
  const size_t limit = TensorByteLimit();
  auto run = [&](size_t i) -> Status {
    const PlanNode& node = plan_.nodes()[i];
    KernelContext ctx(*this, node.inputs, node.outputs, static_cast<int>(i));
    Status s = ComputeWithBudget(*node.kernel, ctx, limit);
    if (!s.ok()) [[unlikely]]
      return NodeError(std::move(s), node);
    return Status::OK();
  };
  const size_t n = plan_.nodes().size();
  for (size_t i = 0; i < n; ++i) {
    if (skip_decided && plan_.nodes()[i].value_decided) continue;
    if (plan_.nodes()[i].run_with_next && i + 1 < n && plan_.pool_ != nullptr &&
        !(skip_decided && plan_.nodes()[i + 1].value_decided)) {
      // Independent nodes: disjoint outputs, node scratch and unnamed outputs; inputs are read only.
      Status pair[2];
      plan_.pool_->ParallelFor(2, [&](int t) { pair[t] = run(i + static_cast<size_t>(t)); });
      NUPHAR_RETURN_IF_ERROR(std::move(pair[0]));
      NUPHAR_RETURN_IF_ERROR(std::move(pair[1]));
      ++i;
      continue;
    }
    NUPHAR_RETURN_IF_ERROR(run(i));
  }
  FinishRun(true);
  return Status::OK();
}

// Execute with every kernel run timed. The two sides of a node pair run on two threads, so each
// records into a RunProfile of its own (the thread's override, which the body frames it creates
// also use); both are folded into this frame's profile afterwards.
Status Frame::ExecuteProfiled() {
  RunProfile* profile = RunProfile::ThreadOverride() ? RunProfile::ThreadOverride() : profile_;
  const bool skip_decided = BeginRun();
  const size_t limit = TensorByteLimit();
  auto run = [&](size_t i, RunProfile& into) -> Status {
    const PlanNode& node = plan_.nodes()[i];
    KernelContext ctx(*this, node.inputs, node.outputs, static_cast<int>(i));
    into.Enter();
    const int64_t t0 = Profiler::NowNs();
    Status s = ComputeWithBudget(*node.kernel, ctx, limit);
    const int64_t t1 = Profiler::NowNs();
    into.Leave(*this, static_cast<int>(i), t0, t1);
    if (!s.ok()) return NodeError(std::move(s), node);
    return Status::OK();
  };
  const size_t n = plan_.nodes().size();
  for (size_t i = 0; i < n; ++i) {
    if (skip_decided && plan_.nodes()[i].value_decided) continue;
    if (plan_.nodes()[i].run_with_next && i + 1 < n && plan_.pool_ != nullptr &&
        !(skip_decided && plan_.nodes()[i + 1].value_decided)) {
      Status pair[2];
      RunProfile side[2];
      plan_.pool_->ParallelFor(2, [&](int t) {
        RunProfile::ThreadScope scope(&side[t]);
        pair[t] = run(i + static_cast<size_t>(t), side[t]);
      });
      profile->Absorb(std::move(side[0]), 0);
      profile->Absorb(std::move(side[1]), 1);
      NUPHAR_RETURN_IF_ERROR(std::move(pair[0]));
      NUPHAR_RETURN_IF_ERROR(std::move(pair[1]));
      ++i;
      continue;
    }
    NUPHAR_RETURN_IF_ERROR(run(i, *profile));
  }
  FinishRun(true);
  return Status::OK();
}

}  // namespace nuphar
