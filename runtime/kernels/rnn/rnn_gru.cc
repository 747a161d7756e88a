// GRU cell hooks for the shared RNN driver (rnn_driver.h), and the GRU kernel factory.
//   z = f(x Wz + h Rz + Wbz + Rbz)      r = f(x Wr + h Rr + Wbr + Rbr)
//   linear_before_reset = 0:  n = g(x Wh + (r . h) Rh + Rbh + Wbh)
//   linear_before_reset = 1:  n = g(x Wh + r . (h Rh + Rbh) + Wbh)
//   h' = (1 - z) . n + z . h
// Gate order in W, R and B is z, r, h.
#include "runtime/kernels/rnn/rnn_cells.h"
#include "runtime/kernels/rnn/rnn_driver_impl.h"

namespace nuphar {

std::vector<std::string> GruCell::DefaultActivations() { return {"Sigmoid", "Tanh"}; }

int64_t GruCell::ScratchElems(int64_t batch, int64_t H) const {
  return linear_before_reset ? batch * 3 * H : batch * H;
}

template <class T>
void GruCell::FoldBias(const T* Wb, const T* Rb, int64_t H, T* out) const {
  for (int64_t j = 0; j < 3 * H; ++j) {
    // With linear_before_reset, Rbh sits inside r . (...) and cannot be folded into x Wh.
    const bool fold_rb = !linear_before_reset || j < 2 * H;
    out[j] = Wb ? Wb[j] + (fold_rb ? Rb[j] : T(0)) : T(0);
  }
}

template <class T>
void GruCell::Step(const RnnDirectionWeights<T>& w, const RnnStepBuffers<T>& s) const {
  const int64_t H = s.hidden, GH = 3 * H;
  const RnnActivation &f = w.act[0], &g = w.act[1];
  if (linear_before_reset) {
    T* hr = s.scratch;  // [batch, 3H] = h * R^T
    if (!PackedRecurrence(w, s.batch, s.h_prev, hr, false)) GemmABt(s.batch, GH, H, s.h_prev, H, w.R, H, hr, GH, false);
    const T* rbh = w.Rb ? w.Rb + 2 * H : nullptr;
    for (int64_t b = 0; b < s.batch; ++b) {
      T* gz = s.gates + b * GH;
      T* gr = gz + H;
      T* gh = gz + 2 * H;
      const T* hrb = hr + b * GH;
      for (int64_t j = 0; j < 2 * H; ++j) gz[j] += hrb[j];
      f.Apply(gz, 2 * H, w.clip);  // z and r are adjacent
      for (int64_t j = 0; j < H; ++j) gh[j] += gr[j] * (hrb[2 * H + j] + (rbh ? rbh[j] : T(0)));
      g.Apply(gh, H, w.clip);
    }
  } else {  // R's rows are used in two parts here, so the whole-R packed GEMV does not apply
    GemmABt(s.batch, 2 * H, H, s.h_prev, H, w.R, H, s.gates, GH, true);
    T* rh = s.scratch;  // [batch, H] = r . h
    for (int64_t b = 0; b < s.batch; ++b) {
      T* gz = s.gates + b * GH;
      f.Apply(gz, 2 * H, w.clip);
      const T* gr = gz + H;
      const T* hp = s.h_prev + b * H;
      for (int64_t j = 0; j < H; ++j) rh[b * H + j] = gr[j] * hp[j];
    }
    GemmABt(s.batch, H, H, rh, H, w.R + 2 * H * H, H, s.gates + 2 * H, GH, true);
    for (int64_t b = 0; b < s.batch; ++b) g.Apply(s.gates + b * GH + 2 * H, H, w.clip);
  }
  for (int64_t b = 0; b < s.batch; ++b) {
    const T* gz = s.gates + b * GH;
    const T* gh = gz + 2 * H;
    const T* hp = s.h_prev + b * H;
    T* hn = s.h_next + b * H;
    for (int64_t j = 0; j < H; ++j) hn[j] = (T(1) - gz[j]) * gh[j] + gz[j] * hp[j];
  }
}

template class RnnKernel<GruCell>;

Expected<std::unique_ptr<OpKernel>> CreateGru(const NodeInfo& node) {
  NUPHAR_ASSIGN_OR_RETURN(RnnAttributes attrs, ParseRnnAttributes(node, GruCell::kGates, GruCell::DefaultActivations()));
  GruCell cell;
  const int64_t lbr = node.GetInt("linear_before_reset", 0);
  if (lbr != 0 && lbr != 1) return node.Error("linear_before_reset must be 0 or 1");
  cell.linear_before_reset = lbr == 1;
  return MakeKernel<RnnKernel<GruCell>>(std::move(attrs), cell);
}

}  // namespace nuphar
