// Structural graph comparison for the fixture tests (see model_compare.h).
#include "model_compare.h"

#include <algorithm>
#include <map>

#include "graph/tensor_data.h"

namespace nuphar::quant::testing {
namespace {

std::string Join(const google::protobuf::RepeatedPtrField<std::string>& v) {
  std::string s = "[";
  for (const auto& x : v) s += (s.size() > 1 ? ", " : "") + x;
  return s + "]";
}

template <class List>
std::vector<std::string> Names(const List& list) {
  std::vector<std::string> out;
  for (const auto& x : list) out.push_back(x.name());
  return out;
}

std::string AttrValue(const onnx::AttributeProto& a) {
  // Graph attributes are compared separately; everything else by its serialized value.
  onnx::AttributeProto copy = a;
  copy.clear_g();
  copy.clear_graphs();
  copy.clear_doc_string();
  return copy.SerializeAsString();
}

}  // namespace

std::vector<std::string> CompareGraphs(const onnx::GraphProto& expected, const onnx::GraphProto& actual,
                                       const std::string& path) {
  std::vector<std::string> diffs;
  auto diff = [&](const std::string& what) { diffs.push_back(path + ": " + what); };
  if (Names(expected.input()) != Names(actual.input())) diff("graph inputs differ");
  if (Names(expected.output()) != Names(actual.output())) diff("graph outputs differ");
  if (Names(expected.value_info()) != Names(actual.value_info())) diff("value_info names differ");

  if (expected.initializer_size() != actual.initializer_size()) {
    diff("initializer count " + std::to_string(expected.initializer_size()) + " vs " +
         std::to_string(actual.initializer_size()));
  }
  for (int i = 0; i < std::min(expected.initializer_size(), actual.initializer_size()); ++i) {
    const auto& e = expected.initializer(i);
    const auto& a = actual.initializer(i);
    if (e.name() != a.name()) {
      diff("initializer #" + std::to_string(i) + " name '" + e.name() + "' vs '" + a.name() + "'");
      continue;
    }
    if (e.data_type() != a.data_type()) diff("initializer '" + e.name() + "' dtype differs");
    if (std::vector<int64_t>(e.dims().begin(), e.dims().end()) != std::vector<int64_t>(a.dims().begin(), a.dims().end())) {
      diff("initializer '" + e.name() + "' dims differ");
    }
    auto eb = TensorBytes(e);
    auto ab = TensorBytes(a);
    if (!eb.ok() || !ab.ok() || *eb != *ab) diff("initializer '" + e.name() + "' bytes differ");
  }

  if (expected.node_size() != actual.node_size()) {
    diff("node count " + std::to_string(expected.node_size()) + " vs " + std::to_string(actual.node_size()));
  }
  for (int i = 0; i < std::min(expected.node_size(), actual.node_size()); ++i) {
    const auto& e = expected.node(i);
    const auto& a = actual.node(i);
    const std::string where = "node #" + std::to_string(i) + " '" + e.name() + "'";
    if (e.op_type() != a.op_type() || e.domain() != a.domain()) {
      diff(where + " op " + e.domain() + ":" + e.op_type() + " vs " + a.domain() + ":" + a.op_type());
      continue;
    }
    if (e.name() != a.name()) diff(where + " name vs '" + a.name() + "'");
    if (Join(e.input()) != Join(a.input())) diff(where + " inputs " + Join(e.input()) + " vs " + Join(a.input()));
    if (Join(e.output()) != Join(a.output())) diff(where + " outputs " + Join(e.output()) + " vs " + Join(a.output()));
    std::map<std::string, const onnx::AttributeProto*> ea, aa;
    for (const auto& x : e.attribute()) ea[x.name()] = &x;
    for (const auto& x : a.attribute()) aa[x.name()] = &x;
    if (ea.size() != aa.size()) diff(where + " attribute count differs");
    for (const auto& [name, attr] : ea) {
      auto it = aa.find(name);
      if (it == aa.end()) {
        diff(where + " misses attribute " + name);
        continue;
      }
      if (AttrValue(*attr) != AttrValue(*it->second)) diff(where + " attribute " + name + " differs");
      if (attr->has_g()) {
        auto sub = CompareGraphs(attr->g(), it->second->g(), path + "/" + e.name() + "." + name);
        diffs.insert(diffs.end(), sub.begin(), sub.end());
      }
    }
  }
  return diffs;
}

}  // namespace nuphar::quant::testing
