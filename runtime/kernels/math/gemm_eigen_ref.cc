// Eigen GEMM, baseline ISA copy (SSE2): the path for CPUs without AVX2+FMA and for tests.
#define NUPHAR_GEMM_NS gemm_ref
#define NUPHAR_EIGEN_NS nuphar_eigen_ref
#include "runtime/kernels/math/gemm_eigen_impl.inc"
