// Registration of the tensor (data movement and shape) kernel family.
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/tensor_identity.h"

namespace nuphar {

void RegisterTensorKernels(KernelRegistry& r) { RegisterIdentityKernels(r); }

}  // namespace nuphar
