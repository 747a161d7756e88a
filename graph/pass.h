// GraphPass: the anatomy every editor/quantizer pass shares, and the driver that runs it (STYLE R7).
//
// A pass names itself (the --mode string), lists the op types it targets, filters cheaply
// with Matches() and rewrites one node at a time. The driver:
//  - raises the opset first (MinOpset, spec E2), so every emitted node uses the final form;
//  - walks every graph depth-first, a node's subgraphs (If/Loop/Scan bodies) before the node,
//    so RNNs inside bodies are converted and a Loop is rewritten after its body;
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
#include <vector>

#include "graph/error.h"
#include "graph/graph_view.h"
#include "graph/node_builder.h"

namespace onnx {
class ModelProto;
class NodeProto;
}  // namespace onnx

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

class GraphPass {
 public:
  virtual ~GraphPass() = default;
  /// Stable name, the --mode string of model_editor.
  virtual std::string Name() const = 0;
  /// Default-domain op types this pass rewrites (empty: the pass only uses Begin/Finish).
  virtual std::vector<std::string> TargetOpTypes() const = 0;
  /// Opset the emitted nodes need (0: emits nothing opset-dependent).
  virtual int64_t MinOpset() const { return 0; }
  /// Cheap filter on a node of a target type; `why_not` gets the reason when false.
  virtual bool Matches(const onnx::NodeProto& node, std::string* why_not) const { return true; }
  virtual Expected<Effect> Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) = 0;
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

Expected<PassStats> RunPass(onnx::ModelProto& model, GraphPass& pass, const PassRunOptions& options = {});

/// Removes every name of `candidates` that nothing reads (initializers with their same-named
/// graph inputs and value_infos, and producer nodes whose outputs are all unread), following
/// producer chains. Returns the number of removed initializers and nodes.
int RemoveDeadValues(onnx::ModelProto& model, std::unordered_set<std::string> candidates);

}  // namespace nuphar
