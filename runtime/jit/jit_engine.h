// The LLVM 14 ORC engine behind every generated kernel (spec runtime.md R1, R4): one LLJIT per
// code generation target (host, or the tier nuphar_codegen_target names), created on first use
// and shared by every session of the process. Each kernel gets a JITDylib of its own, so
// destroying the kernel frees its code; libm resolves from the process. The compiler behind
// LLJIT consults the kernel cache (kernel_cache.h) through an llvm::ObjectCache; kernels the AOT
// library serves skip LLJIT altogether.
//
// Thread-safe: sessions compile concurrently (one compile at a time per engine).
#pragma once

#include <memory>
#include <string>

#include "graph/error.h"
#include "runtime/jit/kernel_cache.h"

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

/// The name a kernel module gives its entry function; CompileKernel renames it k_<hash>.
inline constexpr const char kKernelEntry[] = "nuphar_kernel";

/// One kernel's code; code the JIT compiled or loaded is freed with it (an AOT library's stays).
class CompiledCode {
 public:
  virtual ~CompiledCode() = default;
  /// Address of the entry function.
  virtual void* entry() const = 0;
  /// k_<hash>: the kernel's key (kernel_cache.h), its symbol and its cache file name.
  const std::string& name() const { return name_; }
  CodeSource source() const { return source_; }

 protected:
  CompiledCode(std::string name, CodeSource source) : name_(std::move(name)), source_(source) {}

 private:
  std::string name_;
  CodeSource source_;
};

/// Prepares `module`, whose entry function is named kKernelEntry, for `target` (data layout,
/// triple; verified) and renames the entry to the kernel's key k_<hash> (kernel_cache.h), which
/// it returns: equal keys mean interchangeable code, so a session compiles each key once.
Expected<std::string> NameKernel(llvm::Module& module, const CodegenTarget& target);

/// The code of `module`, named by NameKernel: from the AOT library, the object cache or the
/// compiler, in that order (kernel_cache.h; `cache` disabled: the compiler only). Compiling
/// optimizes at O3 for the target (vectorized loops, no fast-math, no FMA contraction) and emits
/// position-independent code, saved to the cache when it is enabled. With cache.force_no_jit, a
/// kernel the cache does not serve is an error naming it.
Expected<std::unique_ptr<CompiledCode>> CompileKernel(std::unique_ptr<llvm::LLVMContext> context,
                                                      std::unique_ptr<llvm::Module> module, const std::string& name,
                                                      const CodegenTarget& target, const DumpOptions& dump,
                                                      const CachePolicy& cache);

}  // namespace nuphar::jit
