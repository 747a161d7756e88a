// Structural check of a loaded model (graph/model_check.h).
#include "graph/model_check.h"

#include "graph/opset_schema.h"

#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>

#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/tensor_data.h"

namespace nuphar {
namespace {

using Names = std::unordered_set<std::string>;

Status InGraph(Diag d, const std::string& graph) {
  d.graph = graph;
  return d;
}

// Elements the payload holds, or -1 when it is not stored inline (external, strings are counted).
int64_t PayloadElements(const onnx::TensorProto& t, size_t esize) {
  if (t.data_location() == onnx::TensorProto::EXTERNAL) return -1;
  if (t.has_raw_data()) return esize ? static_cast<int64_t>(t.raw_data().size() / esize) : -1;
  switch (static_cast<onnx::TensorProto::DataType>(t.data_type())) {
    case onnx::TensorProto::FLOAT: return t.float_data_size();
    case onnx::TensorProto::COMPLEX64: return t.float_data_size() / 2;
    case onnx::TensorProto::DOUBLE: return t.double_data_size();
    case onnx::TensorProto::COMPLEX128: return t.double_data_size() / 2;
    case onnx::TensorProto::INT64: return t.int64_data_size();
    case onnx::TensorProto::UINT32: case onnx::TensorProto::UINT64: return t.uint64_data_size();
    case onnx::TensorProto::STRING: return t.string_data_size();
    default: return t.int32_data_size();
  }
}

Status CheckTensor(const onnx::TensorProto& t, const std::string& graph, const std::string& what) {
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  for (int64_t d : dims)
    if (d < 0) return InGraph(Diag::Msg(what + " '" + t.name() + "' has a negative dim (" + std::to_string(d) + ")"), graph);
  const size_t esize = DTypeSize(static_cast<DType>(t.data_type()));
  const int64_t have = PayloadElements(t, esize);
  if (have < 0) return Status::OK();
  const int64_t want = NumElements(dims);
  if (have != want || (t.has_raw_data() && esize && t.raw_data().size() % esize != 0)) {
    const std::string declared = want == INT64_MAX ? std::string("more than 2^63") : std::to_string(want);
    return InGraph(Diag::Msg(what + " '" + t.name() + "' declares " + declared + " elements but holds " +
                     (t.has_raw_data() ? std::to_string(t.raw_data().size()) + " bytes" : std::to_string(have) + " values")), graph);
  }
  return Status::OK();
}

Status CheckDims(const onnx::ValueInfoProto& v, const std::string& graph) {
  if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return Status::OK();
  for (const auto& d : v.type().tensor_type().shape().dim())
    if (d.has_dim_value() && d.dim_value() < 0)
      return InGraph(Diag::Msg("value '" + v.name() + "' declares a negative dim (" + std::to_string(d.dim_value()) + ")"), graph);
  return Status::OK();
}

using Opsets = std::unordered_map<std::string, int>;

// An attribute whose type differs from the one the op's schema declares (perm given as floats)
// would otherwise read as absent and silently take its default.
Status CheckAttributeTypes(const onnx::NodeProto& n, const Opsets& opsets) {
  const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
  auto it = opsets.find(domain);
  if (it == opsets.end()) return Status::OK();
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(n.op_type(), it->second, domain);
  if (!schema) return Status::OK();
  for (const auto& a : n.attribute()) {
    auto decl = schema->attributes().find(a.name());
    if (decl == schema->attributes().end() || a.type() == onnx::AttributeProto::UNDEFINED) continue;
    if (a.type() != decl->second.type)
      return Diag::Node(n, "attribute '" + a.name() + "' has type " + onnx::AttributeProto::AttributeType_Name(a.type()) +
                               ", the op expects " + onnx::AttributeProto::AttributeType_Name(decl->second.type));
  }
  return Status::OK();
}

// The names the enclosing graphs define, innermost first: a subgraph sees them all. Chained, not
// merged: copying every enclosing name into a set per subgraph cost more than checking it.
struct OuterScope {
  const Names* names = nullptr;
  const OuterScope* parent = nullptr;
  bool count(const std::string& name) const {
    for (const OuterScope* s = this; s != nullptr && s->names != nullptr; s = s->parent)
      if (s->names->count(name)) return true;
    return false;
  }
};

// `outer`: every name an enclosing graph defines (visible to this graph's nodes).
Status CheckGraph(const onnx::GraphProto& g, const OuterScope& outer, const Opsets& opsets) {
  const std::string& gname = g.name();
  Names defined;         // this graph's inputs, initializers and node outputs
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
  for (const auto& in : g.input()) {
    // A graph input listed twice is tolerated: the original model_editor writes its zero-state
    // inputs that way (../shared/fixtures/quantizer/lstm_scan.onnx), and consumers use the first.
    defined.insert(in.name());
    NUPHAR_RETURN_IF_ERROR(CheckDims(in, gname));
  }
  for (const auto& t : g.initializer()) {
    // The original model_editor also repeats its zero-state initializers, identical: tolerated.
    if (auto [it, fresh] = initializers.emplace(t.name(), &t);
        !fresh && it->second->SerializeAsString() != t.SerializeAsString())
      return InGraph(Diag::Msg("initializer '" + t.name() + "' is defined twice, with different values"), gname);
    defined.insert(t.name());  // an initializer may also be listed as an input (IR < 4)
    NUPHAR_RETURN_IF_ERROR(CheckTensor(t, gname, "initializer"));
  }
  std::unordered_map<std::string, int> producer;
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    if (n.op_type().empty()) return InGraph(Diag::Node(n, "the node has no op_type"), gname);
    if (Status st = CheckAttributeTypes(n, opsets); !st.ok()) return st.WithGraph(gname);
    for (const auto& o : n.output()) {
      if (o.empty()) continue;
      if (!defined.insert(o).second)
        return InGraph(Diag::Node(n, "output '" + o + "' is already defined in the graph (names must be unique)"), gname);
      producer[o] = i;
    }
  }
  for (const auto& v : g.value_info()) NUPHAR_RETURN_IF_ERROR(CheckDims(v, gname));
  for (const auto& o : g.output()) {
    NUPHAR_RETURN_IF_ERROR(CheckDims(o, gname));
    if (!defined.count(o.name()) && !outer.count(o.name()))
      return InGraph(Diag::Msg("graph output '" + o.name() + "' is not produced by any node or input"), gname);
  }

  // Inputs in scope, and Kahn's algorithm over the node dependencies for cycles. A subgraph's
  // references to this graph's values count as inputs of the node that holds it.
  const OuterScope inner_scope{&defined, &outer};
  std::vector<int> pending(static_cast<size_t>(g.node_size()), 0);
  std::vector<std::vector<int>> users(static_cast<size_t>(g.node_size()));
  for (int i = 0; i < g.node_size(); ++i) {
    const auto& n = g.node(i);
    for (const auto& in : n.input()) {
      if (in.empty()) continue;
      if (!defined.count(in) && !outer.count(in))
        return InGraph(Diag::Node(n, "input '" + in + "' is not produced by any node, input or initializer"), gname);
      if (auto p = producer.find(in); p != producer.end()) {
        ++pending[static_cast<size_t>(i)];
        users[static_cast<size_t>(p->second)].push_back(i);
      }
    }
    for (const auto& a : n.attribute()) {
      if (a.has_t()) NUPHAR_RETURN_IF_ERROR(CheckTensor(a.t(), gname, "tensor attribute of node '" + n.name() + "',"));
      if (a.has_g()) NUPHAR_RETURN_IF_ERROR(CheckGraph(a.g(), inner_scope, opsets).WithNode(n));
      for (const auto& sg : a.graphs()) NUPHAR_RETURN_IF_ERROR(CheckGraph(sg, inner_scope, opsets).WithNode(n));
    }
  }
  std::vector<int> ready;
  for (int i = 0; i < g.node_size(); ++i)
    if (pending[static_cast<size_t>(i)] == 0) ready.push_back(i);
  int done = 0;
  while (!ready.empty()) {
    const int i = ready.back();
    ready.pop_back();
    ++done;
    for (int u : users[static_cast<size_t>(i)])
      if (--pending[static_cast<size_t>(u)] == 0) ready.push_back(u);
  }
  if (done != g.node_size()) {
    for (int i = 0; i < g.node_size(); ++i)
      if (pending[static_cast<size_t>(i)] > 0)
        return InGraph(Diag::Node(g.node(i), "the graph has a cycle through this node"), gname);
  }
  return Status::OK();
}

}  // namespace

Status CheckModelStructure(const onnx::ModelProto& model, const std::string& origin) {
  const auto& known = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  Opsets opsets;
  for (const auto& op : model.opset_import()) {
    const std::string domain = op.domain() == "ai.onnx" ? "" : op.domain();
    opsets[domain] = static_cast<int>(op.version());
    const std::string shown = domain.empty() ? "the default domain" : "domain '" + domain + "'";
    if (op.version() < 1)
      return Diag::File(origin, "the model imports opset " + std::to_string(op.version()) + " of " + shown +
                                    "; opset versions start at 1");
    // The default domain is known up to kMaxKnownOpset (graph/opset_schema.h: our own table
    // above libonnx's 17); other domains up to what libonnx registers.
    if (domain.empty()) continue;
    if (auto it = known.find(domain); it != known.end() && op.version() > it->second.second)
      return Diag::File(origin, "the model imports opset " + std::to_string(op.version()) + " of " + shown +
                                    ", newer than the ONNX this build knows (up to " + std::to_string(it->second.second) + ")");
  }
  NUPHAR_RETURN_IF_ERROR(CheckOpsetKnown(model, origin));
  Status s = CheckGraph(model.graph(), OuterScope{}, opsets);
  return s.ok() ? s : s.WithFile(origin);
}

}  // namespace nuphar
