// Eigen GEMM, AVX-512 copy (this file alone gets the avx512 flags; see gemm_eigen.h): Eigen 3.4's
// 16-float packets and its AVX-512 GEBP kernel, for the fp32 convolutions and MatMuls of CNNs.
#define NUPHAR_GEMM_NS gemm_avx512
#define NUPHAR_EIGEN_NS nuphar_eigen_avx512
#include "runtime/kernels/math/gemm_eigen_impl.inc"
