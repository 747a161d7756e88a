// Registration of the rnn kernel family (ops are added as their kernels land).
#include "runtime/kernels/kernel.h"

namespace nuphar {

void RegisterRnnKernels(KernelRegistry& r) { (void)r; }

}  // namespace nuphar
