// The non-template half of the RNN driver (rnn_driver.h): attribute parsing and run-time shape
// checks shared by LSTM, GRU and RNN.
#include "runtime/kernels/rnn/rnn_driver.h"

namespace nuphar {
namespace {

std::string Dims(const Tensor& t) { return ShapeToString(t.shape()); }

Status ExpectShape(const char* what, const Tensor& t, std::initializer_list<int64_t> dims) {
  std::vector<int64_t> want(dims);
  if (t.shape() != want)
    return Diag::Msg(std::string(what) + " has shape " + Dims(t) + ", expected " + ShapeToString(want));
  return Status::OK();
}

}  // namespace

Expected<RnnAttributes> ParseRnnAttributes(const NodeInfo& node, int num_gates,
                                           const std::vector<std::string>& default_activations) {
  RnnAttributes a;
  const std::string direction = node.GetString("direction", "forward");
  if (direction == "forward") a.direction = RnnDirection::kForward;
  else if (direction == "reverse") a.direction = RnnDirection::kReverse;
  else if (direction == "bidirectional") a.direction = RnnDirection::kBidirectional;
  else return node.Error("unknown direction '" + direction + "'");
  a.num_directions = a.direction == RnnDirection::kBidirectional ? 2 : 1;
  a.hidden_size = node.GetInt("hidden_size", -1);
  if (node.has_attr("hidden_size") && a.hidden_size <= 0)
    return node.Error("hidden_size must be positive, got " + std::to_string(a.hidden_size));
  const int64_t layout = node.GetInt("layout", 0);  // compared before narrowing: 2^32 is not 0
  if (layout != 0 && layout != 1) return node.Error("layout must be 0 or 1, got " + std::to_string(layout));
  a.layout = static_cast<int>(layout);
  a.clip = node.GetFloat("clip", 0.0f);
  if (node.has_attr("clip") && !(a.clip > 0)) return node.Error("clip must be positive");
  NUPHAR_ASSIGN_OR_RETURN(a.activations, ParseRnnActivations(node, a.num_directions, default_activations));

  for (size_t i : {0, 1, 2, 3, 5, 6, 7}) {  // X W R B initial_h initial_c P share one float type
    const DType t = node.input_type(i);
    if (t != DType::kUndefined && t != DType::kFloat && t != DType::kDouble)
      return node.Error(std::string("input ") + std::to_string(i) + " has element type " + DTypeName(t) +
                        "; only float and double are supported");
  }
  a.r_is_constant = node.constant_input(2) != nullptr;
  const DType lens_type = node.input_type(4);
  if (lens_type != DType::kUndefined && lens_type != DType::kInt32 && lens_type != DType::kInt64)
    return node.Error(std::string("sequence_lens must be int32, got ") + DTypeName(lens_type));
  if (const Tensor* W = node.constant_input(1); W && W->rank() == 3) {
    if (W->dim(0) != a.num_directions)
      return node.Error("W has " + std::to_string(W->dim(0)) + " directions, the direction attribute needs " +
                        std::to_string(a.num_directions));
    if (a.hidden_size > 0 && W->dim(1) != num_gates * a.hidden_size)
      return node.Error("W has shape " + ShapeToString(W->shape()) + ", expected dim 1 = " +
                        std::to_string(num_gates) + " x hidden_size " + std::to_string(a.hidden_size));
    if (W->dtype() == DType::kFloat && PackedGemmF32Available())
      a.w_packed = std::make_shared<const PackedGemvF32>(
          PackedGemvF32::FromNK(W->data<float>(), W->dim(2), W->dim(0) * W->dim(1), W->dim(2)));
  }
  return a;
}

Status ResolveRnnProblem(const KernelContext& ctx, const RnnAttributes& attrs, int num_gates, bool has_cell_state,
                         RnnProblem* p) {
  p->X = ctx.input(0);
  p->W = ctx.input(1);
  p->R = ctx.input(2);
  if (!p->X || !p->W || !p->R) return Diag::Msg("inputs X, W and R are required");
  p->B = ctx.input(3);
  p->seq_lens = ctx.input(4);
  p->initial_h = ctx.input(5);
  if (has_cell_state) {
    p->initial_c = ctx.input(6);
    p->P = ctx.input(7);
  }
  const Tensor& X = *p->X;
  if (X.rank() != 3) return Diag::Msg("X must have rank 3, got shape " + Dims(X));
  if (X.dtype() != DType::kFloat && X.dtype() != DType::kDouble)
    return Diag::Msg(std::string("X has element type ") + DTypeName(X.dtype()) + "; only float and double are supported");
  for (const Tensor* t : {p->W, p->R, p->B, p->initial_h, p->initial_c, p->P})
    if (t && t->dtype() != X.dtype()) return Diag::Msg("W, R, B, initial states and P must have X's element type");
  const bool batch_major = attrs.layout == 1;
  p->seq = batch_major ? X.dim(1) : X.dim(0);
  p->batch = batch_major ? X.dim(0) : X.dim(1);
  p->input = X.dim(2);
  p->num_directions = attrs.num_directions;
  if (p->R->rank() != 3) return Diag::Msg("R must have rank 3, got shape " + Dims(*p->R));
  p->hidden = attrs.hidden_size > 0 ? attrs.hidden_size : p->R->dim(2);
  const int64_t nd = p->num_directions, H = p->hidden, GH = num_gates * H, Bt = p->batch;
  NUPHAR_RETURN_IF_ERROR(ExpectShape("W", *p->W, {nd, GH, p->input}));
  NUPHAR_RETURN_IF_ERROR(ExpectShape("R", *p->R, {nd, GH, H}));
  if (p->B) NUPHAR_RETURN_IF_ERROR(ExpectShape("B", *p->B, {nd, 2 * GH}));
  if (p->P) NUPHAR_RETURN_IF_ERROR(ExpectShape("P", *p->P, {nd, 3 * H}));
  for (const Tensor* s : {p->initial_h, p->initial_c})
    if (s) NUPHAR_RETURN_IF_ERROR(ExpectShape(s == p->initial_h ? "initial_h" : "initial_c", *s,
                                              batch_major ? std::initializer_list<int64_t>{Bt, nd, H}
                                                          : std::initializer_list<int64_t>{nd, Bt, H}));
  if (p->seq_lens) {
    const Tensor& L = *p->seq_lens;
    if (L.dtype() != DType::kInt32 && L.dtype() != DType::kInt64)
      return Diag::Msg(std::string("sequence_lens must be int32, got ") + DTypeName(L.dtype()));
    NUPHAR_RETURN_IF_ERROR(ExpectShape("sequence_lens", L, {Bt}));
    for (int64_t b = 0; b < Bt; ++b) {
      const int64_t len = L.dtype() == DType::kInt32 ? L.data<int32_t>()[b] : L.data<int64_t>()[b];
      if (len < 0 || len > p->seq)
        return Diag::Msg("sequence_lens[" + std::to_string(b) + "] = " + std::to_string(len) +
                         " is outside [0, " + std::to_string(p->seq) + "]");
    }
  }
  return Status::OK();
}

}  // namespace nuphar
