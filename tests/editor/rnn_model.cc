// RnnCase model builder (tests/editor/rnn_model.h).
#include "tests/editor/rnn_model.h"

#include <random>

#include "graph/node_builder.h"
#include "graph/tensor_data.h"
#include "tests/editor/editor_test_util.h"

namespace nuphar::editor::testing {
namespace {

int Gates(const std::string& op) { return op == "LSTM" ? 4 : op == "GRU" ? 3 : 1; }

std::vector<float> Uniform(size_t n, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-0.6f, 0.6f);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

void AddInput(onnx::GraphProto& g, const std::string& name, const std::vector<DimSpec>& dims) {
  NameTable names;
  NodeBuilder b(&g, &names, 13);
  b.AddValueInfo(name, DType::kFloat, dims, g.mutable_input());
}

}  // namespace

std::string CaseName(const RnnCase& c) {
  std::string s = c.op + (c.op == "GRU" ? (c.linear_before_reset ? "lbr1" : "lbr0") : "") + "_" + c.direction + "_L" +
                  std::to_string(c.layers) + (c.seq_lens ? "_seq" : "_noseq") + "_" + c.init +
                  (c.symbolic_batch ? "_symB" : "_fixB") + "_op" + std::to_string(c.opset);
  return s;
}

onnx::ModelProto MakeRnnModel(const RnnCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  const int64_t nd = c.direction == "bidirectional" ? 2 : 1, G = Gates(c.op), H = c.hidden;
  onnx::ModelProto model;
  model.set_ir_version(c.opset >= 15 ? 8 : c.opset >= 12 ? 7 : c.opset == 11 ? 6 : 4);
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(c.opset);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("main");
  NameTable names;
  NodeBuilder b(&g, &names, c.opset);
  const DimSpec batch = c.symbolic_batch ? DimSpec::Sym("batch") : DimSpec::Of(c.batch);
  const DimSpec seq = DimSpec::Sym("seq");
  AddInput(g, "X", c.layout == 0 ? std::vector<DimSpec>{seq, batch, DimSpec::Of(c.input)}
                                 : std::vector<DimSpec>{batch, seq, DimSpec::Of(c.input)});
  if (c.seq_lens) b.Const<int32_t>({3}, {5, 2, 3}, "seq_lens");
  std::string x = "X";
  int64_t in_dim = c.input;
  for (int l = 0; l < c.layers; ++l) {
    const std::string L = std::to_string(l);
    auto weight = [&](const std::string& name, std::vector<int64_t> dims) {
      auto values = Uniform(static_cast<size_t>(NumElements(dims)), rng);
      if (!c.weights_as_constant_chain) return b.Const<float>(dims, values, name);
      // Constant [d1, d2, ...] -> Unsqueeze(axes 0) as spox exports it (only for nd == 1).
      std::vector<int64_t> inner(dims.begin() + 1, dims.end());
      auto& k = b.Add("Constant", {}, {name + "_const"});
      auto* a = k.add_attribute();
      a->set_name("value");
      a->set_type(onnx::AttributeProto::TENSOR);
      *a->mutable_t() = MakeTensor<float>("", inner, values);
      std::vector<std::string> ins{name + "_const"};
      if (c.opset >= 13) ins.push_back(b.Ints64({0}));
      auto& u = b.Add("Unsqueeze", ins, {name});
      if (c.opset < 13) SetAttr(u, "axes", std::vector<int64_t>{0});
      return name;
    };
    std::vector<std::string> ins{x, weight("W" + L, {nd, G * H, in_dim}), weight("R" + L, {nd, G * H, H})};
    ins.push_back(c.no_bias ? "" : weight("B" + L, {nd, 2 * G * H}));
    ins.push_back(c.seq_lens ? "seq_lens" : "");
    std::vector<std::string> states = {"h"};
    if (c.op == "LSTM") states.push_back("c");
    for (const auto& s : states) {
      const std::string name = s + "0_" + L;
      const std::vector<int64_t> dims = c.layout == 0 ? std::vector<int64_t>{nd, c.batch, H}
                                                      : std::vector<int64_t>{c.batch, nd, H};
      if (c.init == "none") {
        ins.push_back("");
      } else if (c.init == "input") {
        AddInput(g, name, c.layout == 0 ? std::vector<DimSpec>{DimSpec::Of(nd), batch, DimSpec::Of(H)}
                                        : std::vector<DimSpec>{batch, DimSpec::Of(nd), DimSpec::Of(H)});
        ins.push_back(name);
      } else {
        ins.push_back(b.Const<float>(dims, Uniform(static_cast<size_t>(NumElements(dims)), rng), name));
      }
    }
    if (c.op == "LSTM") ins.push_back(c.peephole ? weight("P" + L, {nd, 3 * H}) : "");
    while (!ins.empty() && ins.back().empty()) ins.pop_back();
    std::vector<std::string> outs{"Y" + L, "Yh" + L};
    if (c.op == "LSTM") outs.push_back("Yc" + L);
    auto& node = b.Add(c.op, ins, outs);
    node.set_name(c.op + "_" + L);
    SetAttr(node, "hidden_size", H);
    SetAttr(node, "direction", c.direction);
    if (c.op == "GRU") SetAttr(node, "linear_before_reset", static_cast<int64_t>(c.linear_before_reset));
    if (c.layout) SetAttr(node, "layout", static_cast<int64_t>(c.layout));
    if (c.clip > 0) SetAttr(node, "clip", c.clip);
    if (c.input_forget) SetAttr(node, "input_forget", static_cast<int64_t>(1));
    if (!c.activations.empty()) {
      auto* a = node.add_attribute();
      a->set_name("activations");
      a->set_type(onnx::AttributeProto::STRINGS);
      for (const auto& s : c.activations) a->add_strings(s);
    }
    if (!c.alpha.empty()) SetAttr(node, "activation_alpha", c.alpha);
    if (!c.beta.empty()) SetAttr(node, "activation_beta", c.beta);
    if (l + 1 < c.layers) {
      // [T, nd, B, H] -> [T, B, nd*H] (layout 0) ; [B, T, nd, H] -> [B, T, nd*H] (layout 1)
      std::string y = outs[0];
      if (c.layout == 0) {
        auto& t = b.Add("Transpose", {y});
        SetAttr(t, "perm", std::vector<int64_t>{0, 2, 1, 3});
        y = t.output(0);
      }
      x = b.Op("Reshape", {y, b.Ints64({0, 0, -1})}, "X" + std::to_string(l + 1));
      in_dim = nd * H;
    }
    if (l + 1 == c.layers)
      for (size_t k = 0; k < outs.size(); ++k) {
        auto* vi = g.add_output();
        vi->set_name(outs[k]);
        auto* tt = vi->mutable_type()->mutable_tensor_type();
        tt->set_elem_type(onnx::TensorProto::FLOAT);
        for (int d = 0; d < (k == 0 ? 4 : 3); ++d) tt->mutable_shape()->add_dim();  // rank only
      }
  }
  return model;
}

NamedTensors MakeRnnInputs(const RnnCase& c, uint32_t seed) {
  const int64_t nd = c.direction == "bidirectional" ? 2 : 1;
  NamedTensors in;
  in.emplace_back("X", RandomTensor(c.layout == 0 ? std::vector<int64_t>{c.seq, c.batch, c.input}
                                                  : std::vector<int64_t>{c.batch, c.seq, c.input}, seed));
  if (c.init == "input")
    for (int l = 0; l < c.layers; ++l)
      for (const char* s : {"h", "c"}) {
        if (std::string(s) == "c" && c.op != "LSTM") continue;
        in.emplace_back(std::string(s) + "0_" + std::to_string(l),
                        RandomTensor(c.layout == 0 ? std::vector<int64_t>{nd, c.batch, c.hidden}
                                                   : std::vector<int64_t>{c.batch, nd, c.hidden},
                                     seed + 7 + l));
      }
  return in;
}

}  // namespace nuphar::editor::testing
