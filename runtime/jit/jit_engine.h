// The LLVM 14 ORC engine behind every generated kernel (spec runtime.md R1): one LLJIT per code
// generation target (host, or the tier nuphar_codegen_target names), created on first use and
// shared by every session of the process. Each compiled kernel gets a JITDylib of its own, so
// destroying the kernel frees its code; the process's symbols (libm) and the runtime's C ABI
// entry points (jit_runtime_abi.h) resolve from the main JITDylib.
//
// Thread-safe: sessions compile concurrently.
#pragma once

#include <memory>
#include <string>

#include "graph/error.h"

namespace llvm {
class LLVMContext;
class Module;
}  // namespace llvm

namespace nuphar::jit {

/// Where and how code is generated; part of every kernel's identity.
struct CodegenTarget {
  std::string cpu;       ///< LLVM CPU name (llvm::sys::getHostCPUName or a tier's CPU)
  std::string features;  ///< "+avx2,+fma,..." as LLVM reads them
  std::string Describe() const { return cpu + " " + features; }
};

/// The target for a nuphar_codegen_target value ("" or "host": this CPU; avx2 / avxvnni / avx512 /
/// avx512vnni: that tier's features on a CPU that has them; another value is an LLVM CPU name).
Expected<CodegenTarget> ResolveTarget(const std::string& setting);

/// Debug output of a compile (R5: codegen_dump_module).
struct DumpOptions {
  bool ll = false;   ///< write <function>.ll (optimized IR) to the current directory
  bool asm_ = false; ///< write <function>.s
};

/// One compiled kernel's code; the code is freed with it.
class CompiledCode {
 public:
  virtual ~CompiledCode() = default;
  /// Address of the entry function.
  virtual void* entry() const = 0;
};

/// Optimizes `module` (O3 for the target: vectorized loops, no fast-math, no FMA contraction) and
/// compiles it; `entry` names the function whose address the result holds.
Expected<std::unique_ptr<CompiledCode>> CompileModule(std::unique_ptr<llvm::LLVMContext> context,
                                                      std::unique_ptr<llvm::Module> module,
                                                      const std::string& entry, const CodegenTarget& target,
                                                      const DumpOptions& dump);

}  // namespace nuphar::jit
