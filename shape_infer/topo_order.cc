// Node ordering (spec S2): Kahn's algorithm over explicit and implicit (subgraph) inputs.
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "shape_infer/graph_inferencer.h"

namespace nuphar::shape_infer {
namespace {

void CollectImplicit(const onnx::GraphProto& body, std::unordered_set<std::string>* defined,
                     std::unordered_set<std::string>* seen, std::vector<std::string>* out) {
  std::unordered_set<std::string> local = *defined;
  for (const auto& in : body.input()) local.insert(in.name());
  for (const auto& init : body.initializer()) local.insert(init.name());
  for (const auto& node : body.node()) {
    for (const auto& in : node.input())
      if (!in.empty() && !local.count(in) && seen->insert(in).second) out->push_back(in);
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) CollectImplicit(attr.g(), &local, seen, out);
      for (const auto& g : attr.graphs()) CollectImplicit(g, &local, seen, out);
    }
    for (const auto& o : node.output()) local.insert(o);
  }
}

}  // namespace

std::vector<std::string> ImplicitInputs(const onnx::GraphProto& body) {
  std::unordered_set<std::string> defined, seen;
  std::vector<std::string> out;
  CollectImplicit(body, &defined, &seen, &out);
  return out;
}

Expected<std::vector<size_t>> TopologicalOrder(const onnx::GraphProto& graph) {
  const size_t n = static_cast<size_t>(graph.node_size());
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < n; ++i)
    for (const auto& o : graph.node(static_cast<int>(i)).output())
      if (!o.empty()) producer.emplace(o, i);

  std::vector<std::vector<size_t>> consumers(n);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const onnx::NodeProto& node = graph.node(static_cast<int>(i));
    std::vector<std::string> deps(node.input().begin(), node.input().end());
    for (const auto& attr : node.attribute()) {
      if (attr.has_g()) for (auto& d : ImplicitInputs(attr.g())) deps.push_back(std::move(d));
      for (const auto& g : attr.graphs()) for (auto& d : ImplicitInputs(g)) deps.push_back(std::move(d));
    }
    std::unordered_set<size_t> from;
    for (const auto& d : deps) {
      if (d.empty()) continue;
      auto it = producer.find(d);
      if (it == producer.end() || it->second == i) {
        if (it != producer.end()) return Diag::Node(node, "Invalid model with cyclic graph");
        continue;
      }
      if (from.insert(it->second).second) {
        consumers[it->second].push_back(i);
        ++pending[i];
      }
    }
  }
  std::deque<size_t> ready;
  for (size_t i = 0; i < n; ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::vector<size_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t i = ready.front();
    ready.pop_front();
    order.push_back(i);
    std::vector<size_t> unlocked;
    for (size_t c : consumers[i])
      if (--pending[c] == 0) unlocked.push_back(c);
    std::sort(unlocked.begin(), unlocked.end());
    ready.insert(ready.end(), unlocked.begin(), unlocked.end());
  }
  if (order.size() != n) {
    Diag d = Diag::Msg("Invalid model with cyclic graph");
    d.graph = graph.name();
    return d;
  }
  return order;
}

}  // namespace nuphar::shape_infer
