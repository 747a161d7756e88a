// Registration of the reduction kernel family (ops are added as their kernels land).
#include "runtime/kernels/kernel.h"

namespace nuphar {

void RegisterReductionKernels(KernelRegistry& r) { (void)r; }

}  // namespace nuphar
