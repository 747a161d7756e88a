// LLVM IR of a whole Scan loop (spec runtime.md §8.2(1)): one function holds the time loop, the
// pointer bumps of the scan inputs and outputs (reverse directions included), every step of the
// body and the state ping-pong, with no per-step dispatch and no allocation:
//
//   void <name>(float** slots, const int64_t* params, int64_t t0, int64_t seq, void* const* abi)
//
// `slots` holds one buffer pointer per body value the steps touch; the loop rewrites the slots
// of the scan inputs and outputs each step and swaps each state's input and output slots after
// it. `params` holds what is only known per Run (ScanLoopLayout): the scratch pointer, the scan
// inputs' and outputs' base pointers and per-step strides, and each step's loop bounds.
// Elementwise steps are their generated bodies, inlined; the others are direct calls into
// runtime kernels (core/op_kernel.h DirectCall) whose function and state pointers are params too:
// the module holds no address. `abi` is RuntimeAbiTable() (jit_runtime_abi.h).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/core/op_kernel.h"
#include "runtime/jit/elementwise_ir.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace nuphar::jit {

struct ScanLoopStep {
  const ElementwiseIR* elementwise = nullptr;  ///< an elementwise step, or
  const DirectCall* direct = nullptr;          ///< a direct call
  std::vector<int> input_slots;                ///< per node input; -1 when absent
  std::vector<int> output_slots;               ///< per node output; -1 when absent
  int params = 0;                              ///< first params index of this step (ScanLoopLayout)
};

/// Which slots and params the loop uses; built with the steps, filled per Run by the kernel.
struct ScanLoopLayout {
  int num_slots = 0;
  std::vector<int> state_in, state_out;  ///< slot of state k's body input / body output
  std::vector<char> state_out_is_scan_output;
  std::vector<int> scan_in, scan_out;  ///< slot of scan input j / scan output k's value
  std::vector<char> scan_in_reverse, scan_out_reverse;
  std::vector<ScanLoopStep> steps;
  // params: [0] scratch; then base, stride per scan input; then per scan output; then per step
  // (elementwise: rows, cols, input_cols...; direct: rows, input sizes..., fn, state).
  int ScanInParams(size_t j) const { return 1 + 2 * static_cast<int>(j); }
  int ScanOutParams(size_t k) const { return 1 + 2 * static_cast<int>(scan_in.size() + k); }
  static int DirectFnParam(const ScanLoopStep& step) { return step.params + 1 + static_cast<int>(step.input_slots.size()); }
  int num_params = 0;
  /// Assigns each step's params offset and num_params.
  void AssignParams();
};

std::unique_ptr<llvm::Module> EmitScanLoop(const ScanLoopLayout& layout, const std::string& name,
                                           llvm::LLVMContext& context);

}  // namespace nuphar::jit
