// Registration of the tensor (data movement and shape) kernel family.
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/tensor/tensor_common.h"
#include "runtime/kernels/tensor/tensor_identity.h"

namespace nuphar {

void RegisterTensorKernels(KernelRegistry& r) {
  RegisterIdentityKernels(r);
  tensor_kernels::RegisterShapeKernels(r);
  tensor_kernels::RegisterLayoutKernels(r);
  tensor_kernels::RegisterConcatSplitKernels(r);
  tensor_kernels::RegisterSlicePadKernels(r);
  tensor_kernels::RegisterGatherKernels(r);
  tensor_kernels::RegisterScatterKernels(r);
  tensor_kernels::RegisterGenerateKernels(r);
  tensor_kernels::RegisterResizeKernels(r);
}

}  // namespace nuphar
