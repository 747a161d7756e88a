// Registration hooks of the quant kernel family, one per file (quant_register.cc calls them all).
#pragma once
#include "runtime/kernels/kernel.h"

namespace nuphar {
void RegisterQuantizeLinearKernels(KernelRegistry& r);  // quant_linear.cc: Quantize/Dequantize/DynamicQuantizeLinear
void RegisterQuantMatMulKernels(KernelRegistry& r);     // quant_matmul.cc: MatMulInteger(16), QLinearMatMul
void RegisterQuantConvKernels(KernelRegistry& r);       // quant_conv.cc: ConvInteger, QLinearConv
}  // namespace nuphar
