// LSTM cell hooks for the shared RNN driver (rnn_driver.h), and the LSTM kernel factory.
//   i = f(x Wi + h Ri + Pi . c + Wbi + Rbi)      f = f(x Wf + h Rf + Pf . c + Wbf + Rbf)
//   g = g(x Wc + h Rc + Wbc + Rbc)               c' = f . c + i . g
//   o = f(x Wo + h Ro + Po . c' + Wbo + Rbo)     h' = o . h(c')
// Gate order in W, R and B is i, o, f, c; P is i, o, f. input_forget=1 couples f = 1 - i.
#include "runtime/kernels/rnn/rnn_cells.h"
#include "runtime/kernels/rnn/rnn_driver_impl.h"

namespace nuphar {

std::vector<std::string> LstmCell::DefaultActivations() { return {"Sigmoid", "Tanh", "Tanh"}; }

template <class T>
void LstmCell::FoldBias(const T* Wb, const T* Rb, int64_t H, T* out) const {
  for (int64_t j = 0; j < 4 * H; ++j) out[j] = Wb ? Wb[j] + Rb[j] : T(0);
}

template <class T>
void LstmCell::Step(const RnnDirectionWeights<T>& w, const RnnStepBuffers<T>& s) const {
  const int64_t H = s.hidden;
  if (!PackedRecurrence(w, s.batch, s.h_prev, s.gates, true)) GemmABt(s.batch, 4 * H, H, s.h_prev, H, w.R, H, s.gates, 4 * H, true);
  const RnnActivation &f = w.act[0], &g = w.act[1], &h = w.act[2];
  for (int64_t b = 0; b < s.batch; ++b) {
    T* gi = s.gates + b * 4 * H;
    T* go = gi + H;
    T* gf = gi + 2 * H;
    T* gc = gi + 3 * H;
    const T* c_prev = s.c_prev + b * H;
    T* c_next = s.c_next + b * H;
    T* h_next = s.h_next + b * H;
    if (w.P) {
      const T *pi = w.P, *pf = w.P + 2 * H;
      for (int64_t j = 0; j < H; ++j) {
        gi[j] += pi[j] * c_prev[j];
        gf[j] += pf[j] * c_prev[j];
      }
    }
    f.Apply(gi, H, w.clip);
    if (input_forget) {
      for (int64_t j = 0; j < H; ++j) gf[j] = T(1) - gi[j];
    } else {
      f.Apply(gf, H, w.clip);
    }
    g.Apply(gc, H, w.clip);
    for (int64_t j = 0; j < H; ++j) c_next[j] = gf[j] * c_prev[j] + gi[j] * gc[j];
    if (w.P) {
      const T* po = w.P + H;
      for (int64_t j = 0; j < H; ++j) go[j] += po[j] * c_next[j];
    }
    f.Apply(go, H, w.clip);
    std::memcpy(h_next, c_next, size_t(H) * sizeof(T));
    h.Apply(h_next, H, 0.0f);  // clip bounds gate inputs only, not the cell state
    for (int64_t j = 0; j < H; ++j) h_next[j] *= go[j];
  }
}

template class RnnKernel<LstmCell>;

Expected<std::unique_ptr<OpKernel>> CreateLstm(const NodeInfo& node) {
  NUPHAR_ASSIGN_OR_RETURN(RnnAttributes attrs, ParseRnnAttributes(node, LstmCell::kGates, LstmCell::DefaultActivations()));
  LstmCell cell;
  const int64_t input_forget = node.GetInt("input_forget", 0);
  if (input_forget != 0 && input_forget != 1) return node.Error("input_forget must be 0 or 1");
  cell.input_forget = input_forget == 1;
  return MakeKernel<RnnKernel<LstmCell>>(std::move(attrs), cell);
}

}  // namespace nuphar
