// The registry of every reference and fused kernel (runtime/kernels/kernel.h).
#include "runtime/kernels/kernel.h"

#include "runtime/kernels/conv/conv.h"

namespace nuphar {

const KernelRegistry& BuiltinKernels() {
  static const KernelRegistry registry = [] {
    KernelRegistry r;
    RegisterElementwiseKernels(r);
    RegisterReductionKernels(r);
    RegisterTensorKernels(r);
    RegisterNnKernels(r);
    RegisterQuantKernels(r);
    RegisterRnnKernels(r);
    RegisterControlFlowKernels(r);
    RegisterFusedKernels(r);
    RegisterFusedConvKernels(r);
    return r;
  }();
  return registry;
}

}  // namespace nuphar
