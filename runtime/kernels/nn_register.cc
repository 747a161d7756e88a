// Registration of the nn kernel family (ops are added as their kernels land).
#include "runtime/kernels/kernel.h"

namespace nuphar {

void RegisterNnKernels(KernelRegistry& r) { (void)r; }

}  // namespace nuphar
