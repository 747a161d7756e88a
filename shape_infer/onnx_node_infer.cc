// libonnx per-node inference (spec S5, §2.4) and the constants it is given as input data.
//
// Each node is inferred alone: through its schema's inference function when it has one and no
// subgraph attribute (fast path), otherwise through onnx::shape_inference::InferShapes on a
// one-node graph (which also expands function ops). Inputs carry the current types, outputs are name-only placeholders (so sequence/optional
// outputs do not clash, §6 item 5), every small known constant (initializer, Constant output,
// fully literal tracked value) is attached as an initializer so ONNX can read shape inputs
// (§6 item 3). An exception from libonnx means "no information" for this node.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cmath>
#include <unordered_set>

#include "graph/diagnostics.h"
#include "graph/onnx_infer_guard.h"

#include "graph/tensor_data.h"
#include "shape_infer/graph_inferencer.h"

namespace nuphar::shape_infer {
namespace {

constexpr size_t kMaxConstantElements = 4096;  // shape-like data only; weights are never needed

size_t ElementCount(const onnx::TensorProto& t) {
  size_t n = 1;
  for (int64_t d : t.dims()) n *= static_cast<size_t>(std::max<int64_t>(d, 0));
  return n;
}

// A literal tracked value as a tensor of the declared integer type, for ONNX's input data.
std::optional<onnx::TensorProto> TensorFromTracked(const std::string& name, const TrackedValue& v, int32_t elem) {
  if (v.is_float || !v.AllLiteral() || v.values.size() > kMaxConstantElements) return std::nullopt;
  std::vector<int64_t> ints;
  for (const auto& e : v.values) {
    auto i = e.AsInt();
    if (!i) return std::nullopt;
    ints.push_back(*i);
  }
  if (elem == static_cast<int32_t>(DType::kInt64)) return MakeTensor<int64_t>(name, v.dims, ints);
  if (elem == static_cast<int32_t>(DType::kInt32)) {
    std::vector<int32_t> narrow(ints.begin(), ints.end());
    return MakeTensor<int32_t>(name, v.dims, narrow);
  }
  return std::nullopt;
}

}  // namespace

// Calls the schema's inference function directly when the node has no subgraph attribute and
// its schema has one (the whole-graph InferShapes would do the same, at several times the cost:
// spec §6 item 12). Returns false when the one-node-graph path must be used instead.
bool GraphInferencer::RunSchemaInference(const onnx::NodeProto& node) {
  for (const auto& a : node.attribute())
    if (a.has_g() || a.graphs_size() > 0) return false;
  std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  auto op = root_->opsets.find(domain);
  if (op == root_->opsets.end()) return false;
  const onnx::OpSchema* schema = GuardedSchemaRegistry()->GetSchema(node.op_type(), op->second, domain);
  if (!schema || !schema->has_type_and_shape_inference_function()) return false;

  std::vector<onnx::TypeProto> types;
  std::vector<onnx::TensorProto> synthesized;
  types.reserve(static_cast<size_t>(node.input_size()));
  synthesized.reserve(static_cast<size_t>(node.input_size()));
  std::unordered_map<std::string, onnx::TypeProto*> types_by_name;
  std::unordered_map<std::string, const onnx::TensorProto*> data_by_name;
  std::unordered_map<std::string, const onnx::SparseTensorProto*> sparse_by_name;
  for (const auto& in : node.input()) {
    if (in.empty() || types_by_name.count(in)) continue;
    const onnx::ValueInfoProto* vi = FindValueInfo(in);
    if (!vi || !vi->has_type()) continue;
    types.push_back(vi->type());
    types_by_name[in] = &types.back();
    if (const onnx::TensorProto* c = FindConstant(in)) {
      if (ElementCount(*c) <= kMaxConstantElements && c->data_location() != onnx::TensorProto::EXTERNAL)
        data_by_name[in] = c;
    } else if (const TrackedValue* t = FindTracked(in)) {
      int32_t elem = vi->type().has_tensor_type() ? vi->type().tensor_type().elem_type() : 0;
      if (auto tensor = TensorFromTracked(in, *t, elem)) {
        synthesized.push_back(std::move(*tensor));
        data_by_name[in] = &synthesized.back();
      }
    }
  }
  // libonnx 1.12's inference functions dereference the type of an input they expect without
  // checking it (found by tests/fuzz: propagateShape on a null type). An input whose type is not
  // known yet therefore leaves the node to a later pass or to the symbolic handlers.
  for (const auto& in : node.input())
    if (!in.empty() && !types_by_name.count(in)) return true;
  // Nor do they check that a required input is present: an empty name where the schema has a
  // single or variadic input is a null type to them (found by tests/fuzz: EyeLike with input "").
  const auto& formal = schema->inputs();
  for (int i = 0; i < node.input_size(); ++i) {
    if (!node.input(i).empty() || formal.empty()) continue;
    const size_t f = std::min(static_cast<size_t>(i), formal.size() - 1);
    if (formal[f].GetOption() != onnx::OpSchema::Optional) return true;
  }
  // Or output counts: Split with no outputs divides its axis by zero (found by tests/fuzz).
  if (node.input_size() < schema->min_input() || node.input_size() > schema->max_input() ||
      node.output_size() < schema->min_output() || node.output_size() > schema->max_output())
    return true;
  onnx::NodeProto copy = node;
  try {
    onnx::shape_inference::InferenceContextImpl ctx(copy, types_by_name, data_by_name, sparse_by_name);
    schema->GetTypeAndShapeInferenceFunction()(ctx);
    for (int i = 0; i < node.output_size(); ++i) {
      const std::string& name = node.output(i);
      if (name.empty()) continue;
      const onnx::TypeProto* t = ctx.getOutputType(static_cast<size_t>(i));
      if (t && t->value_case() != onnx::TypeProto::VALUE_NOT_SET) *MutableValueInfo(name).mutable_type() = *t;
    }
  } catch (const std::exception& e) {
    if (root_->options.verbose > 0)
      ReportDiagnostic(Severity::kNote, "shape_infer: note: ONNX inference of " + node.op_type() + " '" +
                                            node.name() + "' failed: " + e.what());
  }
  return true;
}

void GraphInferencer::RunOnnxInference(const onnx::NodeProto& node) {
  if (RunSchemaInference(node)) return;
  // The one-node graph path has the same trust in input and output counts (see above).
  const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
  if (auto op = root_->opsets.find(domain); op != root_->opsets.end()) {
    const onnx::OpSchema* schema = GuardedSchemaRegistry()->GetSchema(node.op_type(), op->second, domain);
    if (schema && (node.input_size() < schema->min_input() || node.input_size() > schema->max_input() ||
                   node.output_size() < schema->min_output() || node.output_size() > schema->max_output()))
      return;
  }
  onnx::GraphProto g;
  *g.add_node() = node;
  std::unordered_set<std::string> added;
  for (const auto& in : node.input()) {
    if (in.empty() || !added.insert(in).second) continue;
    const onnx::ValueInfoProto* vi = FindValueInfo(in);
    if (!vi || !vi->has_type()) continue;
    *g.add_input() = *vi;
    if (const onnx::TensorProto* c = FindConstant(in)) {
      if (ElementCount(*c) <= kMaxConstantElements && c->data_location() != onnx::TensorProto::EXTERNAL) {
        *g.add_initializer() = *c;
        g.mutable_initializer(g.initializer_size() - 1)->set_name(in);
      }
    } else if (const TrackedValue* t = FindTracked(in)) {
      int32_t elem = vi->type().has_tensor_type() ? vi->type().tensor_type().elem_type() : 0;
      if (auto tensor = TensorFromTracked(in, *t, elem)) *g.add_initializer() = std::move(*tensor);
    }
  }
  std::unordered_set<std::string> outputs;
  for (const auto& o : node.output()) {
    if (o.empty() || !outputs.insert(o).second) continue;
    g.add_output()->set_name(o);
  }
  try {
    onnx::shape_inference::InferShapes(&g, root_->opsets, GuardedSchemaRegistry(),
                                       onnx::ShapeInferenceOptions(false, 0, false));
  } catch (const std::exception& e) {
    if (root_->options.verbose > 0)
      ReportDiagnostic(Severity::kNote, "shape_infer: note: ONNX inference of " + node.op_type() + " '" +
                                            node.name() + "' failed: " + e.what());
  }
  for (const auto& vi : g.value_info())
    if (outputs.count(vi.name())) MutableValueInfo(vi.name()) = vi;
}

std::optional<sym::Rational> ExactRational(double v) {
  if (!std::isfinite(v)) return std::nullopt;
  if (v == 0) return sym::Rational(0);
  int exp = 0;
  double m = std::frexp(v, &exp);  // v = m * 2^exp, 0.5 <= |m| < 1
  int64_t mant = static_cast<int64_t>(std::ldexp(m, 53));
  exp -= 53;
  while ((mant % 2) == 0 && exp < 0) mant /= 2, ++exp;
  try {
    if (exp >= 0) {
      if (exp > 62) return std::nullopt;
      return sym::Rational(mant) * sym::Rational(int64_t{1} << exp);
    }
    if (-exp > 62) return std::nullopt;
    return sym::Rational(mant, int64_t{1} << -exp);
  } catch (const sym::SymOverflow&) {
    return std::nullopt;
  }
}

std::optional<TrackedValue> TrackedFromTensor(const onnx::TensorProto& t, size_t max_elements) {
  if (ElementCount(t) > max_elements || t.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  TrackedValue v;
  v.dims.assign(t.dims().begin(), t.dims().end());
  auto dtype = static_cast<DType>(t.data_type());
  if (dtype == DType::kFloat || dtype == DType::kDouble || dtype == DType::kFloat16 || dtype == DType::kBfloat16) {
    auto values = ReadTensorAsDouble(t);
    if (!values.ok()) return std::nullopt;
    for (double d : *values) {
      auto r = ExactRational(d);
      if (!r) return std::nullopt;
      v.values.emplace_back(*r);
    }
    v.is_float = true;
    return v;
  }
  if (!IsNumeric(dtype) && dtype != DType::kBool) return std::nullopt;
  auto values = ReadTensorAsInt64(t);
  if (!values.ok()) return std::nullopt;
  for (int64_t i : *values) v.values.emplace_back(i);
  return v;
}

}  // namespace nuphar::shape_infer
