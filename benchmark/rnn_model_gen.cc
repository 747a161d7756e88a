// Generator of rnn_benchmark's stacked RNN models (benchmark/rnn_model_gen.h).
#include "benchmark/rnn_model_gen.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <vector>

#include "graph/node_builder.h"
#include "graph/numpy_random.h"
#include "graph/tensor_data.h"

namespace nuphar::bench {
namespace {

void SetDim(onnx::TensorShapeProto::Dimension* d, const std::string& v) {
  const bool numeric = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
  if (numeric) d->set_dim_value(std::stoll(v));
  else d->set_dim_param(v);
}

void AddValueInfo(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* list, const std::string& name,
                  const std::vector<std::string>& dims) {
  auto* vi = list->Add();
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  for (const auto& d : dims) SetDim(tt->mutable_shape()->add_dim(), d);
}

onnx::NodeProto* AddNode(onnx::GraphProto* g, const std::string& op, const std::string& name,
                         const std::vector<std::string>& inputs, const std::string& output) {
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(name);
  for (const auto& i : inputs) n->add_input(i);
  n->add_output(output);
  return n;
}

}  // namespace

std::string RnnModelBaseName(const RnnModelSpec& s) {
  return s.op + "_i" + std::to_string(s.input_dim) + "_h" + std::to_string(s.hidden_dim) + "_" +
         (s.bidirectional ? "bi" : "") + "_l" + std::to_string(s.layers) + "_" + (s.batch == "1" ? "no_batch" : "batched");
}

Expected<onnx::ModelProto> MakeRnnModel(const RnnModelSpec& spec) {
  std::string op = spec.op;
  std::transform(op.begin(), op.end(), op.begin(), [](unsigned char c) { return std::tolower(c); });
  const int64_t gates = op == "lstm" ? 4 : op == "gru" ? 3 : op == "rnn" ? 1 : 0;
  if (gates == 0) return Diag::Msg("rnn_type '" + spec.op + "' is not one of lstm, gru, rnn");
  if (spec.input_dim < 1 || spec.hidden_dim < 1 || spec.layers < 1)
    return Diag::Msg("input_dim, hidden_dim and layers must be at least 1");
  if (spec.opset < 7) return Diag::Msg("opset " + std::to_string(spec.opset) + " is below 7, the first with LSTM/GRU/RNN v7");
  if (spec.seq_len.empty() || spec.batch.empty()) return Diag::Msg("seq_len and batch must be a number or a name");
  const int64_t H = spec.hidden_dim, nd = spec.bidirectional ? 2 : 1;
  const std::string S = spec.seq_len, Bt = spec.batch;
  NumpyRandomState rng(spec.seed);
  const double scale = 1.0 / std::sqrt(static_cast<double>(H));
  auto draw = [&](const std::string& name, std::vector<int64_t> dims) {
    std::vector<float> v(static_cast<size_t>(NumElements(dims)));
    for (float& x : v) x = static_cast<float>(spec.rand01 ? rng.RandomSample() : rng.Uniform(-scale, scale));
    return MakeTensor(name, dims, v);
  };

  onnx::ModelProto model;
  model.set_ir_version(7);  // every ONNX Runtime since 1.6, every opset <= 13 (as make_rnn_model.py)
  model.set_producer_name("nuphar rnn_benchmark");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(spec.opset);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name(op + "_i" + std::to_string(spec.input_dim) + "_h" + std::to_string(H) + "_l" + std::to_string(spec.layers));
  AddValueInfo(g->mutable_input(), "input", {S, Bt, std::to_string(spec.input_dim)});
  *g->add_initializer() = MakeTensor("shape", std::vector<int64_t>{3}, std::vector<int64_t>{0, 0, -1});

  std::string x = "input";
  std::string upper = op;
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  for (int64_t i = 0; i < spec.layers; ++i) {
    const std::string k = std::to_string(i);
    const int64_t in = i == 0 ? spec.input_dim : H * nd;
    *g->add_initializer() = draw("W" + k, {nd, gates * H, in});
    *g->add_initializer() = draw("R" + k, {nd, gates * H, H});
    *g->add_initializer() = draw("B" + k, {nd, 2 * gates * H});
    auto* rnn = AddNode(g, upper, op + k, {x, "W" + k, "R" + k, "B" + k}, "layer_output_" + k);
    SetAttr(*rnn, "hidden_size", H);
    SetAttr(*rnn, "direction", std::string(spec.bidirectional ? "bidirectional" : "forward"));
    if (op == "gru" && spec.linear_before_reset) SetAttr(*rnn, "linear_before_reset", int64_t{1});
    auto* tr = AddNode(g, "Transpose", "transpose" + k, {"layer_output_" + k}, "transposed_output_" + k);
    SetAttr(*tr, "perm", std::vector<int64_t>{0, 2, 1, 3});
    AddNode(g, "Reshape", "reshape" + k, {"transposed_output_" + k, "shape"}, "reshaped_output_" + k);
    AddValueInfo(g->mutable_value_info(), "layer_output_" + k, {S, std::to_string(nd), Bt, std::to_string(H)});
    AddValueInfo(g->mutable_value_info(), "transposed_output_" + k, {S, Bt, std::to_string(nd), std::to_string(H)});
    x = "reshaped_output_" + k;
    if (i + 1 < spec.layers) AddValueInfo(g->mutable_value_info(), x, {S, Bt, std::to_string(nd * H)});
  }
  AddValueInfo(g->mutable_output(), x, {S, Bt, std::to_string(nd * H)});
  return model;
}

}  // namespace nuphar::bench
