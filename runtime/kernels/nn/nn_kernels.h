// Registration hooks of the nn kernel family, one per file (nn_register.cc calls them all).
#pragma once
#include "runtime/kernels/kernel.h"

namespace nuphar {
void RegisterMatMulKernels(KernelRegistry& r);   // nn_matmul.cc: MatMul, Gemm
void RegisterEinsumKernels(KernelRegistry& r);   // nn_einsum.cc
void RegisterConvKernels(KernelRegistry& r);     // nn_conv.cc: Conv, ConvTranspose
void RegisterPoolKernels(KernelRegistry& r);     // nn_pool.cc: MaxPool, AveragePool, Global*Pool
void RegisterNormKernels(KernelRegistry& r);     // nn_norm.cc: BatchNormalization, InstanceNormalization,
                                                 //   LayerNormalization, LRN, MeanVarianceNormalization
void RegisterSignalKernels(KernelRegistry& r);   // nn_signal.cc: DFT, STFT, windows, MelWeightMatrix
}  // namespace nuphar
