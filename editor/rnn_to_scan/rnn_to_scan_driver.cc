// The LSTM/GRU/RNN -> Scan conversion, shared by the three ops (STYLE R8; spec §2.2, E1, E3).
//
// Before:  Y, Y_h[, Y_c] = LSTM|GRU|RNN(X, W, R, B?, sequence_lens?, initial_h?, initial_c?, P?)
// After, per direction d (reverse: Scan directions = 1):
//          Xp_d = Add(MatMul(X', Wᵀ_d), bias_d)                 X' = X, or Transpose(X) for layout=1
//          [step_d,] h_d[, c_d][, y_d] = Scan([step0,] h0_d[, c0_d], Xp_d)   body = the cell's hooks
//          Y = Concat_d(Unsqueeze(y_d, 1)),  Y_h = Concat_d(Unsqueeze(h_d, 0)), ...  (+ layout transposes)
//        sequence_lens: a step counter state (0.. forward, T-1.. backward); valid = step < L_b;
//        states keep their value and y is 0 on invalid steps (correct for every direction, E1).
// Refused (E4): non-float tensors, W/R/B/P that are not constant-foldable, unknown activations,
//        ScaledTanh without alpha/beta, missing hidden_size, bad weight shapes.
#include "editor/rnn_to_scan/rnn_to_scan_driver.h"

#include <onnx/onnx_pb.h>

#include <cstring>

#include "editor/rnn_to_scan/rnn_spec.h"
#include "graph/const_fold.h"
#include "graph/opset_emit.h"

namespace nuphar::editor {
namespace {

/// A folded float tensor; `data` points into the initializer's raw_data when possible.
struct FloatTensor {
  ConstantValue value;
  std::vector<float> owned;
  const float* data = nullptr;
  std::vector<int64_t> dims;
};

Expected<FloatTensor> ReadFloatConstant(const GraphScope& scope, const onnx::NodeProto& node, const std::string& name,
                                        const char* what) {
  auto folded = FoldConstant(scope, name);
  if (!folded.ok())
    return Diag::Node(node, std::string(what) + " '" + name + "' is not a constant: " + folded.diag().reason);
  FloatTensor out;
  out.value = std::move(folded).value();
  const auto& t = out.value.tensor();
  if (t.data_type() != onnx::TensorProto::FLOAT)
    return Diag::Node(node, std::string(what) + " '" + name + "' is not float32 (only float32 RNNs are converted)");
  out.dims.assign(t.dims().begin(), t.dims().end());
  const size_t n = static_cast<size_t>(NumElements(out.dims));
  if (t.has_raw_data() && t.raw_data().size() == n * sizeof(float) &&
      reinterpret_cast<uintptr_t>(t.raw_data().data()) % alignof(float) == 0) {
    out.data = reinterpret_cast<const float*>(t.raw_data().data());
  } else {
    NUPHAR_ASSIGN_OR_RETURN(out.owned, ReadTensor<float>(t));
    if (out.owned.size() != n) return Diag::Node(node, std::string(what) + " '" + name + "' has a bad payload");
    out.data = out.owned.data();
  }
  return out;
}

std::string DimsText(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

onnx::TensorProto FloatTensorProto(const std::vector<int64_t>& dims, const float* data) {
  return MakeTensor("", DType::kFloat, dims, data, static_cast<size_t>(NumElements(dims)) * sizeof(float));
}

onnx::TensorProto MatrixTensor(BodyMatrix&& m) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(m.rows);
  t.add_dims(m.cols);
  t.set_raw_data(std::move(m.bytes));
  return t;
}

class Converter {
 public:
  Converter(RewriteContext& ctx, const onnx::NodeProto& node, const RnnCell& cell, const RnnToScanOptions& options,
            RnnSpec spec)
      : ctx_(ctx), b_(ctx.builder()), node_(node), cell_(cell), options_(options), spec_(std::move(spec)) {}

  Expected<Effect> Run();

 private:
  std::string Input(int i) const { return node_.input_size() > i ? node_.input(i) : std::string(); }
  bool OutputUsed(int i) const {
    return node_.output_size() > i && !node_.output(i).empty() && ctx_.uses().Used(node_.output(i));
  }
  Status ReadShapes();
  Status ReadWeights();
  Expected<std::vector<std::string>> InitialState(int kind, const std::string& name);
  std::string ZeroState(int kind);
  std::string BatchShapeNode();
  std::string StepStart(bool backward);
  Expected<std::vector<std::string>> EmitDirection(int d, const std::vector<std::vector<std::string>>& init,
                                                   const std::string& x_seq);
  void EmitFinal(const std::vector<std::string>& parts, int64_t unsqueeze_axis, const std::vector<int64_t>& layout_perm,
                 const std::string& out);
  void ReleaseSoleUseWeights();

  RewriteContext& ctx_;
  NodeBuilder& b_;
  const onnx::NodeProto& node_;
  const RnnCell& cell_;
  const RnnToScanOptions& options_;
  RnnSpec spec_;

  DimSpec batch_;
  int64_t seq_len_ = -1;  ///< static T, or -1
  FloatTensor w_, r_, bias_, peephole_;
  bool has_bias_ = false, has_peephole_ = false;
  int64_t input_size_ = 0;
  std::string seq_lens_;
  std::string zero_[2];
  std::string batch_shape_;
  bool want_y_ = false;
  std::vector<bool> want_state_;
};

Status Converter::ReadShapes() {
  const std::string x = Input(0);
  if (x.empty()) return Diag::Node(node_, "X is missing");
  const int batch_axis = spec_.layout == 0 ? 1 : 0;
  if (const auto* vi = ctx_.scope().FindValueInfo(x); vi && vi->type().has_tensor_type()) {
    const auto& tt = vi->type().tensor_type();
    if (tt.elem_type() != onnx::TensorProto::FLOAT && tt.elem_type() != 0)
      return Diag::Node(node_, "X '" + x + "' is not float32 (only float32 RNNs are converted)");
    if (tt.has_shape()) {
      if (tt.shape().dim_size() != 3) return Diag::Node(node_, "X '" + x + "' does not have rank 3");
      const auto& bd = tt.shape().dim(batch_axis);
      if (bd.has_dim_value()) batch_ = DimSpec::Of(bd.dim_value());
      else if (bd.has_dim_param()) batch_ = DimSpec::Sym(bd.dim_param());
      const auto& td = tt.shape().dim(1 - batch_axis);
      if (td.has_dim_value()) seq_len_ = td.dim_value();
    }
  }
  // Without value_info the batch dim is read at run time through Shape(X): still correct.
  return Status::OK();
}

Status Converter::ReadWeights() {
  const int64_t G = cell_.NumGates(), H = spec_.hidden, nd = spec_.num_directions;
  const auto& scope = ctx_.scope();
  if (Input(1).empty() || Input(2).empty()) return Diag::Node(node_, "W and R are required");
  NUPHAR_ASSIGN_OR_RETURN(w_, ReadFloatConstant(scope, node_, Input(1), "W"));
  NUPHAR_ASSIGN_OR_RETURN(r_, ReadFloatConstant(scope, node_, Input(2), "R"));
  if (w_.dims.size() != 3 || w_.dims[0] != nd || w_.dims[1] != G * H)
    return Diag::Node(node_, "W has shape " + DimsText(w_.dims) + ", expected [" + std::to_string(nd) + ", " +
                                 std::to_string(G * H) + ", input_size]");
  input_size_ = w_.dims[2];
  if (r_.dims != std::vector<int64_t>{nd, G * H, H})
    return Diag::Node(node_, "R has shape " + DimsText(r_.dims) + ", expected " + DimsText({nd, G * H, H}));
  if (!Input(3).empty()) {
    NUPHAR_ASSIGN_OR_RETURN(bias_, ReadFloatConstant(scope, node_, Input(3), "B"));
    if (bias_.dims != std::vector<int64_t>{nd, 2 * G * H})
      return Diag::Node(node_, "B has shape " + DimsText(bias_.dims) + ", expected " + DimsText({nd, 2 * G * H}));
    has_bias_ = true;
  }
  if (cell_.HasPeephole() && !Input(7).empty()) {
    NUPHAR_ASSIGN_OR_RETURN(peephole_, ReadFloatConstant(scope, node_, Input(7), "P"));
    if (peephole_.dims != std::vector<int64_t>{nd, 3 * H})
      return Diag::Node(node_, "P has shape " + DimsText(peephole_.dims) + ", expected " + DimsText({nd, 3 * H}));
    has_peephole_ = true;
  }
  return Status::OK();
}

std::string Converter::BatchShapeNode() {
  if (batch_shape_.empty()) {
    const int64_t axis = spec_.layout == 0 ? 1 : 0;
    std::string shape = b_.Op("Shape", {Input(0)});
    std::string batch = EmitSlice(b_, shape, {axis}, {axis + 1}, {0});
    auto& concat = b_.Add("Concat", {batch, b_.Ints64({spec_.hidden})});
    SetAttr(concat, "axis", static_cast<int64_t>(0));
    batch_shape_ = concat.output(0);
  }
  return batch_shape_;
}

std::string Converter::ZeroState(int kind) {
  if (!zero_[kind].empty()) return zero_[kind];
  if (batch_.value >= 0) {
    std::vector<float> zeros(static_cast<size_t>(batch_.value * spec_.hidden), 0.f);
    const std::string postfix = cell_.StateNames().size() == 2 ? (kind == 0 ? "_H" : "_C") : "";
    zero_[kind] = b_.Const<float>({batch_.value, spec_.hidden}, zeros, Input(0) + "_zero_init_state" + postfix);
    if (options_.zero_state_as_input && ctx_.scope().IsMain())
      b_.AddValueInfo(zero_[kind], DType::kFloat, {batch_, DimSpec::Of(spec_.hidden)},
                      ctx_.scope().graph->mutable_input());
  } else {
    // One zero tensor serves every state kind: ConstantOfShape's default value is float 0.
    const std::string other = zero_[1 - kind];
    zero_[kind] = !other.empty() ? other : b_.Op("ConstantOfShape", {BatchShapeNode()});
  }
  return zero_[kind];
}

Expected<std::vector<std::string>> Converter::InitialState(int kind, const std::string& name) {
  const int nd = spec_.num_directions;
  if (name.empty()) return std::vector<std::string>(nd, ZeroState(kind));
  std::vector<std::string> out;
  if (FoldConstant(ctx_.scope(), name).ok()) {
    NUPHAR_ASSIGN_OR_RETURN(auto init, ReadFloatConstant(ctx_.scope(), node_, name, kind == 0 ? "initial_h" : "initial_c"));
    if (init.dims.size() != 3 || init.dims[spec_.layout == 0 ? 0 : 1] != nd || init.dims[2] != spec_.hidden)
      return Diag::Node(node_, "initial state '" + name + "' has shape " + DimsText(init.dims));
    const int64_t B = init.dims[spec_.layout == 0 ? 1 : 0], H = spec_.hidden;
    for (int d = 0; d < nd; ++d) {
      std::vector<float> slice(static_cast<size_t>(B * H));
      for (int64_t bi = 0; bi < B; ++bi) {
        const int64_t row = spec_.layout == 0 ? d * B + bi : bi * nd + d;
        std::memcpy(&slice[bi * H], init.data + row * H, H * sizeof(float));
      }
      out.push_back(b_.Const(FloatTensorProto({B, H}, slice.data())));
    }
    ctx_.MarkMaybeDead(name);
    return out;
  }
  std::string src = name;
  if (spec_.layout == 1) {
    auto& t = b_.Add("Transpose", {name});
    SetAttr(t, "perm", std::vector<int64_t>{1, 0, 2});
    src = t.output(0);
  }
  if (nd == 1) return std::vector<std::string>{EmitSqueeze(b_, src, {0})};
  auto parts = EmitSplit(b_, src, 0, {1, 1}, {name + "_split_0", name + "_split_1"});
  for (auto& p : parts) out.push_back(EmitSqueeze(b_, p, {0}));
  return out;
}

std::string Converter::StepStart(bool backward) {
  if (!backward) return b_.Const<int32_t>({}, {0});
  if (seq_len_ >= 0) return b_.Const<int32_t>({}, {static_cast<int32_t>(seq_len_ - 1)});
  std::string shape = b_.Op("Shape", {Input(0)});
  auto& gather = b_.Add("Gather", {shape, b_.Const<int64_t>({}, {spec_.layout == 0 ? 0 : 1})});
  SetAttr(gather, "axis", static_cast<int64_t>(0));
  auto& cast = b_.Add("Cast", {gather.output(0)});
  SetAttr(cast, "to", static_cast<int64_t>(onnx::TensorProto::INT32));
  return b_.Op("Sub", {cast.output(0), b_.Const<int32_t>({}, {1})});
}

Expected<std::vector<std::string>> Converter::EmitDirection(int d, const std::vector<std::vector<std::string>>& init,
                                                            const std::string& x_seq) {
  const int64_t G = cell_.NumGates(), H = spec_.hidden, I = input_size_;
  const bool backward = spec_.is_backward(d);
  const auto state_names = cell_.StateNames();
  DirectionWeights dw;
  dw.input_size = I;
  dw.w = w_.data + d * G * H * I;
  dw.r = r_.data + d * G * H * H;
  dw.wb.assign(G * H, 0.f);
  dw.rb.assign(G * H, 0.f);
  if (has_bias_) {
    std::memcpy(dw.wb.data(), bias_.data + d * 2 * G * H, G * H * sizeof(float));
    std::memcpy(dw.rb.data(), bias_.data + d * 2 * G * H + G * H, G * H * sizeof(float));
  }
  if (has_peephole_) dw.p.assign(peephole_.data + d * 3 * H, peephole_.data + (d + 1) * 3 * H);

  // Hoisted input projection over the whole sequence.
  std::string wt_name = b_.Const(MatrixTensor(TransposedRows(dw.w, I, 0, G * H)));
  std::vector<float> bias = cell_.SplitBias(spec_, dw);
  std::string proj = b_.Op("Add", {b_.Op("MatMul", {x_seq, wt_name}), b_.Const<float>({G * H}, bias)});

  const std::string q = (want_y_ ? node_.output(0) : node_.name()) + "_" + std::to_string(d) + "_";
  ScanBodyBuilder body(&ctx_.names(), b_.opset(), q, batch_, H);
  const bool masked = !seq_lens_.empty();
  std::string step_in = masked ? body.AddInput(q + "step_subgraph", 0, DType::kInt32) : "";
  std::vector<std::string> states_in;
  for (const auto& s : state_names) states_in.push_back(body.AddInput(q + s + "_subgraph", H));
  std::string x_in = body.AddInput(proj + "_subgraph", G * H);
  std::vector<std::string> matrices;
  for (auto& m : cell_.SplitWeights(spec_, dw))
    matrices.push_back(body.nodes().Const(MatrixTensor(std::move(m))));

  CellInputs cell_in{spec_, d, dw, x_in, states_in, matrices};
  NUPHAR_ASSIGN_OR_RETURN(auto new_states, cell_.EmitCell(body, cell_in));

  std::vector<std::string> body_outputs;
  std::string y_out;
  if (masked) {
    std::string valid = EmitUnsqueeze(body.nodes(), body.Op("Less", {step_in, seq_lens_}), {1});
    body_outputs.push_back(body.Op("Add", {step_in, body.nodes().Const<int32_t>({}, {backward ? -1 : 1})}));
    body.AddOutput(body_outputs.back(), 0, DType::kInt32);
    for (size_t s = 0; s < new_states.size(); ++s)
      body_outputs.push_back(body.Op("Where", {valid, new_states[s], states_in[s]}));
    if (want_y_) y_out = body.Op("Where", {valid, new_states[0], body.nodes().ScalarF(0.f)});
  } else {
    body_outputs = new_states;
    if (want_y_) y_out = body.Op("Identity", {new_states[0]});
  }
  for (size_t s = masked ? 1 : 0; s < body_outputs.size(); ++s) body.AddOutput(body_outputs[s], H);
  if (want_y_) {
    body.AddOutput(y_out, H);
    body_outputs.push_back(y_out);
  }

  std::vector<std::string> scan_inputs, scan_outputs;
  if (masked) {
    scan_inputs.push_back(StepStart(backward));
    scan_outputs.push_back(ctx_.names().Fixed(q + "step_final"));
  }
  for (size_t s = 0; s < state_names.size(); ++s) {
    scan_inputs.push_back(init[s][d]);
    scan_outputs.push_back(ctx_.names().Fixed(q + state_names[s] + "_final"));
  }
  scan_inputs.push_back(proj);
  if (want_y_) scan_outputs.push_back(ctx_.names().Fixed(q + "y"));
  auto& scan = b_.Add("Scan", scan_inputs, scan_outputs);
  SetAttr(scan, "body", body.Release());
  SetAttr(scan, "num_scan_inputs", static_cast<int64_t>(1));
  SetAttr(scan, "scan_input_directions", std::vector<int64_t>{backward ? 1 : 0});
  if (want_y_) SetAttr(scan, "scan_output_directions", std::vector<int64_t>{backward ? 1 : 0});
  return std::vector<std::string>(scan_outputs.begin() + (masked ? 1 : 0), scan_outputs.end());
}

void Converter::EmitFinal(const std::vector<std::string>& parts, int64_t unsqueeze_axis,
                          const std::vector<int64_t>& layout_perm, const std::string& out) {
  const bool transpose = spec_.layout == 1;
  std::vector<std::string> expanded;
  for (const auto& p : parts)
    expanded.push_back(EmitUnsqueeze(b_, p, {unsqueeze_axis}, parts.size() == 1 && !transpose ? out : ""));
  std::string joined = expanded[0];
  if (parts.size() > 1) {
    auto& concat = transpose ? b_.Add("Concat", expanded) : b_.Add("Concat", expanded, {out});
    SetAttr(concat, "axis", unsqueeze_axis);
    joined = concat.output(0);
  }
  if (transpose) SetAttr(b_.Add("Transpose", {joined}, {out}), "perm", layout_perm);
}

// A weight initializer read only by this node is dead once the node is replaced; dropping its
// payload now (the initializer itself goes after the walk) keeps peak memory near one model
// copy on large models instead of two.
void Converter::ReleaseSoleUseWeights() {
  w_ = {};
  r_ = {};
  bias_ = {};
  peephole_ = {};
  for (int i : {1, 2, 3, 7}) {
    const std::string name = Input(i);
    if (name.empty() || ctx_.uses().Count(name) != 1) continue;
    const GraphScope* owner = nullptr;
    if (!ctx_.scope().FindInitializer(name, &owner)) continue;
    for (auto& t : *owner->graph->mutable_initializer()) {
      if (t.name() != name) continue;
      t.clear_raw_data();
      t.clear_float_data();
      std::string().swap(*t.mutable_raw_data());
      t.clear_raw_data();
      break;
    }
  }
}

Expected<Effect> Converter::Run() {
  NUPHAR_RETURN_IF_ERROR(ReadShapes());
  NUPHAR_RETURN_IF_ERROR(ReadWeights());
  const int nd = spec_.num_directions;
  const size_t num_states = cell_.StateNames().size();
  want_y_ = OutputUsed(0);
  want_state_ = {OutputUsed(1), num_states == 2 && OutputUsed(2)};
  b_.set_prefix(want_y_ ? node_.output(0) : "");
  for (int i : {1, 2, 3, 7}) ctx_.MarkMaybeDead(Input(i));
  if (!want_y_ && !want_state_[0] && !want_state_[1]) return Effect::Replaced();  // nothing reads it

  std::string x_seq = Input(0);
  if (spec_.layout == 1) {
    auto& t = b_.Add("Transpose", {x_seq});
    SetAttr(t, "perm", std::vector<int64_t>{1, 0, 2});
    x_seq = t.output(0);
  }
  seq_lens_ = Input(4);
  std::vector<std::vector<std::string>> init(num_states);
  NUPHAR_ASSIGN_OR_RETURN(init[0], InitialState(0, Input(5)));
  if (num_states == 2) {
    if (Input(6) == Input(5)) init[1] = init[0];
    else {
      NUPHAR_ASSIGN_OR_RETURN(init[1], InitialState(1, Input(6)));
    }
  }
  std::vector<std::vector<std::string>> finals(nd);
  for (int d = 0; d < nd; ++d) {
    NUPHAR_ASSIGN_OR_RETURN(finals[d], EmitDirection(d, init, x_seq));
  }
  if (want_y_) {
    std::vector<std::string> ys;
    for (int d = 0; d < nd; ++d) ys.push_back(finals[d][num_states]);
    EmitFinal(ys, 1, {2, 0, 1, 3}, node_.output(0));
  }
  for (size_t s = 0; s < num_states; ++s) {
    if (!want_state_[s]) continue;
    std::vector<std::string> parts;
    for (int d = 0; d < nd; ++d) parts.push_back(finals[d][s]);
    EmitFinal(parts, 0, {1, 0, 2}, node_.output(1 + static_cast<int>(s)));
  }
  ReleaseSoleUseWeights();
  return Effect::Replaced();
}

}  // namespace

std::vector<float> RnnCell::SplitBias(const RnnSpec& spec, const DirectionWeights& dw) const {
  std::vector<float> b(dw.wb.size());
  for (size_t k = 0; k < b.size(); ++k) b[k] = dw.wb[k] + dw.rb[k];
  return b;
}

Expected<Effect> ConvertRnnToScan(RewriteContext& ctx, const onnx::NodeProto& node, const RnnCell& cell,
                                  const RnnToScanOptions& options) {
  NUPHAR_ASSIGN_OR_RETURN(RnnSpec spec, ParseRnnSpec(node, cell));
  Converter converter(ctx, node, cell, options, std::move(spec));
  return converter.Run();
}

}  // namespace nuphar::editor
