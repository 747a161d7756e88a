// Registration of the reduction kernel family.
#include "runtime/kernels/reduction/reduction_common.h"

namespace nuphar {

void RegisterReductionKernels(KernelRegistry& r) {
  red::RegisterReduceKernels(r);
  red::RegisterArgKernels(r);
  red::RegisterSoftmaxKernels(r);
  red::RegisterCumSumKernel(r);
  red::RegisterTopKKernel(r);
}

}  // namespace nuphar
