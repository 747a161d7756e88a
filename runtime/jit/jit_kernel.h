// The kernel of an elementwise partition node (partitioner.h), shared with the whole-Scan loop
// (jit_scan_kernel.cc), which calls the same generated body for each step.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "runtime/core/op_kernel.h"
#include "runtime/jit/elementwise_ir.h"
#include "runtime/jit/jit_engine.h"
#include "runtime/jit/partition_fallback.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace nuphar::jit {

/// A kernel's code, obtained by a load job after the kernel's factory returned
/// (QueueCompile). Shared by the kernel and the job, so either may be gone first; read-only once
/// the session is loaded.
struct KernelCode {
  std::unique_ptr<CompiledCode> code;
  void* entry = nullptr;  ///< code->entry(); null until the job ran (or when it failed)
  std::string name;       ///< k_<hash>
};

/// The code of `module`, whose entry is kKernelEntry, for the node's kernel to keep: the code of
/// an identical kernel (same key, NameKernel) of the same session when there is one, else a new
/// KernelCode whose compile (or cache load) is queued for the end of the session load
/// (NodeInfo::DeferUntilLoaded) with the node's target, dumps and cache policy; kernels of a
/// session then compile side by side when it has more than one thread. The job fills the code,
/// adds it to the session's counters (jit_compiled, jit_from_cache or jit_from_so by where it came
/// from; the time to jit_compile_us; an identical kernel counts jit_shared_kernels instead) and
/// calls `done` with the kernel's name (at once for an identical kernel).
Expected<std::shared_ptr<KernelCode>> QueueCompile(const NodeInfo& node, std::unique_ptr<llvm::LLVMContext> context,
                                                   std::unique_ptr<llvm::Module> module,
                                                   std::function<void(const std::string& name)> done = nullptr);

/// QueueCompile for a generated kernel of the model nodes `nodes`: with the codegen_dump_lower
/// report (the kernel IR text `ir_text` under `nodes`), and the session's jit_kernels counted.
Expected<std::shared_ptr<KernelCode>> QueueKernelCompile(const NodeInfo& node, std::unique_ptr<llvm::LLVMContext> context,
                                                         std::unique_ptr<llvm::Module> module, const std::string& nodes,
                                                         std::string ir_text);
/// QueueKernelCompile for a partition kernel with a fallback (the dump under the body's nodes),
/// and the fallback's compare reports named after the code.
Expected<std::shared_ptr<KernelCode>> QueuePartitionCompile(const NodeInfo& node, std::unique_ptr<llvm::LLVMContext> context,
                                                            std::unique_ptr<llvm::Module> module, std::string ir_text,
                                                            PartitionFallback& fallback);

/// The loop bounds of one call: the result shape, [rows, cols] and each input's last dim. Inline
/// storage: a partition runs on every Run (a streaming model calls hundreds of them per frame), and
/// a heap allocation per call cost more than the loop of a small one. Kernels of rank or input
/// count above kInline spill to the heap.
class ElementwiseGeometry {
 public:
  static constexpr size_t kInline = 16;
  int64_t rows = 0, cols = 0;

  std::span<const int64_t> shape() const { return {Data(shape_inline_, shape_heap_, rank_), rank_}; }
  std::span<const int64_t> input_cols() const { return {Data(cols_inline_, cols_heap_, inputs_), inputs_}; }

 private:
  friend class JitElementwiseKernel;
  static int64_t* Data(int64_t* inline_buffer, std::vector<int64_t>& heap, size_t n) {
    return n > kInline ? heap.data() : inline_buffer;
  }
  static const int64_t* Data(const int64_t* inline_buffer, const std::vector<int64_t>& heap, size_t n) {
    return n > kInline ? heap.data() : inline_buffer;
  }
  static int64_t* Resize(int64_t* inline_buffer, std::vector<int64_t>& heap, size_t n) {
    if (n > kInline) heap.resize(n);
    return Data(inline_buffer, heap, n);
  }
  int64_t shape_inline_[kInline];
  int64_t cols_inline_[kInline];
  std::vector<int64_t> shape_heap_, cols_heap_;
  size_t rank_ = 0, inputs_ = 0;
};

class JitElementwiseKernel final : public OpKernel {
 public:
  static Expected<std::unique_ptr<OpKernel>> Create(const NodeInfo& node);

  Status Compute(KernelContext& ctx) const override;
  const char* profile_path() const override { return "jit"; }

  /// Null when the body runs on the reference executor only (its IR was refused).
  const ElementwiseIR* ir() const { return has_ir_ ? &ir_ : nullptr; }
  const std::string& name() const { return code_->name; }
  /// Whether inputs of these shapes fit the generated code, and the loop bounds when they do.
  bool Fits(std::span<const Tensor* const> inputs, ElementwiseGeometry* geometry) const;

 private:
  JitElementwiseKernel() = default;

  using ElementwiseFn = void (*)(float* const* buffers, int64_t rows, int64_t cols, const int64_t* input_cols,
                                 void* const* abi);
  ElementwiseIR ir_;
  bool has_ir_ = false;
  std::unique_ptr<PartitionFallback> fallback_;
  std::shared_ptr<KernelCode> code_ = std::make_shared<KernelCode>();
};

/// codegen_dump_module of the node's session.
DumpOptions DumpOptionsFor(const NodeInfo& node);

}  // namespace nuphar::jit
