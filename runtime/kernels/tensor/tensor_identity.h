// Identity, Dropout (inference) and Constant kernels.
#pragma once
#include "runtime/kernels/kernel.h"
namespace nuphar {
void RegisterIdentityKernels(KernelRegistry& r);
}
