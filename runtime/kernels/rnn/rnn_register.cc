// Registration of the rnn kernel family: LSTM, GRU and RNN on one shared driver (rnn_driver.h).
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/rnn/rnn_cells.h"

namespace nuphar {

void RegisterRnnKernels(KernelRegistry& r) {
  r.Add("", "LSTM", CreateLstm);
  r.Add("", "GRU", CreateGru);
  r.Add("", "RNN", CreateSimpleRnn);
}

}  // namespace nuphar
