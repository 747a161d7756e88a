// Registration of the control flow kernel family (ops are added as their kernels land).
#include "runtime/kernels/kernel.h"

namespace nuphar {

void RegisterControlFlowKernels(KernelRegistry& r) { (void)r; }

}  // namespace nuphar
