// Graph views: producers, consumers and name lookup across the main graph and its subgraphs.
//
// ONNX subgraphs (If branches, Loop/Scan bodies) may read tensors of any enclosing graph by
// name ("outer-scope references"). A GraphScope is one graph plus the chain of graphs around
// it, so a lookup walks outwards exactly as name resolution does at run time. Names are
// resolved by string; ONNX forbids a subgraph from redefining an outer name, so the first
// match walking outwards is the definition.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "graph/error.h"
#include "graph/onnx_fwd.h"

namespace nuphar {

/// One graph and its enclosing graphs. Scopes live on the stack of the walk that made them.
struct GraphScope {
  onnx::GraphProto* graph = nullptr;
  const GraphScope* parent = nullptr;
  std::string path;  ///< "main", "main/<node>.<attr>", ... for messages
  bool in_loop_body = false;  ///< this graph is, or is nested in, a Scan/Loop body

  bool IsMain() const { return parent == nullptr; }
  /// The scope of `sub`, the graph in attribute `attr` of `node` (a node of this graph).
  GraphScope Child(onnx::GraphProto* sub, const onnx::NodeProto& node, const std::string& attr) const;
  const GraphScope& Main() const { return parent ? parent->Main() : *this; }

  /// Initializer named `name` in this graph or an enclosing one (the defining scope in *owner).
  const onnx::TensorProto* FindInitializer(const std::string& name, const GraphScope** owner = nullptr) const;
  /// value_info, input or output entry named `name`, this graph first, then enclosing graphs.
  const onnx::ValueInfoProto* FindValueInfo(const std::string& name) const;
  /// The node producing `name` in this graph or an enclosing one.
  const onnx::NodeProto* FindProducer(const std::string& name, const GraphScope** owner = nullptr) const;
  /// True if `name` is listed in this graph's inputs (not the enclosing graphs').
  bool IsInput(const std::string& name) const;
};

/// The subgraph attributes of a node (If then/else, Loop/Scan body, any GRAPH/GRAPHS attribute).
std::vector<onnx::GraphProto*> Subgraphs(onnx::NodeProto& node);
std::vector<const onnx::GraphProto*> Subgraphs(const onnx::NodeProto& node);

/// Calls `fn` for `scope` and for every nested subgraph, parents before children.
void ForEachScope(const GraphScope& scope, const std::function<void(const GraphScope&)>& fn);
/// Same, starting from the model's main graph.
void ForEachScope(onnx::ModelProto& model, const std::function<void(const GraphScope&)>& fn);

/// Names read by nested subgraphs of `node` that none of those subgraphs defines (outer-scope
/// references), in first-use order.
std::vector<std::string> ImplicitInputs(const onnx::NodeProto& node);

/// One node input slot reading a tensor.
struct Consumer {
  std::string op_type;
  int input_index = 0;
};

/// How often each tensor name is read anywhere in the model: node inputs of every graph
/// (outer-scope reads included) and graph outputs of every graph. With kConsumers it also
/// keeps, per name, the node input slots that read it.
class UseCounts {
 public:
  enum class Record { kCounts, kConsumers };
  explicit UseCounts(const onnx::ModelProto& model, Record record = Record::kCounts);
  /// Reads in `graph` and its subgraphs only.
  explicit UseCounts(const onnx::GraphProto& graph, Record record = Record::kCounts);
  int Count(const std::string& name) const {
    auto it = counts_.find(name);
    return it == counts_.end() ? 0 : it->second;
  }
  bool Used(const std::string& name) const { return Count(name) > 0; }
  /// The node input slots reading `name` in every graph, in walk order (a node's inputs, then
  /// its subgraphs). Omitted optional inputs are listed under "". Needs Record::kConsumers.
  const std::vector<Consumer>& Consumers(const std::string& name) const;

 private:
  void AddGraph(const onnx::GraphProto& graph);
  Record record_;
  std::unordered_map<std::string, int> counts_;
  std::unordered_map<std::string, std::vector<Consumer>> consumers_;
};

/// Every name in the model: node names and tensor names (node inputs/outputs, graph
/// inputs/outputs, initializers, sparse initializers, value_info) of every graph.
std::unordered_set<std::string> CollectAllNames(const onnx::ModelProto& model);

/// How Kahn's algorithm picks the next node among those whose producers have all been taken.
enum class ReadyOrder {
  kLowestIndex,  ///< the lowest node index: an already ordered graph keeps its order
  kFifo,         ///< first ready, first taken; nodes unlocked together go in index order
                 ///< (symbolic_shape_infer's S2 order, which its fresh symbol names follow)
};

struct TopoOptions {
  ReadyOrder ready = ReadyOrder::kLowestIndex;
  /// A node reading its own output is a cycle (shape inference, the runtime); otherwise that
  /// read is ignored (TopologicalSort).
  bool self_read_is_cycle = false;
};

/// The execution order of a graph's nodes: Kahn's algorithm over explicit inputs and the
/// implicit (outer-scope) inputs of their subgraphs (ImplicitInputs). The one topological order
/// of the graph tools and of the runtime's GraphPlan.
struct TopoOrder {
  std::vector<int> order;  ///< node indices; partial when there is a cycle
  int cycle_node = -1;     ///< on a cycle: the self-reading node, else the lowest index left over
  bool self_read = false;  ///< the cycle is a node reading its own output
  bool ok() const { return cycle_node < 0; }
};
TopoOrder TopologicalOrder(const onnx::GraphProto& graph, const TopoOptions& options = {});

/// Reorders `graph`'s nodes so that every node follows the producers of its inputs (implicit
/// subgraph inputs included). Stable: already ordered graphs keep their order. Fails on a cycle.
Status TopologicalSort(onnx::GraphProto* graph);

/// Static dims of a value_info (-1 where symbolic or unknown), or an error if it has no rank.
Expected<std::vector<int64_t>> StaticDims(const onnx::ValueInfoProto& vi);

/// What CopyWithoutWeights does with a Constant node whose `value` is a weight.
enum class ConstantWeights {
  kKeepNode,         ///< the node stays, its tensor reduced to name, type and dims (ONNX inference)
  kAsInitializer,    ///< the node becomes an initializer header named after its output (the
                     ///< runtime's rewrite copy: a Constant's output is a constant either way)
};

struct WeightFreeCopyOptions {
  /// Which tensors are weights (initializers and Constant values): the copy holds their name,
  /// type and dims only.
  std::function<bool(const onnx::TensorProto&)> is_weight;
  ConstantWeights constants = ConstantWeights::kKeepNode;
};

/// One level of `graph` (a node's subgraphs are copied whole) without its weights' payloads, for
/// the passes that read a model's structure but not its weights: copying the weights was a large
/// part of a small model's load time. `stripped`, when given, gets (name in the copy, the original
/// tensor) per weight reduced. A weight whose name another initializer already takes stays whole
/// (the copy must define the same names as `graph`; checks report the duplicate).
onnx::GraphProto CopyWithoutWeights(const onnx::GraphProto& graph, const WeightFreeCopyOptions& options,
                                    std::vector<std::pair<std::string, const onnx::TensorProto*>>* stripped = nullptr);
/// The same, written into `copy` (cleared first): a message on an arena is filled in place (a
/// Swap between arena and heap messages would copy it again).
void CopyWithoutWeights(const onnx::GraphProto& graph, const WeightFreeCopyOptions& options, onnx::GraphProto* copy,
                        std::vector<std::pair<std::string, const onnx::TensorProto*>>* stripped = nullptr);

/// Whether two declared shapes have the same rank and every dim but the last provably equal:
/// equal dim_value, or equal non-empty dim_param (the fusions' test that an operand needs no
/// broadcast against another value's rows).
bool SameLeadingDims(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b);

}  // namespace nuphar
