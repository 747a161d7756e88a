// The pass driver (graph/pass.h): opset raise, recursive walk, splicing, dead-value clean-up.
#include "graph/pass.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <limits>
#include <set>
#include <utility>

#include "graph/diagnostics.h"
#include "graph/opset_emit.h"
#include "graph/opset_schema.h"

namespace nuphar {

namespace {

// Lines starting "warning: " are warnings (RewriteContext::Warn); the rest are verbose notes.
Severity LineSeverity(const std::string& line) {
  return line.rfind("warning: ", 0) == 0 ? Severity::kWarning : Severity::kNote;
}

class Walker {
 public:
  Walker(onnx::ModelProto& model, GraphPass& pass, const PassRunOptions& options, int64_t opset)
      : model_(model), pass_(pass), options_(options), opset_(opset), names_(model), uses_(model) {
    auto targets = pass.TargetOpTypes();
    targets_.insert(targets.begin(), targets.end());
    log_ = options.log ? options.log : [](const std::string& line) { ReportDiagnostic(LineSeverity(line), line); };
  }

  Status CheckArity(const onnx::NodeProto& node) const {
    if (!node.domain().empty() && node.domain() != "ai.onnx") return Status::OK();
    int min_in, max_in, min_out, max_out, since;
    if (const OpSignature* row = FindNewerSignature(node.op_type(), static_cast<int>(opset_))) {
      // libonnx 1.12 stops at opset 17; its older schema would refuse e.g. ReduceMax-18's axes input.
      min_in = row->min_inputs, max_in = row->max_inputs, min_out = row->min_outputs, max_out = row->max_outputs;
      since = row->since_version;
    } else {
      const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(opset_), "");
      // No schema at the model's opset (opset 0, or an op newer than it): the newest schema still
      // bounds what a pass may index (fuzz_graph_tools: a one-input MatMul and Gemm at opset 0).
      if (schema == nullptr) schema = onnx::OpSchemaRegistry::Schema(node.op_type(), std::numeric_limits<int>::max(), "");
      if (schema == nullptr) return Status::OK();
      min_in = schema->min_input(), max_in = schema->max_input(), min_out = schema->min_output(), max_out = schema->max_output();
      since = schema->since_version();
    }
    if (max_in == kVariadic) max_in = std::numeric_limits<int>::max();
    if (max_out == kVariadic) max_out = std::numeric_limits<int>::max();
    auto range = [](int lo, int hi) {
      return hi == std::numeric_limits<int>::max() ? std::to_string(lo) + " or more"
                                                   : (lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi));
    };
    if (node.input_size() < min_in || node.input_size() > max_in)
      return Diag::Node(node, "has " + std::to_string(node.input_size()) + " inputs; " + node.op_type() + "-" +
                                  std::to_string(since) + " takes " + range(min_in, max_in));
    if (node.output_size() < min_out || node.output_size() > max_out)
      return Diag::Node(node, "has " + std::to_string(node.output_size()) + " outputs; " + node.op_type() + "-" +
                                  std::to_string(since) + " gives " + range(min_out, max_out));
    return Status::OK();
  }

  Status WalkSubgraphs(const GraphScope& scope, onnx::NodeProto* node) {
    for (auto& attr : *node->mutable_attribute()) {
      std::vector<onnx::GraphProto*> subs;
      if (attr.has_g()) subs.push_back(attr.mutable_g());
      for (auto& g : *attr.mutable_graphs()) subs.push_back(&g);
      for (auto* sub : subs) NUPHAR_RETURN_IF_ERROR(Walk(scope.Child(sub, *node, attr.name())));
    }
    return Status::OK();
  }

  bool Targeted(const onnx::NodeProto& node) const {
    if (!targets_.count(node.op_type())) return false;
    return pass_.AnyDomain() || node.domain().empty() || node.domain() == "ai.onnx";
  }

  Status Walk(const GraphScope& scope) {
    onnx::GraphProto* graph = scope.graph;
    const int n = graph->node_size();
    const bool subgraphs_first = pass_.Order() == SubgraphOrder::kBeforeNode;
    std::vector<std::unique_ptr<NodeBuilder::NodeList>> replacement(n);
    bool any = false;
    for (int i = 0; i < n; ++i) {
      onnx::NodeProto* node = graph->mutable_node(i);
      if (subgraphs_first) NUPHAR_RETURN_IF_ERROR(WalkSubgraphs(scope, node));
      bool replaced = false;
      NUPHAR_RETURN_IF_ERROR(Visit(scope, node, &replacement[i], &replaced));
      any |= replaced;
      if (!subgraphs_first && !replaced) NUPHAR_RETURN_IF_ERROR(WalkSubgraphs(scope, node));
    }
    if (any) {
      NodeBuilder::NodeList assembled;
      for (int i = 0; i < n; ++i) {
        if (!replacement[i]) {
          assembled.Add()->Swap(graph->mutable_node(i));
          continue;
        }
        for (auto& emitted : *replacement[i]) assembled.Add()->Swap(&emitted);
      }
      graph->mutable_node()->Swap(&assembled);
    }
    return Status::OK();
  }

  /// Filters and rewrites one node; a replacement goes to `*replacement` (spliced in by Walk).
  Status Visit(const GraphScope& scope, onnx::NodeProto* node, std::unique_ptr<NodeBuilder::NodeList>* replacement,
               bool* replaced) {
    onnx::GraphProto* graph = scope.graph;
    {
      if (!Targeted(*node)) return Status::OK();
      // Passes index a target's inputs and outputs as its schema allows: a node outside those
      // counts (a broken or hostile file) is refused here, before any pass reads it.
      if (pass_.ChecksArity()) NUPHAR_RETURN_IF_ERROR(CheckArity(*node).WithGraph(scope.path));
      std::string why_not;
      if (!pass_.Matches(*node, &why_not)) {
        if (options_.verbose) log_(pass_.Name() + ": skip '" + node->name() + "' (" + node->op_type() + "): " + why_not);
        return Status::OK();
      }
      auto pending = std::make_unique<NodeBuilder::NodeList>();
      NodeBuilder builder(graph, pending.get(), &names_, opset_);
      RewriteContext ctx(model_, scope, builder, uses_, &maybe_dead_, log_);
      auto effect = pass_.Rewrite(ctx, *node);
      if (!effect.ok()) {
        Status s = effect.status();
        s.WithNode(*node);
        s.WithGraph(scope.path);
        // Exporters often leave node names empty; the first output still identifies the node.
        if (s.diag().node.empty() && node->output_size() > 0) s.diag().node = "<unnamed> -> " + node->output(0);
        return s;
      }
      if (effect->changed) {
        *replacement = std::move(pending);
        *replaced = true;
        ++stats_.rewritten;
      } else {
        ++stats_.kept;
        if (options_.verbose && !effect->note.empty())
          log_(pass_.Name() + ": kept '" + node->name() + "' (" + node->op_type() + "): " + effect->note);
      }
    }
    return Status::OK();
  }

  PassStats& stats() { return stats_; }
  std::unordered_set<std::string>& maybe_dead() { return maybe_dead_; }
  const GraphPass& pass() const { return pass_; }

 private:
  onnx::ModelProto& model_;
  GraphPass& pass_;
  const PassRunOptions& options_;
  int64_t opset_;
  NameTable names_;
  UseCounts uses_;
  std::unordered_set<std::string> targets_;
  std::unordered_set<std::string> maybe_dead_;
  std::function<void(const std::string&)> log_;
  PassStats stats_;
};

template <class List, class Pred>
bool EraseIf(List* list, Pred pred) {
  bool erased = false;
  for (int i = list->size() - 1; i >= 0; --i) {
    if (pred(list->Get(i))) {
      list->DeleteSubrange(i, 1);
      erased = true;
    }
  }
  return erased;
}

// RunPass's context: the model-wide walk that the default ApplyToGraph drives from `root`.
class NodeWalkContext final : public PassContext {
 public:
  NodeWalkContext(Walker& walker, const GraphScope& root) : walker(walker), root(root) {}
  Walker& walker;
  const GraphScope& root;
};

}  // namespace

Expected<int> GraphPass::ApplyToGraph(onnx::GraphProto* graph, PassContext& ctx) {
  auto* walk = dynamic_cast<NodeWalkContext*>(&ctx);
  if (walk == nullptr || &walk->walker.pass() != this || walk->root.graph != graph)
    return Diag::Msg("pass '" + Name() + "' rewrites node by node and runs over a whole model: run it with RunPass");
  const int before = walk->walker.stats().rewritten;
  NUPHAR_RETURN_IF_ERROR(walk->walker.Walk(walk->root));
  return walk->walker.stats().rewritten - before;
}

Expected<PassStats> RunPass(onnx::ModelProto& model, GraphPass& pass, const PassRunOptions& options) {
  if (pass.Order() == SubgraphOrder::kEachGraphByDriver)
    return Diag::Msg("pass '" + pass.Name() + "' rewrites one graph at a time for the driver that compiles it, not a whole model");
  NUPHAR_RETURN_IF_ERROR(pass.Begin(model));
  int64_t opset = GetOpset(model);
  if (pass.MinOpset() > 0) {
    NUPHAR_ASSIGN_OR_RETURN(opset, EnsureOpset(model, pass.MinOpset()));
  }
  Walker walker(model, pass, options, opset);
  if (!pass.TargetOpTypes().empty()) {
    GraphScope main{model.mutable_graph(), nullptr, "main"};
    NodeWalkContext ctx(walker, main);
    NUPHAR_RETURN_IF_ERROR(pass.ApplyToGraph(model.mutable_graph(), ctx).status());
    RemoveDeadValues(model, std::move(walker.maybe_dead()));
  }
  NUPHAR_RETURN_IF_ERROR(pass.Finish(model));
  walker.stats().opset = opset;
  return walker.stats();
}

namespace {

// Names that may be dead: anywhere in the model (`any_graph`, which the producer chain grows),
// or only in the graph that defines them (`scoped`).
struct DeadCandidates {
  std::unordered_set<std::string> any_graph;
  std::set<std::pair<const onnx::GraphProto*, std::string>> scoped;
  bool Contains(const onnx::GraphProto* g, const std::string& name) const {
    return any_graph.count(name) > 0 || scoped.count({g, name}) > 0;
  }
  bool empty() const { return any_graph.empty() && scoped.empty(); }
};

int RemoveDead(const GraphScope& root, DeadCandidates candidates, const DeadValueOptions& options) {
  int removed = 0;
  bool changed = true;
  while (changed && (options.all_nodes || !candidates.empty())) {
    changed = false;
    UseCounts uses(*root.graph);
    std::unordered_set<std::string> next;
    auto clean = [&](const GraphScope& scope) {
      auto* g = scope.graph;
      const int removed_before = removed;
      auto dead = [&](const std::string& name) { return candidates.Contains(g, name) && !uses.Used(name); };
      std::unordered_set<std::string> gone;
      EraseIf(g->mutable_initializer(), [&](const onnx::TensorProto& t) {
        if (!dead(t.name())) return false;
        gone.insert(t.name());
        ++removed;
        return true;
      });
      if (options.follow_producers || options.all_nodes) {
        EraseIf(g->mutable_node(), [&](const onnx::NodeProto& n) {
          bool any_candidate = options.all_nodes;
          for (const auto& o : n.output()) {
            if (!o.empty() && uses.Used(o)) return false;
            any_candidate |= candidates.Contains(g, o);
          }
          if (!any_candidate || (n.output_size() == 0 && !options.all_nodes)) return false;
          for (const auto& i : n.input()) next.insert(i);
          for (const auto& o : n.output()) gone.insert(o);
          ++removed;
          return true;
        });
      }
      if (gone.empty() && removed == removed_before) return;
      changed = true;
      // An initializer-backed graph input goes with its initializer; plain inputs stay (interface).
      // Subgraph inputs are positional (Scan/Loop bodies) and are kept unless asked for.
      if (scope.IsMain() || options.drop_subgraph_inputs)
        EraseIf(g->mutable_input(), [&](const onnx::ValueInfoProto& vi) { return gone.count(vi.name()) > 0; });
      if (options.drop_value_info)
        EraseIf(g->mutable_value_info(), [&](const onnx::ValueInfoProto& vi) { return gone.count(vi.name()) > 0; });
    };
    if (options.subgraphs) ForEachScope(root, clean);
    else clean(root);
    if (!options.follow_producers && !options.all_nodes) break;  // nothing new can become dead
    if (options.follow_producers)
      for (auto& n : next) candidates.any_graph.insert(n);
  }
  return removed;
}

}  // namespace

int RemoveDeadValues(onnx::ModelProto& model, std::unordered_set<std::string> candidates,
                     const DeadValueOptions& options) {
  DeadCandidates c;
  c.any_graph = std::move(candidates);
  return RemoveDead(GraphScope{model.mutable_graph(), nullptr, "main"}, std::move(c), options);
}

int RemoveDeadValues(onnx::GraphProto* graph, bool is_main, std::unordered_set<std::string> candidates,
                     const DeadValueOptions& options) {
  // A non-main root gets a parent so that IsMain() is false; the parent is never searched.
  onnx::GraphProto none;
  GraphScope outside{&none, nullptr, ""};
  GraphScope root{graph, is_main ? nullptr : &outside, is_main ? "main" : ""};
  DeadCandidates c;
  c.any_graph = std::move(candidates);
  return RemoveDead(root, std::move(c), options);
}

int RemoveDeadValues(onnx::ModelProto& model,
                     const std::vector<std::pair<const onnx::GraphProto*, std::string>>& candidates,
                     const DeadValueOptions& options) {
  DeadCandidates c;
  c.scoped.insert(candidates.begin(), candidates.end());
  return RemoveDead(GraphScope{model.mutable_graph(), nullptr, "main"}, std::move(c), options);
}

}  // namespace nuphar
