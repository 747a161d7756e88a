// What a kernel family includes: the kernel interface (runtime/core/op_kernel.h), the registry
// it registers into, and the registration entry point of each family folder.
#pragma once

#include "runtime/core/kernel_registry.h"
#include "runtime/core/op_kernel.h"

namespace nuphar {

/// Each family folder registers its ops (kernels/<family>/<family>_register.cc).
void RegisterElementwiseKernels(KernelRegistry& r);
void RegisterReductionKernels(KernelRegistry& r);
void RegisterTensorKernels(KernelRegistry& r);
void RegisterNnKernels(KernelRegistry& r);
void RegisterQuantKernels(KernelRegistry& r);
void RegisterRnnKernels(KernelRegistry& r);
void RegisterControlFlowKernels(KernelRegistry& r);
/// Kernels of the nodes that runtime/fusion passes create (never in a model file).
void RegisterFusedKernels(KernelRegistry& r);

/// Every reference kernel and fused kernel, registered once per process.
const KernelRegistry& BuiltinKernels();

}  // namespace nuphar
