// Registration of the quant kernel family: (de)quantization, integer and QLinear products.
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/quant/quant_kernels.h"

namespace nuphar {

void RegisterQuantKernels(KernelRegistry& r) {
  RegisterQuantizeLinearKernels(r);
  RegisterQuantMatMulKernels(r);
  RegisterQuantConvKernels(r);
}

}  // namespace nuphar
