// Eigen GEMM, AVX2+FMA copy (this file alone gets -mavx2 -mfma; see gemm_eigen.h).
#define NUPHAR_GEMM_NS gemm_avx2
#define NUPHAR_EIGEN_NS nuphar_eigen_avx2
#include "runtime/kernels/math/gemm_eigen_impl.inc"
