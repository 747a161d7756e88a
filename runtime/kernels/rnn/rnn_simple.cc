// Simple RNN cell hooks for the shared RNN driver (rnn_driver.h), and the RNN kernel factory.
//   h' = f(x Wi + h Ri + Wbi + Rbi)
#include "runtime/kernels/rnn/rnn_cells.h"
#include "runtime/kernels/rnn/rnn_driver_impl.h"

namespace nuphar {

std::vector<std::string> SimpleRnnCell::DefaultActivations() { return {"Tanh"}; }

template <class T>
void SimpleRnnCell::FoldBias(const T* Wb, const T* Rb, int64_t H, T* out) const {
  for (int64_t j = 0; j < H; ++j) out[j] = Wb ? Wb[j] + Rb[j] : T(0);
}

template <class T>
void SimpleRnnCell::Step(const RnnDirectionWeights<T>& w, const RnnStepBuffers<T>& s) const {
  const int64_t H = s.hidden;
  if (!PackedRecurrence(w, s.batch, s.h_prev, s.gates, true)) GemmABt(s.batch, H, H, s.h_prev, H, w.R, H, s.gates, H, true);
  w.act[0].Apply(s.gates, s.batch * H, w.clip);
  std::memcpy(s.h_next, s.gates, size_t(s.batch * H) * sizeof(T));
}

template class RnnKernel<SimpleRnnCell>;

Expected<std::unique_ptr<OpKernel>> CreateSimpleRnn(const NodeInfo& node) {
  NUPHAR_ASSIGN_OR_RETURN(RnnAttributes attrs,
                          ParseRnnAttributes(node, SimpleRnnCell::kGates, SimpleRnnCell::DefaultActivations()));
  return MakeKernel<RnnKernel<SimpleRnnCell>>(std::move(attrs), SimpleRnnCell{});
}

}  // namespace nuphar
