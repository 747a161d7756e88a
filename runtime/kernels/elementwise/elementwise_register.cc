// Registration of the elementwise kernel family, and its shared type-set names.
#include "runtime/kernels/elementwise/elementwise_common.h"

namespace nuphar {

namespace ew {
std::string TypeSetNames(TypeSet set) {
  std::string names;
  for (int t = 0; t < 32; ++t) {
    if (!(set & (1u << t))) continue;
    if (!names.empty()) names += ", ";
    names += DTypeName(static_cast<DType>(t));
  }
  return names;
}
}  // namespace ew

void RegisterElementwiseKernels(KernelRegistry& r) {
  ew::RegisterBinaryKernels(r);
  ew::RegisterVariadicKernels(r);
  ew::RegisterUnaryKernels(r);
  ew::RegisterActivationKernels(r);
  ew::RegisterWhereKernel(r);
  ew::RegisterCastKernels(r);
}

}  // namespace nuphar
