// Registration of the elementwise kernel family (ops are added as their kernels land).
#include "runtime/kernels/kernel.h"

namespace nuphar {

void RegisterElementwiseKernels(KernelRegistry& r) { (void)r; }

}  // namespace nuphar
