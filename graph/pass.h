// GraphPass: the one pass interface of the project (STYLE R7), and the driver of node-wise passes.
//
// Every rewrite is a GraphPass: the editor's modes, the quantizer (quantizer/matmul_quantizer.h),
// the runtime's fusions (runtime/fusion/) and its JIT partitioner (runtime/jit/partitioner.h).
// A pass names itself, says how it treats subgraphs (Order) and rewrites a graph
// (ApplyToGraph), in one of two shapes, as ONNX Runtime's GraphTransformer and its rule-based
// subclass:
//  - node by node (the editor, the quantizer): the pass lists the op types it targets, filters
//    cheaply with Matches() and rewrites one node at a time; the default ApplyToGraph is the
//    walk below, and RunPass drives it over a whole model;
//  - a graph level at once (the runtime's passes, whose patterns span several nodes): the pass
//    overrides ApplyToGraph and its driver (runtime/core/graph_plan.cc) hands it each graph, with
//    a PassContext of its own, when it compiles that graph (Order kEachGraphByDriver).
// The node-wise driver:
//  - raises the opset first (MinOpset, spec E2), so every emitted node uses the final form;
//  - walks every graph depth-first in node order. By default a node's subgraphs (If/Loop/Scan
//    bodies) come before the node, so RNNs inside bodies are converted and a Loop is rewritten
//    after its body; a pass may ask for SubgraphOrder::kAfterKeptNode instead (the quantizer,
//    whose name counters must advance in the original tool's order);
//  - splices the nodes a Rewrite emitted in at the rewritten node's position, and removes
//    nodes only after the walk of their graph, never while iterating;
//  - finally removes the values a pass marked as maybe-dead when nothing anywhere reads them
//    (initializers, and producer chains such as Constant -> Unsqueeze), outer-scope reads and
//    graph outputs included.
// Each skipped candidate gets a one-line reason in the verbose log.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/error.h"
#include "graph/graph_view.h"
#include "graph/node_builder.h"
#include "graph/onnx_fwd.h"

namespace nuphar {

/// What a Rewrite did. `changed`: the node is replaced by the emitted nodes. Otherwise the node
/// stays and `note` (if any) says why; emitted nodes are discarded.
struct Effect {
  bool changed = false;
  std::string note;
  static Effect Replaced() { return {true, ""}; }
  static Effect Kept(std::string why) { return {false, std::move(why)}; }
};

/// What a Rewrite may touch: the node's graph (through its scope), a builder whose nodes
/// replace the node, the model-wide name table and use counts.
class RewriteContext {
 public:
  RewriteContext(onnx::ModelProto& model, const GraphScope& scope, NodeBuilder& builder, const UseCounts& uses,
                 std::unordered_set<std::string>* maybe_dead, std::function<void(const std::string&)> log)
      : model_(model), scope_(scope), builder_(builder), uses_(uses), maybe_dead_(maybe_dead), log_(std::move(log)) {}

  onnx::ModelProto& model() { return model_; }
  const GraphScope& scope() const { return scope_; }
  NodeBuilder& builder() { return builder_; }
  NameTable& names() { return builder_.names(); }
  /// Use counts taken at the start of the pass (before any rewrite).
  const UseCounts& uses() const { return uses_; }
  /// `name` is removed after the walk if nothing reads it then (with its producer chain).
  void MarkMaybeDead(const std::string& name) {
    if (!name.empty()) maybe_dead_->insert(name);
  }
  /// A warning the tool always shows (e.g. a Loop kept under --keep_unconvertible_loop_ops).
  void Warn(const std::string& line) const {
    if (log_) log_("warning: " + line);
  }

 private:
  onnx::ModelProto& model_;
  const GraphScope& scope_;
  NodeBuilder& builder_;
  const UseCounts& uses_;
  std::unordered_set<std::string>* maybe_dead_;
  std::function<void(const std::string&)> log_;
};

/// When the subgraphs of a node are rewritten, relative to the node itself.
enum class SubgraphOrder {
  kBeforeNode,     ///< subgraphs first, then the node (the editor's passes)
  kAfterKeptNode,  ///< the node first; then its subgraphs if the node was kept (a replaced
                   ///< node's subgraphs are not walked). The original quantizer's order.
  kEachGraphByDriver,  ///< ApplyToGraph rewrites the graph it is given, this level only; the
                       ///< driver hands it each subgraph separately (the runtime, when it
                       ///< compiles a body).
};

/// What a driver hands ApplyToGraph besides the graph. Each driver derives its own: RunPass's
/// carries the model-wide walk (names, use counts, dead values), the runtime's carries the model
/// facts and constants (runtime/core/graph_rewrite.h GraphRewriteContext).
class PassContext {
 public:
  virtual ~PassContext() = default;
};

class GraphPass {
 public:
  virtual ~GraphPass() = default;
  /// Stable name: the --mode string of model_editor, the runtime pass's name in diagnostics.
  virtual std::string Name() const = 0;
  virtual SubgraphOrder Order() const { return SubgraphOrder::kBeforeNode; }
  /// Cheap filter on a whole graph: false when the pass cannot change it (the runtime then
  /// makes no copy of the graph).
  virtual bool MayApply(const onnx::GraphProto& graph) const { return true; }
  /// Rewrites `graph`; returns the number of rewrites made (0: `graph` is unchanged). The
  /// default is the node-wise walk of this file, which needs RunPass's context (another
  /// context is refused with an error naming the pass). A pass that rewrites a graph level at
  /// once overrides it and never calls the node-wise hooks below. Passes run by the runtime
  /// keep no state across calls: graphs of one session may be rewritten on several threads.
  virtual Expected<int> ApplyToGraph(onnx::GraphProto* graph, PassContext& ctx);

  // --- Node-wise passes (the editor's and the quantizer's) ---------------------------------
  /// Default-domain op types this pass rewrites (empty: the pass only uses Begin/Finish).
  virtual std::vector<std::string> TargetOpTypes() const { return {}; }
  /// Opset the emitted nodes need (0: emits nothing opset-dependent).
  virtual int64_t MinOpset() const { return 0; }
  /// Target op types in any domain, not only the default one (the quantizer, as the original).
  virtual bool AnyDomain() const { return false; }
  /// The driver refuses a target whose input/output counts its schema does not allow. A pass
  /// that checks the counts it reads itself (and skips with a note) turns this off.
  virtual bool ChecksArity() const { return true; }
  /// Cheap filter on a node of a target type; `why_not` gets the reason when false.
  virtual bool Matches(const onnx::NodeProto& node, std::string* why_not) const { return true; }
  /// Rewrites one node of a target type that Matches (default: keeps it).
  virtual Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) {
    return Effect::Kept("");
  }
  /// Whole-model steps before and after the walk (default: none).
  virtual Status Begin(onnx::ModelProto& model) { return Status::OK(); }
  virtual Status Finish(onnx::ModelProto& model) { return Status::OK(); }
};

struct PassRunOptions {
  bool verbose = false;
  /// Receives warnings always and skip reasons when verbose (default: stderr).
  std::function<void(const std::string&)> log;
};

struct PassStats {
  int rewritten = 0;
  int kept = 0;
  int64_t opset = 0;  ///< final default-domain opset
};

/// Runs a node-wise pass over a whole model: Begin, the opset raise, ApplyToGraph on the main
/// graph (which walks the subgraphs as Order() says), the dead-value clean-up, Finish.
Expected<PassStats> RunPass(onnx::ModelProto& model, GraphPass& pass, const PassRunOptions& options = {});

/// What RemoveDeadValues removes besides unread initializers.
struct DeadValueOptions {
  /// Producer nodes whose outputs are all unread, and then their inputs (Constant -> Unsqueeze).
  bool follow_producers = true;
  /// value_info entries of removed names.
  bool drop_value_info = true;
  /// Same-named inputs of subgraphs too (the quantizer's rule); main-graph inputs always go.
  bool drop_subgraph_inputs = false;
  /// Every node is a candidate (dead-code elimination: a node none of whose outputs is read
  /// goes, a node without outputs too), not only the producers of candidate names.
  bool all_nodes = false;
  /// Clean the subgraphs (Scan/Loop/If bodies) too, not only the graph given.
  bool subgraphs = true;
};

/// Removes every name of `candidates` that nothing reads (initializers with their same-named
/// graph inputs and value_infos, and producer nodes whose outputs are all unread), following
/// producer chains. Returns the number of removed initializers and nodes.
int RemoveDeadValues(onnx::ModelProto& model, std::unordered_set<std::string> candidates,
                     const DeadValueOptions& options = {});
/// Same, from one graph (the runtime compiles graph by graph): reads are counted in `graph`
/// and its subgraphs; `graph` is treated as a main graph only if `is_main`.
int RemoveDeadValues(onnx::GraphProto* graph, bool is_main, std::unordered_set<std::string> candidates,
                     const DeadValueOptions& options);
/// Same, each candidate bound to the graph that defines it (other graphs' same names stay).
int RemoveDeadValues(onnx::ModelProto& model, const std::vector<std::pair<const onnx::GraphProto*, std::string>>& candidates,
                     const DeadValueOptions& options);

}  // namespace nuphar
