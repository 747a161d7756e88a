// Graph views: scope lookups, subgraph walks, use counts and topological order (graph/graph_view.h).
#include "graph/graph_view.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <deque>

namespace nuphar {

const onnx::TensorProto* GraphScope::FindInitializer(const std::string& name, const GraphScope** owner) const {
  for (const GraphScope* s = this; s; s = s->parent) {
    for (const auto& t : s->graph->initializer()) {
      if (t.name() == name) {
        if (owner) *owner = s;
        return &t;
      }
    }
  }
  return nullptr;
}

const onnx::ValueInfoProto* GraphScope::FindValueInfo(const std::string& name) const {
  for (const GraphScope* s = this; s; s = s->parent) {
    for (const auto* list : {&s->graph->value_info(), &s->graph->input(), &s->graph->output()})
      for (const auto& vi : *list)
        if (vi.name() == name) return &vi;
  }
  return nullptr;
}

const onnx::NodeProto* GraphScope::FindProducer(const std::string& name, const GraphScope** owner) const {
  if (name.empty()) return nullptr;
  for (const GraphScope* s = this; s; s = s->parent) {
    for (const auto& n : s->graph->node()) {
      for (const auto& o : n.output()) {
        if (o == name) {
          if (owner) *owner = s;
          return &n;
        }
      }
    }
  }
  return nullptr;
}

GraphScope GraphScope::Child(onnx::GraphProto* sub, const onnx::NodeProto& node, const std::string& attr) const {
  GraphScope child{sub, this, path + "/" + node.name() + "." + attr};
  child.in_loop_body = in_loop_body || ((node.op_type() == "Scan" || node.op_type() == "Loop") && attr == "body");
  return child;
}

bool GraphScope::IsInput(const std::string& name) const {
  for (const auto& vi : graph->input())
    if (vi.name() == name) return true;
  return false;
}

std::vector<onnx::GraphProto*> Subgraphs(onnx::NodeProto& node) {
  std::vector<onnx::GraphProto*> out;
  for (auto& a : *node.mutable_attribute()) {
    if (a.has_g()) out.push_back(a.mutable_g());
    for (auto& g : *a.mutable_graphs()) out.push_back(&g);
  }
  return out;
}

std::vector<const onnx::GraphProto*> Subgraphs(const onnx::NodeProto& node) {
  std::vector<const onnx::GraphProto*> out;
  for (const auto& a : node.attribute()) {
    if (a.has_g()) out.push_back(&a.g());
    for (const auto& g : a.graphs()) out.push_back(&g);
  }
  return out;
}

void ForEachScope(const GraphScope& scope, const std::function<void(const GraphScope&)>& fn) {
  fn(scope);
  for (auto& node : *scope.graph->mutable_node()) {
    for (auto& a : *node.mutable_attribute()) {
      std::vector<onnx::GraphProto*> graphs;
      if (a.has_g()) graphs.push_back(a.mutable_g());
      for (auto& g : *a.mutable_graphs()) graphs.push_back(&g);
      for (auto* g : graphs) ForEachScope(scope.Child(g, node, a.name()), fn);
    }
  }
}

void ForEachScope(onnx::ModelProto& model, const std::function<void(const GraphScope&)>& fn) {
  GraphScope main{model.mutable_graph(), nullptr, "main"};
  ForEachScope(main, fn);
}

namespace {

// Adds to `out` the names `graph` reads without defining them; `defined` holds the names
// visible from inside (the graph's own and those of subgraphs between it and the node).
void CollectFreeNames(const onnx::GraphProto& graph, std::unordered_set<std::string> defined,
                      std::vector<std::string>* out, std::unordered_set<std::string>* seen) {
  for (const auto& vi : graph.input()) defined.insert(vi.name());
  for (const auto& t : graph.initializer()) defined.insert(t.name());
  for (const auto& t : graph.sparse_initializer()) defined.insert(t.values().name());
  for (const auto& n : graph.node())
    for (const auto& o : n.output()) defined.insert(o);
  auto read = [&](const std::string& name) {
    if (!name.empty() && !defined.count(name) && seen->insert(name).second) out->push_back(name);
  };
  for (const auto& n : graph.node()) {
    for (const auto& i : n.input()) read(i);
    for (const auto* sub : Subgraphs(n)) CollectFreeNames(*sub, defined, out, seen);
  }
  for (const auto& vi : graph.output()) read(vi.name());
}

}  // namespace

std::vector<std::string> ImplicitInputs(const onnx::NodeProto& node) {
  std::vector<std::string> out;
  std::unordered_set<std::string> seen;
  for (const auto* sub : Subgraphs(node)) CollectFreeNames(*sub, {}, &out, &seen);
  return out;
}

UseCounts::UseCounts(const onnx::ModelProto& model, Record record) : record_(record) { AddGraph(model.graph()); }
UseCounts::UseCounts(const onnx::GraphProto& graph, Record record) : record_(record) { AddGraph(graph); }

const std::vector<Consumer>& UseCounts::Consumers(const std::string& name) const {
  NUPHAR_CHECK(record_ == Record::kConsumers, "UseCounts built without Record::kConsumers");
  static const std::vector<Consumer> kNone;
  auto it = consumers_.find(name);
  return it == consumers_.end() ? kNone : it->second;
}

void UseCounts::AddGraph(const onnx::GraphProto& graph) {
  for (const auto& n : graph.node()) {
    for (int i = 0; i < n.input_size(); ++i) {
      if (!n.input(i).empty()) ++counts_[n.input(i)];
      if (record_ == Record::kConsumers) consumers_[n.input(i)].push_back(Consumer{n.op_type(), i});
    }
    for (const auto* sub : Subgraphs(n)) AddGraph(*sub);
  }
  for (const auto& o : graph.output()) ++counts_[o.name()];
}

namespace {
void CollectNames(const onnx::GraphProto& g, std::unordered_set<std::string>* names) {
  for (const auto& vi : g.input()) names->insert(vi.name());
  for (const auto& vi : g.output()) names->insert(vi.name());
  for (const auto& vi : g.value_info()) names->insert(vi.name());
  for (const auto& t : g.initializer()) names->insert(t.name());
  for (const auto& t : g.sparse_initializer()) names->insert(t.values().name());
  for (const auto& n : g.node()) {
    if (!n.name().empty()) names->insert(n.name());
    for (const auto& i : n.input()) names->insert(i);
    for (const auto& o : n.output()) names->insert(o);
    for (const auto* sub : Subgraphs(n)) CollectNames(*sub, names);
  }
}
}  // namespace

std::unordered_set<std::string> CollectAllNames(const onnx::ModelProto& model) {
  std::unordered_set<std::string> names;
  CollectNames(model.graph(), &names);
  names.erase("");
  return names;
}

TopoOrder TopologicalOrder(const onnx::GraphProto& graph, const TopoOptions& options) {
  TopoOrder result;
  const int n = graph.node_size();
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto& o : graph.node(i).output())
      if (!o.empty()) producer[o] = i;
  std::vector<std::vector<int>> readers(n);
  std::vector<int> pending(n, 0);
  // depends_on[p] == i once node i counts producer p: one edge per pair without copying a node's
  // input names or building a set per node (this order is computed for every graph at each load).
  std::vector<int> depends_on(n, -1);
  for (int i = 0; i < n; ++i) {
    bool reads_itself = false;
    auto read = [&](const std::string& name) {
      auto it = producer.find(name);
      if (it == producer.end()) return;
      const int p = it->second;
      if (p == i) {
        reads_itself = true;
        return;
      }
      if (depends_on[p] == i) return;
      depends_on[p] = i;
      readers[p].push_back(i);
      ++pending[i];
    };
    for (const auto& name : graph.node(i).input()) read(name);
    for (const auto& name : ImplicitInputs(graph.node(i))) read(name);
    if (reads_itself && options.self_read_is_cycle) {
      result.cycle_node = i;
      result.self_read = true;
      return result;
    }
  }
  result.order.reserve(n);
  if (options.ready == ReadyOrder::kLowestIndex) {
    std::vector<int> ready;  // a min-heap of node indices
    for (int i = 0; i < n; ++i)
      if (pending[i] == 0) ready.push_back(i);
    std::make_heap(ready.begin(), ready.end(), std::greater<int>());
    while (!ready.empty()) {
      std::pop_heap(ready.begin(), ready.end(), std::greater<int>());
      int i = ready.back();
      ready.pop_back();
      result.order.push_back(i);
      for (int r : readers[i]) {
        if (--pending[r] == 0) {
          ready.push_back(r);
          std::push_heap(ready.begin(), ready.end(), std::greater<int>());
        }
      }
    }
  } else {
    std::deque<int> ready;
    for (int i = 0; i < n; ++i)
      if (pending[i] == 0) ready.push_back(i);
    while (!ready.empty()) {
      int i = ready.front();
      ready.pop_front();
      result.order.push_back(i);
      std::vector<int> unlocked;
      for (int r : readers[i])
        if (--pending[r] == 0) unlocked.push_back(r);
      std::sort(unlocked.begin(), unlocked.end());
      ready.insert(ready.end(), unlocked.begin(), unlocked.end());
    }
  }
  if (static_cast<int>(result.order.size()) != n) {
    for (int i = 0; i < n && result.cycle_node < 0; ++i)
      if (pending[i] > 0) result.cycle_node = i;
  }
  return result;
}

Status TopologicalSort(onnx::GraphProto* graph) {
  const int n = graph->node_size();
  TopoOrder topo = TopologicalOrder(*graph);
  if (!topo.ok())
    return Diag::Node(graph->node(topo.cycle_node), "graph '" + graph->name() + "' has a cycle through this node");
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  sorted.Reserve(n);
  for (int i : topo.order) sorted.Add()->Swap(graph->mutable_node(i));
  graph->mutable_node()->Swap(&sorted);
  return Status::OK();
}

Expected<std::vector<int64_t>> StaticDims(const onnx::ValueInfoProto& vi) {
  if (!vi.type().has_tensor_type() || !vi.type().tensor_type().has_shape())
    return Diag::Msg("'" + vi.name() + "' has no known rank");
  std::vector<int64_t> dims;
  for (const auto& d : vi.type().tensor_type().shape().dim())
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  return dims;
}

namespace {

void CopyTensorHeader(const onnx::TensorProto& t, const std::string& name, onnx::TensorProto* header) {
  header->set_name(name);
  header->set_data_type(t.data_type());
  *header->mutable_dims() = t.dims();
}

}  // namespace

onnx::GraphProto CopyWithoutWeights(const onnx::GraphProto& graph, const WeightFreeCopyOptions& options,
                                    std::vector<std::pair<std::string, const onnx::TensorProto*>>* stripped) {
  onnx::GraphProto copy;
  CopyWithoutWeights(graph, options, &copy, stripped);
  return copy;
}

void CopyWithoutWeights(const onnx::GraphProto& graph, const WeightFreeCopyOptions& options, onnx::GraphProto* into,
                        std::vector<std::pair<std::string, const onnx::TensorProto*>>* stripped) {
  onnx::GraphProto& copy = *into;
  copy.Clear();
  copy.set_name(graph.name());
  copy.set_doc_string(graph.doc_string());
  *copy.mutable_input() = graph.input();
  *copy.mutable_output() = graph.output();
  *copy.mutable_value_info() = graph.value_info();
  *copy.mutable_sparse_initializer() = graph.sparse_initializer();
  *copy.mutable_quantization_annotation() = graph.quantization_annotation();
  std::unordered_set<std::string> initializer_names, reduced;
  for (const onnx::TensorProto& t : graph.initializer()) initializer_names.insert(t.name());
  auto reduce = [&](const std::string& name, const onnx::TensorProto& t, onnx::TensorProto* header) {
    CopyTensorHeader(t, name, header);
    if (stripped) stripped->emplace_back(name, &t);
  };
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (options.is_weight(t) && reduced.insert(t.name()).second) reduce(t.name(), t, copy.add_initializer());
    else *copy.add_initializer() = t;
  }
  copy.mutable_node()->Reserve(graph.node_size());
  for (const onnx::NodeProto& n : graph.node()) {
    const bool constant = n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx");
    if (!constant) {
      *copy.add_node() = n;
      continue;
    }
    if (options.constants == ConstantWeights::kAsInitializer) {
      // Only a Constant that holds a weight in `value` alone; a name taken twice stays as written.
      const bool single_value = n.output_size() == 1 && !n.output(0).empty() && n.attribute_size() == 1 &&
                                n.attribute(0).name() == "value" && n.attribute(0).has_t();
      if (single_value && options.is_weight(n.attribute(0).t()) && !initializer_names.count(n.output(0)) &&
          reduced.insert(n.output(0)).second) {
        reduce(n.output(0), n.attribute(0).t(), copy.add_initializer());
        continue;
      }
      *copy.add_node() = n;
      continue;
    }
    onnx::NodeProto* kept = copy.add_node();
    kept->set_name(n.name());
    kept->set_op_type(n.op_type());
    kept->set_domain(n.domain());
    kept->set_doc_string(n.doc_string());
    *kept->mutable_input() = n.input();
    *kept->mutable_output() = n.output();
    for (const onnx::AttributeProto& a : n.attribute()) {
      onnx::AttributeProto* attr = kept->add_attribute();
      if (!a.has_t() || !options.is_weight(a.t())) {
        *attr = a;
        continue;
      }
      attr->set_name(a.name());
      attr->set_type(a.type());
      reduce(a.t().name(), a.t(), attr->mutable_t());
    }
  }
}

bool SameLeadingDims(const onnx::TensorShapeProto& a, const onnx::TensorShapeProto& b) {
  if (a.dim_size() != b.dim_size()) return false;
  for (int i = 0; i + 1 < a.dim_size(); ++i) {
    const auto& p = a.dim(i);
    const auto& q = b.dim(i);
    const bool same_value = p.has_dim_value() && q.has_dim_value() && p.dim_value() == q.dim_value();
    const bool same_param = p.has_dim_param() && q.has_dim_param() && !p.dim_param().empty() && p.dim_param() == q.dim_param();
    if (!same_value && !same_param) return false;
  }
  return true;
}

}  // namespace nuphar
