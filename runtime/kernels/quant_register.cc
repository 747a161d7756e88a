// Registration of the quant kernel family (ops are added as their kernels land).
#include "runtime/kernels/kernel.h"

namespace nuphar {

void RegisterQuantKernels(KernelRegistry& r) { (void)r; }

}  // namespace nuphar
