// Registration of the nn kernel family: MatMul/Gemm/Einsum, convolutions, pooling, normalizations.
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/nn/nn_kernels.h"

namespace nuphar {

void RegisterNnKernels(KernelRegistry& r) {
  RegisterMatMulKernels(r);
  RegisterEinsumKernels(r);
  RegisterConvKernels(r);
  RegisterPoolKernels(r);
  RegisterNormKernels(r);
  RegisterSignalKernels(r);
}

}  // namespace nuphar
