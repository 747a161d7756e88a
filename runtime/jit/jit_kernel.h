// The kernel of an elementwise partition node (partitioner.h), shared with the whole-Scan loop
// (jit_scan_kernel.cc), which calls the same generated body for each step.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/op_kernel.h"
#include "runtime/jit/elementwise_ir.h"
#include "runtime/jit/jit_engine.h"

namespace nuphar {
class GraphPlan;
}

namespace nuphar::jit {

/// The loop bounds of one call: the result shape, [rows, cols] and each input's last dim.
struct ElementwiseGeometry {
  std::vector<int64_t> shape;
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> input_cols;
};

class JitElementwiseKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node);
  ~JitElementwiseKernel() override;

  Status Compute(KernelContext& ctx) const override;
  const char* profile_path() const override { return "jit"; }

  /// Null when the body runs on the reference executor only (its IR was refused).
  const ElementwiseIR* ir() const { return fn_ ? &ir_ : nullptr; }
  const std::string& name() const { return name_; }
  /// Whether inputs of these shapes fit the generated code, and the loop bounds when they do.
  bool Fits(std::span<const Tensor* const> inputs, ElementwiseGeometry* geometry) const;

 private:
  JitElementwiseKernel() = default;
  Expected<std::vector<Tensor>> ReferenceOutputs(KernelContext& ctx) const;
  Status RunReference(KernelContext& ctx) const;
  Status Compare(KernelContext& ctx) const;

  using ElementwiseFn = void (*)(float* const* buffers, int64_t rows, int64_t cols, const int64_t* input_cols,
                                 void* const* abi);
  ElementwiseIR ir_;
  std::string name_, nodes_;
  std::shared_ptr<const GraphPlan> reference_;
  std::unique_ptr<CompiledCode> code_;
  ElementwiseFn fn_ = nullptr;
  bool compare_ = false;
  mutable std::mutex mutex_;
  mutable int64_t compared_runs_ = 0;
  mutable double max_abs_ = 0, max_rel_ = 0;
};

/// codegen_dump_module of the node's session.
DumpOptions DumpOptionsFor(const NodeInfo& node);
/// Adds the kernel to the session's counters: jit_compiled / jit_from_cache / jit_from_so by
/// where its code came from, and the time since `start` to jit_compile_us.
void CountKernel(const NodeInfo& node, const CompiledCode& code, std::chrono::steady_clock::time_point start);
std::string LowerCase(std::string s);

}  // namespace nuphar::jit
