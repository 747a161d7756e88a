// NodeContext: the handler-facing view of one node (types, values, attributes, symbols, merges).
#include "shape_infer/ops/node_context.h"

#include <onnx/onnx_pb.h>

#include <algorithm>

#include "graph/diagnostics.h"
#include "graph/node_builder.h"

namespace nuphar::shape_infer {

int NodeContext::Opset() const { return graph_.root().Opset(""); }

size_t NodeContext::NumInputs() const { return static_cast<size_t>(node_.input_size()); }
bool NodeContext::HasInput(size_t i) const { return i < NumInputs() && !node_.input(static_cast<int>(i)).empty(); }
const std::string& NodeContext::InputName(size_t i) const { return node_.input(static_cast<int>(i)); }
size_t NodeContext::NumOutputs() const { return static_cast<size_t>(node_.output_size()); }
bool NodeContext::HasOutput(size_t j) const { return j < NumOutputs() && !node_.output(static_cast<int>(j)).empty(); }

const onnx::TypeProto* NodeContext::InputType(size_t i) const {
  if (!HasInput(i)) return nullptr;
  const onnx::ValueInfoProto* vi = graph_.FindValueInfo(InputName(i));
  return vi && vi->has_type() ? &vi->type() : nullptr;
}

std::optional<SymShape> NodeContext::InputShape(size_t i) const {
  const onnx::TypeProto* t = InputType(i);
  if (!t) return std::nullopt;
  return ShapeOfType(*t, graph_.root().symbols);
}

int32_t NodeContext::InputElemType(size_t i) const {
  const onnx::TypeProto* t = InputType(i);
  return t && t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
}

std::optional<SymShape> NodeContext::OutputShape(size_t j) const {
  if (!HasOutput(j)) return std::nullopt;
  const onnx::ValueInfoProto* vi = graph_.FindValueInfo(node_.output(static_cast<int>(j)));
  if (!vi || !vi->has_type()) return std::nullopt;
  return ShapeOfType(vi->type(), graph_.root().symbols);
}

int32_t NodeContext::OutputElemType(size_t j) const {
  if (!HasOutput(j)) return 0;
  const onnx::ValueInfoProto* vi = graph_.FindValueInfo(node_.output(static_cast<int>(j)));
  return vi && vi->type().has_tensor_type() ? vi->type().tensor_type().elem_type() : 0;
}

void NodeContext::SetOutput(size_t j, int32_t elem_type, const std::optional<SymShape>& shape) {
  if (!HasOutput(j)) return;
  onnx::ValueInfoProto& vi = graph_.MutableValueInfo(node_.output(static_cast<int>(j)));
  vi.clear_type();
  WriteTensorType(vi.mutable_type(), elem_type, shape, graph_.root().symbols, options().verbose);
}

void NodeContext::SetOutputType(size_t j, const onnx::TypeProto& type) {
  if (!HasOutput(j)) return;
  *graph_.MutableValueInfo(node_.output(static_cast<int>(j))).mutable_type() = type;
}

const TrackedValue* NodeContext::InputValue(size_t i) const {
  if (!HasInput(i)) return nullptr;
  return graph_.FindTracked(InputName(i));
}

std::optional<std::vector<sym::Expr>> NodeContext::InputExprs(size_t i) const {
  const TrackedValue* v = InputValue(i);
  if (!v || v->dims.size() > 1) return std::nullopt;
  for (const auto& e : v->values)
    if (!e.IsIntegerValued() && !e.IsNumber()) return std::nullopt;
  return v->values;
}

std::optional<std::vector<int64_t>> NodeContext::InputInts(size_t i) const {
  auto exprs = InputExprs(i);
  if (!exprs) return std::nullopt;
  std::vector<int64_t> out;
  for (const auto& e : *exprs) {
    auto v = e.AsInt();
    if (!v) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

void NodeContext::SetOutputValue(size_t j, TrackedValue v) {
  if (HasOutput(j)) graph_.SetTracked(node_.output(static_cast<int>(j)), std::move(v));
}

sym::Expr NodeContext::NewSymbol(size_t j, size_t axis) const {
  std::string name = node_.op_type() + std::to_string(node_index_) + graph_.tag() + "_o" + std::to_string(j) +
                     "__d" + std::to_string(axis);
  return graph_.root().symbols.FreshSymbol(name);
}

SymShape NodeContext::NewSymbols(size_t j, size_t rank) const {
  SymShape s;
  for (size_t a = 0; a < rank; ++a) s.emplace_back(NewSymbol(j, a));
  return s;
}

std::optional<size_t> NodeContext::ShapeInputLength(size_t i) const {
  auto shape = InputShape(i);
  if (!shape || shape->size() != 1 || !(*shape)[0]) return std::nullopt;
  auto n = (*shape)[0]->AsInt();
  if (!n || *n < 0 || *n > kMaxSymbolicRank) return std::nullopt;
  return static_cast<size_t>(*n);
}

// The attribute readers are graph/node_builder.h's, bound to this node.
const onnx::AttributeProto* NodeContext::Attr(const std::string& name) const { return FindAttr(node_, name); }
int64_t NodeContext::AttrInt(const std::string& name, int64_t def) const { return nuphar::AttrInt(node_, name, def); }
float NodeContext::AttrFloat(const std::string& name, float def) const { return nuphar::AttrFloat(node_, name, def); }
std::string NodeContext::AttrString(const std::string& name, const std::string& def) const {
  return nuphar::AttrString(node_, name, def);
}
std::optional<std::vector<int64_t>> NodeContext::AttrInts(const std::string& name) const {
  return nuphar::AttrInts(node_, name);
}

void NodeContext::SuggestMerge(const std::vector<sym::Expr>& dims) const {
  RootState& root = graph_.root();
  bool conflict = false;
  if (root.symbols.SuggestMerge(dims, &conflict)) {
    root.merges_changed = true;
    if (options().verbose > 0) {
      std::string line = "shape_infer: warning: " + node_.op_type() + " '" + node_.name() + "' merges dims";
      for (const auto& d : dims) line += " " + d.ToString();
      if (!root.options.auto_merge) line += " (recorded; apply with --auto_merge)";
      ReportDiagnostic(Severity::kWarning, line);
    }
  }
  if (conflict && options().verbose > 0) Warn("conflicting literal dims cannot be merged");
}

SymDim NodeContext::MergeDims(const std::vector<SymDim>& dims) const {
  if (dims.empty()) return std::nullopt;
  for (const auto& d : dims)
    if (!d) return std::nullopt;
  if (std::all_of(dims.begin(), dims.end(), [&](const SymDim& d) { return *d == *dims[0]; })) return dims[0];
  const SymbolTable& symbols = graph_.root().symbols;
  const bool auto_merge = options().auto_merge;
  auto literal = std::find_if(dims.begin(), dims.end(), [](const SymDim& d) { return d->IsNumber(); });
  if (literal != dims.end()) {
    std::vector<sym::Expr> all;
    for (const auto& d : dims) all.push_back(*d);
    if (!auto_merge) return std::nullopt;
    for (const auto& d : dims)
      if (d->IsNumber() && *d != **literal) return std::nullopt;  // two different literals
    SuggestMerge(all);
    return *literal;
  }
  // Recorded merges count only when they are applied (auto_merge); otherwise a conflict stays.
  auto mapped = [&](const sym::Expr& e) { return auto_merge ? symbols.ApplyMerges(e) : e; };
  sym::Expr first = mapped(*dims[0]);
  for (const auto& d : dims)
    if (mapped(*d) != first) {
      if (auto_merge) {
        std::vector<sym::Expr> all;
        for (const auto& x : dims) all.push_back(*x);
        SuggestMerge(all);
      }
      return std::nullopt;
    }
  return first;
}

SymShape NodeContext::Broadcast(const SymShape& a, const SymShape& b) const {
  size_t rank = std::max(a.size(), b.size());
  SymShape out(rank);
  for (size_t k = 0; k < rank; ++k) {
    SymDim x = k + a.size() >= rank ? a[k + a.size() - rank] : SymDim(sym::Expr(1));
    SymDim y = k + b.size() >= rank ? b[k + b.size() - rank] : SymDim(sym::Expr(1));
    if (x && (*x == sym::Expr(1) || (y && *x == *y))) out[k] = y;
    else if (y && *y == sym::Expr(1)) out[k] = x;
    else if (!x || !y) out[k] = std::nullopt;
    else {
      out[k] = MergeDims({x, y});
      if (!out[k] && options().verbose > 0) Warn("unsupported broadcast between " + x->ToString() + " " + y->ToString());
    }
  }
  return out;
}

onnx::GraphProto* NodeContext::MutableGraphAttr(const std::string& name) const {
  onnx::NodeProto* node = graph_.graph().mutable_node(static_cast<int>(node_index_));
  for (auto& a : *node->mutable_attribute())
    if (a.name() == name && a.has_g()) return a.mutable_g();
  return nullptr;
}

void NodeContext::Warn(const std::string& msg) const {
  if (options().verbose > 0)
    ReportDiagnostic(Severity::kWarning, "shape_infer: warning: " + node_.op_type() + " '" + node_.name() + "': " + msg);
}

Status NodeContext::Error(const std::string& msg) const { return Diag::Node(node_, msg); }

std::optional<int64_t> NormalizeAxis(int64_t axis, int64_t rank) {
  if (axis < -rank || axis >= rank) return std::nullopt;
  return axis < 0 ? axis + rank : axis;
}

}  // namespace nuphar::shape_infer
