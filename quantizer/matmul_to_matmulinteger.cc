// The quantization pass: MatMul with a constant rank-2 weight -> MatMulInteger (spec §3.3-§3.8).
//
// Before:  Y = MatMul(X, W)                       W: float32 [K, N] initializer (any enclosing graph)
// After:   Q_X, scale_X, bias_X, ΣQ_X = dynamic per-row quantization of X   (dynamic_quant.h)
//          Q_Y = MatMulInteger(Q_X, W_qparam)      (com.microsoft MatMulInteger16 for 16 bits)
//          Y   = Sum(o3, o2, o1, o0)              dequantization with W_step/W_base/W_qparam_rowsum
//          W_step, W_qparam[, W_base, W_qparam_rowsum] in the main graph; W removed once unused
// Refused (left float, one note each under --verbose): W not an initializer, not rank 2, not
//          float32, non-finite; a consumer of W that is not MatMul/Gemm input B; X known not float;
//          MatMuls outside Scan/Loop bodies under --only_for_scan.
// Errors:  one weight used with two different W-configs or symmetric flags.
#include "quantizer/matmul_quantizer.h"

#include <cstdint>
#include <cstdio>

#include "graph/tensor_data.h"
#include "quantizer/opset_upgrade.h"

namespace nuphar::quant {
namespace {

/// Elem type of `name` from value_info / inputs / outputs along the scope chain, 0 if unknown.
/// `runtime_values(graph)`: the names that shadow outer definitions in `graph`.
template <class RuntimeValues>
int32_t KnownElemType(const GraphScope* scope, const std::string& name, RuntimeValues&& runtime_values) {
  for (; scope; scope = scope->parent) {
    const onnx::GraphProto& g = *scope->graph;
    for (const auto* list : {&g.value_info(), &g.input(), &g.output()}) {
      for (const auto& vi : *list) {
        if (vi.name() == name && vi.type().has_tensor_type()) return vi.type().tensor_type().elem_type();
      }
    }
    if (runtime_values(scope->graph).count(name)) return 0;
  }
  return 0;
}

std::string InputShareKey(const std::string& x, const NodeQuantConfig& cfg) {
  // The original's key: "<X>_<Symmetric>_QuantizeBit:<b>|QuantizationType:<..>|ReservedBit:<r>".
  return x + "_" + (cfg.symmetric ? "1" : "0") + "_QuantizeBit:" + std::to_string(cfg.x.type_bits) +
         "|QuantizationType:" + (cfg.x.is_signed ? "Signed" : "Unsigned") +
         "|ReservedBit:" + std::to_string(cfg.x.reserved_bits);
}

}  // namespace

std::string GraphKey(const onnx::GraphProto* graph, const std::string& name) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%p|", static_cast<const void*>(graph));
  return buf + name;
}

MatMulQuantizer::MatMulQuantizer(onnx::ModelProto* model, const QuantizeOptions& options, int64_t opset,
                                 bool upgrade_to_opset10)
    : model_(model),
      options_(options),
      upgrade_to_opset10_(upgrade_to_opset10),
      uses_(*model, UseCounts::Record::kConsumers) {
  forms_.opset = opset;
  for (size_t i = 0; i < options.node_configs.size(); ++i) node_config_index_[options.node_configs[i].first] = i;
}

std::vector<std::string> MatMulQuantizer::TargetOpTypes() const {
  if (upgrade_to_opset10_) return {"MatMul", "Gemm", "Slice", "TopK"};
  return {"MatMul", "Gemm"};
}

const std::unordered_set<std::string>& MatMulQuantizer::RuntimeValues(const onnx::GraphProto* graph) {
  auto [it, inserted] = runtime_values_.try_emplace(graph);
  if (inserted) {
    for (const auto& in : graph->input()) it->second.insert(in.name());
    for (const auto& node : graph->node()) {
      for (const auto& out : node.output()) it->second.insert(out);
    }
  }
  return it->second;
}

Expected<Effect> MatMulQuantizer::Rewrite(RewriteContext& ctx, const onnx::NodeProto& node) {
  const GraphScope& scope = ctx.scope();
  NodeBuilder& emit = ctx.builder();
  names_ = &ctx.names();
  RuntimeValues(scope.graph);  // taken before any rewrite of this graph is spliced in
  if (upgrade_to_opset10_ && UpgradeNodeToOpset10(node, emit)) {
    report_.messages.push_back("Converted " + node.op_type() + " '" + node.name() + "' in " + scope.path +
                               " to its opset-10 form");
    return Effect::Replaced();
  }
  if (node.op_type() != "MatMul" && node.op_type() != "Gemm") return Effect::Kept("");
  if (options_.only_for_scan && !scope.in_loop_body) {
    Skip(node, scope, "outside Scan/Loop bodies (--only_for_scan)");
    return Effect::Kept("");
  }
  InputTable* inputs = options_.share_input_quantization ? &input_tables_[scope.graph] : nullptr;
  auto replaced = node.op_type() == "MatMul" ? QuantizeMatMul(node, scope, emit, inputs)
                                             : QuantizeGemm(node, scope, emit, inputs);
  if (!replaced.ok()) return replaced.status().WithGraph(scope.path);
  return *replaced ? Effect::Replaced() : Effect::Kept("");
}

WeightRef MatMulQuantizer::FindInitializer(const GraphScope& scope, const std::string& name) {
  for (const GraphScope* s = &scope; s; s = s->parent) {
    for (const auto& t : s->graph->initializer()) {
      if (t.name() == name) return WeightRef{s->graph, &t};
    }
    // A graph input or node output of this graph shadows outer initializers.
    if (RuntimeValues(s->graph).count(name)) return {};
  }
  return {};
}

std::string MatMulQuantizer::ConsumerProblem(const std::string& weight) const {
  for (const Consumer& use : uses_.Consumers(weight)) {
    if ((use.op_type != "MatMul" && use.op_type != "Gemm") || use.input_index != 1) {
      return "weight '" + weight + "' is also read by a " + use.op_type + " (input " +
             std::to_string(use.input_index) + ")";
    }
  }
  return "";
}

Expected<NodeQuantConfig> MatMulQuantizer::ConfigFor(const std::string& output) {
  auto it = node_config_index_.find(output);
  if (it != node_config_index_.end()) return options_.node_configs[it->second].second;
  if (!options_.node_configs.empty()) {
    report_.messages.push_back("Warning: qcfg is not found for node with output: " + output +
                               ", fall back to default qcfg.");
  }
  NUPHAR_RETURN_IF_ERROR(ValidateNodeConfig(options_.default_config, "default qcfg"));
  return options_.default_config;
}

Expected<const ConvertedWeight*> MatMulQuantizer::ConvertWeight(const WeightRef& weight, bool transposed,
                                                                const NodeQuantConfig& cfg, std::string* skip) {
  const onnx::TensorProto& t = *weight.tensor;
  const std::string key = GraphKey(weight.graph, t.name()) + (transposed ? "|T" : "");
  if (auto it = converted_.find(key); it != converted_.end()) {
    if (!(it->second.w_cfg == cfg.w) || it->second.symmetric != cfg.symmetric) {
      return Diag::Msg("weight '" + t.name() +
                       "' is shared by MatMuls with different quantization configs (W config or Symmetric differ)");
    }
    return &it->second;
  }
  if (t.dims_size() != 2) {
    *skip = "weight '" + t.name() + "' has rank " + std::to_string(t.dims_size()) + ", not 2";
    return nullptr;
  }
  if (t.data_type() != onnx::TensorProto::FLOAT) {
    *skip = "weight '" + t.name() + "' is " + DTypeName(static_cast<DType>(t.data_type())) + ", not float32";
    return nullptr;
  }
  int64_t k = t.dims(0), n = t.dims(1);
  if (k == 0 || n == 0) {
    *skip = "weight '" + t.name() + "' is empty";
    return nullptr;
  }
  // Dims of a broken or hostile file: no k * n below may overflow (found by tests/fuzz).
  const int64_t elements = NumElements({k, n});
  if (k < 0 || n < 0 || elements > static_cast<int64_t>(SIZE_MAX / sizeof(float))) {
    *skip = "weight '" + t.name() + "' has dims [" + std::to_string(k) + ", " + std::to_string(n) + "]";
    return nullptr;
  }
  // Read raw_data in place (the common case, and the big one); typed fields are copied.
  std::vector<float> copy;
  const float* data = nullptr;
  if (t.has_raw_data() && t.raw_data().size() == static_cast<size_t>(elements) * sizeof(float)) {
    data = reinterpret_cast<const float*>(t.raw_data().data());
  } else {
    auto values = ReadTensor<float>(t);
    if (!values.ok()) return values.status();
    copy = std::move(*values);
    data = copy.data();
  }
  if (transposed) {
    std::vector<float> tr(static_cast<size_t>(k * n));
    for (int64_t r = 0; r < k; ++r) {
      for (int64_t c = 0; c < n; ++c) tr[c * k + r] = data[r * n + c];
    }
    copy.swap(tr);
    data = copy.data();
    std::swap(k, n);
  }
  auto qw = QuantizeWeightPerColumn(data, k, n, cfg.w, cfg.symmetric);
  if (!qw.ok()) {
    *skip = "weight '" + t.name() + "': " + qw.diag().reason;
    return nullptr;
  }
  ConvertedWeight cw;
  cw.w_cfg = cfg.w;
  cw.symmetric = cfg.symmetric;
  cw.n = n;
  cw.names.k = k;
  if (options_.compute_weight_error) cw.error = MeasureWeightError(data, *qw, cfg.w);

  // Main-graph initializers, in the original's order: step, qparam[, base, rowsum].
  const std::string base_name = transposed ? t.name() + "_trans" : t.name();
  onnx::GraphProto* main = model_->mutable_graph();
  cw.names.step = names_->Fixed(base_name + "_step");
  *main->add_initializer() = MakeTensor<float>(cw.names.step, {n}, qw->step);
  cw.names.qparam = names_->Fixed(base_name + "_qparam");
  onnx::TensorProto* qparam = main->add_initializer();  // filled by move: the biggest tensor
  qparam->set_name(cw.names.qparam);
  qparam->set_data_type(StorageDataType(cfg.w));
  qparam->add_dims(k);
  qparam->add_dims(n);
  qparam->set_raw_data(std::move(qw->q_bytes));
  if (!cfg.symmetric) {
    cw.names.base = names_->Fixed(base_name + "_base");
    *main->add_initializer() = MakeTensor<float>(cw.names.base, {n}, qw->base);
    cw.names.rowsum = names_->Fixed(base_name + "_qparam_rowsum");
    *main->add_initializer() = MakeTensor<float>(cw.names.rowsum, {n}, qw->rowsum);
  }
  removable_.emplace_back(weight.graph, t.name());
  return &converted_.emplace(key, std::move(cw)).first->second;
}

void MatMulQuantizer::EmitQuantized(NodeBuilder& emit, const std::string& prefix, const std::string& x,
                                    const ConvertedWeight& w, const NodeQuantConfig& cfg, const std::string& y,
                                    InputTable* inputs) {
  emit.set_prefix(prefix);
  const std::string share_key = InputShareKey(x, cfg);
  QuantizedInput qx;
  if (inputs && inputs->count(share_key)) {
    qx = inputs->at(share_key);
  } else {
    qx = EmitInputQuantization(emit, x, cfg, forms_, options_.guard_zero_delta);
    if (inputs) (*inputs)[share_key] = qx;
  }
  EmitIntegerMatMul(emit, qx, w.names, cfg, y);
}

void MatMulQuantizer::RecordQuantized(const onnx::NodeProto& node, const GraphScope& scope, const std::string& weight,
                                      const ConvertedWeight& w, const NodeQuantConfig& cfg, bool reused) {
  QuantizedMatMul q;
  q.graph = scope.path;
  q.node = node.name();
  q.op = node.op_type();
  q.output = node.output(0);
  q.weight = weight;
  q.k = w.names.k;
  q.n = w.n;
  q.config = cfg;
  q.weight_reused = reused;
  q.weight_max_abs_error = w.error.max_abs_error;
  q.weight_max_abs = w.error.max_abs;
  q.weight_rel_l2_error = w.error.rel_l2_error;
  report_.quantized.push_back(std::move(q));
  report_.used_configs.emplace_back(node.output(0), cfg);
}

void MatMulQuantizer::Skip(const onnx::NodeProto& node, const GraphScope& scope, const std::string& reason) {
  report_.skipped.push_back(scope.path + ": " + node.op_type() + " '" + node.name() + "' left float: " + reason);
}

Expected<bool> MatMulQuantizer::QuantizeMatMul(const onnx::NodeProto& node, const GraphScope& scope,
                                               NodeBuilder& emit, InputTable* inputs) {
  if (node.input_size() != 2 || node.output_size() != 1) {
    Skip(node, scope, "unexpected number of inputs or outputs");
    return false;
  }
  const std::string& w_name = node.input(1);
  NUPHAR_ASSIGN_OR_RETURN(const WeightChoice w, ChooseWeight(node, scope, w_name, "weight", false, node.input(0)));
  if (!w.weight) return false;
  EmitQuantized(emit, node.name(), node.input(0), *w.weight, w.cfg, node.output(0), inputs);
  RecordQuantized(node, scope, w_name, *w.weight, w.cfg, w.reused);
  return true;
}

Expected<MatMulQuantizer::WeightChoice> MatMulQuantizer::ChooseWeight(const onnx::NodeProto& node,
                                                                      const GraphScope& scope,
                                                                      const std::string& w_name, const char* w_label,
                                                                      bool transposed, const std::string& float_input) {
  WeightChoice choice;
  if (std::string problem = ConsumerProblem(w_name); !problem.empty()) {
    Skip(node, scope, problem);
    return choice;
  }
  auto cfg = ConfigFor(node.output(0));
  if (!cfg.ok()) return cfg.status().WithNode(node);
  choice.cfg = *cfg;
  const WeightRef weight = FindInitializer(scope, w_name);
  if (!weight.tensor) {
    Skip(node, scope, std::string(w_label) + " '" + w_name + "' is not an initializer");
    return choice;
  }
  if (!float_input.empty()) {
    auto runtime_values = [this](const onnx::GraphProto* g) -> const auto& { return RuntimeValues(g); };
    const int32_t x_type = KnownElemType(&scope, float_input, runtime_values);
    if (x_type != 0 && x_type != onnx::TensorProto::FLOAT) {
      Skip(node, scope, "input '" + float_input + "' is not float32");
      return choice;
    }
  }
  choice.reused = converted_.count(GraphKey(weight.graph, w_name) + (transposed ? "|T" : "")) != 0;
  std::string skip;
  auto converted = ConvertWeight(weight, transposed, choice.cfg, &skip);
  if (!converted.ok()) return converted.status().WithNode(node);
  if (!*converted) Skip(node, scope, skip);
  choice.weight = *converted;
  return choice;
}

Status MatMulQuantizer::Finish(onnx::ModelProto& model) {
  // A float consumer may remain (e.g. --only_for_scan): then the weight stays.
  DeadValueOptions dead;
  dead.follow_producers = false;
  dead.drop_value_info = false;
  dead.drop_subgraph_inputs = true;
  RemoveDeadValues(model, removable_, dead);
  return Status::OK();
}

}  // namespace nuphar::quant
