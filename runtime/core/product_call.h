// A kernel's ProductCall (op_kernel.h) made from two of its members over its own plan type, so
// each product kernel writes only what differs (its checks, geometry and run), not the casts of
// the C ABI's state and plan storage.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <type_traits>

#include "runtime/core/op_kernel.h"

namespace nuphar {

/// The ProductCall of kernel `k`, whose class K has
///   struct ProductPlan;  // trivially copyable: what prepare derived from x's dims, for run
///   int PrepareProduct(const int64_t* x, int rank, int64_t* y, ProductPlan* plan, size_t* scratch_bytes) const;
///   void RunProduct(const ProductPlan& plan, const float* x, float* y, void* scratch) const;
/// with ProductCall's meanings of prepare and run. `k` must outlive the call.
template <class K>
ProductCall ProductCallOf(const K* k) {
  using Plan = typename K::ProductPlan;
  static_assert(sizeof(Plan) <= sizeof(ProductCall::Plan) && alignof(Plan) <= alignof(ProductCall::Plan),
                "the kernel's plan must fit ProductCall::Plan");
  static_assert(std::is_trivially_copyable_v<Plan>, "ProductCall::Plan is copied as bytes");
  auto prepare = [](const void* state, const int64_t* x, int rank, int64_t* y, ProductCall::Plan* plan,
                    size_t* scratch_bytes) {
    return static_cast<const K*>(state)->PrepareProduct(x, rank, y, new (plan->bytes) Plan, scratch_bytes);
  };
  auto run = [](const void* state, const ProductCall::Plan* plan, const float* x, float* y, void* scratch) {
    static_cast<const K*>(state)->RunProduct(*std::launder(reinterpret_cast<const Plan*>(plan->bytes)), x, y, scratch);
  };
  return {+prepare, +run, k};
}

}  // namespace nuphar
