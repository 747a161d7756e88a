// LLJIT per target, per-kernel JITDylibs, the O3 pipeline and module dumps (jit_engine.h).
#include "runtime/jit/jit_engine.h"

#include <llvm/ADT/StringExtras.h>
#include <llvm/ADT/StringMap.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/ExecutionEngine/ObjectCache.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/ExecutionEngine/Orc/ThreadSafeModule.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/FileSystem.h>
#include <llvm/Support/Host.h>
#include <llvm/Support/MemoryBuffer.h>
#include <llvm/Support/SHA256.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <array>
#include <atomic>
#include <map>
#include <mutex>

#include "graph/diagnostics.h"
#include "runtime/platform/cpu_features.h"

namespace nuphar::jit {
namespace {

std::string ErrorText(llvm::Error e) { return llvm::toString(std::move(e)); }

void InitializeLlvmOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

// Features a tier must not use: everything above it.
std::vector<std::string> FeaturesAbove(IsaTier tier) {
  std::vector<std::string> off;
  if (tier < IsaTier::kAvx512Vnni) off.insert(off.end(), {"avx512vnni"});
  if (tier < IsaTier::kAvx512)
    off.insert(off.end(), {"avx512f", "avx512bw", "avx512vl", "avx512dq", "avx512cd", "avx512vbmi", "avx512vbmi2",
                           "avx512bitalg", "avx512vpopcntdq", "avx512ifma", "avx512bf16", "avx512fp16", "avx512vnni"});
  if (tier < IsaTier::kAvxVnni) off.insert(off.end(), {"avxvnni"});
  if (tier < IsaTier::kAvx2) off.insert(off.end(), {"avx", "avx2", "fma", "f16c", "avxvnni"});
  return off;
}

// The ObjectCache behind an engine's compiler (R4): keeps the object LLJIT's compiler produced so
// CompileKernel can save it in the kernel cache. It never hands the compiler an object: a cached
// kernel is linked without the compiler (LinkObject). Requests are keyed by module identifier
// (the kernel's name and a sequence number), so kernels compile side by side.
class KernelObjectCache final : public llvm::ObjectCache {
 public:
  void Begin(const std::string& module_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    compiled_[module_id] = nullptr;
  }
  /// Ends the request: the object the compiler produced, if it ran.
  std::unique_ptr<llvm::MemoryBuffer> End(const std::string& module_id) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto node = compiled_.extract(module_id);
    return node.empty() ? nullptr : std::move(node.mapped());
  }

  void notifyObjectCompiled(const llvm::Module* m, llvm::MemoryBufferRef object) override {
    auto copy = llvm::MemoryBuffer::getMemBufferCopy(object.getBuffer(), object.getBufferIdentifier());
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = compiled_.find(m->getModuleIdentifier());
    if (it != compiled_.end()) it->second = std::move(copy);
  }
  std::unique_ptr<llvm::MemoryBuffer> getObject(const llvm::Module*) override { return nullptr; }

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<llvm::MemoryBuffer>> compiled_;
};

// One LLJIT for one target. Its main JITDylib holds the process's symbols (libm); every kernel's
// JITDylib links against it. Generated code names nothing of the runtime (jit_runtime_abi.h).
// Compiles run side by side: each makes its own TargetMachine (LLVM's caches subtargets without a
// lock), for the optimizer here and for codegen in LLJIT's ConcurrentIRCompiler.
class Engine {
 public:
  static Expected<std::unique_ptr<Engine>> Create(const CodegenTarget& target) {
    InitializeLlvmOnce();
    auto jtmb = llvm::orc::JITTargetMachineBuilder::detectHost();
    if (!jtmb) return Diag::Msg("jit: cannot describe the host: " + ErrorText(jtmb.takeError()));
    jtmb->setCPU(target.cpu);
    llvm::SubtargetFeatures features(target.features);
    jtmb->getFeatures() = features;
    jtmb->setCodeGenOptLevel(llvm::CodeGenOpt::Aggressive);
    // Position-independent: a cached object must also link into create_shared's library.
    jtmb->setRelocationModel(llvm::Reloc::PIC_);
    // No FMA contraction (R3 and the reference's rounding): only explicit llvm.fmuladd may fuse,
    // and codegen emits none.
    jtmb->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Standard;
    auto tm = jtmb->createTargetMachine();
    if (!tm) return Diag::Msg("jit: no target machine for " + target.Describe() + ": " + ErrorText(tm.takeError()));
    auto engine = std::unique_ptr<Engine>(new Engine());
    engine->jtmb_ = std::make_unique<llvm::orc::JITTargetMachineBuilder>(*jtmb);
    engine->triple_ = (*tm)->getTargetTriple().str();
    Engine* raw = engine.get();
    auto jit = llvm::orc::LLJITBuilder()
                   .setJITTargetMachineBuilder(*jtmb)
                   .setCompileFunctionCreator(
                       [raw](llvm::orc::JITTargetMachineBuilder builder)
                           -> llvm::Expected<std::unique_ptr<llvm::orc::IRCompileLayer::IRCompiler>> {
                         return std::make_unique<llvm::orc::ConcurrentIRCompiler>(std::move(builder), &raw->object_cache_);
                       })
                   .create();
    if (!jit) return Diag::Msg("jit: LLJIT creation failed: " + ErrorText(jit.takeError()));
    engine->jit_ = std::move(*jit);
    // ORC reports a failed link (a symbol an object needs is missing) here besides failing the
    // lookup; its default reporter prints to stderr, and libraries never print. The link runs on
    // the loading thread, so the warning reaches that load's diagnostic sink.
    engine->jit_->getExecutionSession().setErrorReporter([](llvm::Error err) {
      ReportDiagnostic(Severity::kWarning, "nuphar: warning: jit: " + ErrorText(std::move(err)));
    });
    llvm::orc::JITDylib& main = engine->jit_->getMainJITDylib();
    const char prefix = engine->jit_->getDataLayout().getGlobalPrefix();
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
    if (!process) return Diag::Msg("jit: process symbols: " + ErrorText(process.takeError()));
    main.addGenerator(std::move(*process));
    return engine;
  }

  /// A TargetMachine of this engine's target for one compile (not shared between threads).
  Expected<std::unique_ptr<llvm::TargetMachine>> CreateTargetMachine() const {
    auto tm = jtmb_->createTargetMachine();
    if (!tm) return Diag::Msg("jit: no target machine: " + ErrorText(tm.takeError()));
    return std::move(*tm);
  }
  const std::string& triple() const { return triple_; }
  llvm::orc::LLJIT& jit() { return *jit_; }
  KernelObjectCache& object_cache() { return object_cache_; }

 private:
  Engine() = default;
  std::unique_ptr<llvm::orc::JITTargetMachineBuilder> jtmb_;
  std::string triple_;
  KernelObjectCache object_cache_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

// Frees a kernel's JITDylib (its code and symbols); a failure to free leaves memory, not a fault.
void RemoveKernelDylib(Engine* engine, llvm::orc::JITDylib* dylib) {
  if (auto err = engine->jit().getExecutionSession().removeJITDylib(*dylib)) llvm::consumeError(std::move(err));
}

// Code in a JITDylib of its own (compiled, or linked from a cached object).
class JitDylibCode final : public CompiledCode {
 public:
  JitDylibCode(std::string name, CodeSource source, Engine* engine, llvm::orc::JITDylib* dylib, void* entry)
      : CompiledCode(std::move(name), source), engine_(engine), dylib_(dylib), entry_(entry) {}
  ~JitDylibCode() override { RemoveKernelDylib(engine_, dylib_); }
  void* entry() const override { return entry_; }

 private:
  Engine* engine_;
  llvm::orc::JITDylib* dylib_;
  void* entry_;
};

// Code of the AOT library (opened for the process's lifetime).
class SharedLibraryCode final : public CompiledCode {
 public:
  SharedLibraryCode(std::string name, void* entry) : CompiledCode(std::move(name), CodeSource::kSharedLibrary), entry_(entry) {}
  void* entry() const override { return entry_; }

 private:
  void* entry_;
};

std::mutex engines_mutex;

// Engines live for the process (the code of destroyed kernels is freed with their JITDylib).
Expected<Engine*> EngineFor(const CodegenTarget& target) {
  static std::map<std::string, std::unique_ptr<Engine>>* engines = new std::map<std::string, std::unique_ptr<Engine>>();
  std::lock_guard<std::mutex> lock(engines_mutex);
  auto it = engines->find(target.Describe());
  if (it != engines->end()) return it->second.get();
  NUPHAR_ASSIGN_OR_RETURN(auto engine, Engine::Create(target));
  Engine* raw = engine.get();
  engines->emplace(target.Describe(), std::move(engine));
  return raw;
}

void Optimize(llvm::Module& module, llvm::TargetMachine& tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  llvm::PassBuilder pb(&tm, tuning);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  mpm.run(module, mam);
}

Status Dump(llvm::Module& module, llvm::TargetMachine& tm, const std::string& entry, const DumpOptions& dump) {
  if (dump.ll) {
    std::error_code ec;
    llvm::raw_fd_ostream os(entry + ".ll", ec, llvm::sys::fs::OF_Text);
    if (ec) return Diag::File(entry + ".ll", "cannot write the module dump: " + ec.message());
    module.print(os, nullptr);
  }
  if (dump.asm_) {
    std::error_code ec;
    llvm::raw_fd_ostream os(entry + ".s", ec, llvm::sys::fs::OF_Text);
    if (ec) return Diag::File(entry + ".s", "cannot write the assembly dump: " + ec.message());
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(module);
    llvm::legacy::PassManager pm;
    if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CGFT_AssemblyFile))
      return Diag::Msg("jit: the target cannot emit assembly");
    pm.run(*copy);
  }
  return Status::OK();
}

}  // namespace

namespace {

// The target of one nuphar_codegen_target value, built from LLVM's host description.
Expected<CodegenTarget> DescribeTarget(const std::string& setting) {
  InitializeLlvmOnce();
  CodegenTarget t;
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::StringMap<bool> host;
  llvm::sys::getHostCPUFeatures(host);
  std::optional<IsaTier> tier;
  if (!setting.empty() && setting != "host") {
    tier = ParseIsaTier(setting);
    if (!tier) return Diag::Msg("settings: nuphar_codegen_target '" + setting + "' is not a known tier");
    if (!HostCpu().Supports(*tier))
      return Diag::Msg("settings: nuphar_codegen_target '" + setting + "' is not supported by this CPU");
    for (const std::string& f : FeaturesAbove(*tier)) host[f] = false;
  }
  std::vector<std::string> names;
  for (const auto& kv : host) names.push_back(kv.getKey().str());
  std::sort(names.begin(), names.end());  // a stable string: it is part of the kernel's identity
  for (const std::string& n : names) {
    if (!t.features.empty()) t.features += ",";
    t.features += (host[n] ? "+" : "-") + n;
  }
  return t;
}

}  // namespace

// Every kernel asks at every load; LLVM decodes CPUID into a fresh feature map each time (about
// 0.1 ms, as much as linking a cached kernel). The host does not change while the process runs,
// so each setting's target is described once; a refused setting is not kept (it fails the load).
Expected<CodegenTarget> ResolveTarget(const std::string& setting) {
  static std::mutex mutex;
  static auto* resolved = new std::map<std::string, CodegenTarget>();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = resolved->find(setting); it != resolved->end()) return it->second;
  }
  NUPHAR_ASSIGN_OR_RETURN(CodegenTarget t, DescribeTarget(setting));
  std::lock_guard<std::mutex> lock(mutex);
  return resolved->emplace(setting, std::move(t)).first->second;
}

namespace {

// k_<hash>: SHA-256 (first 128 bits) over everything the object depends on (kernel_cache.h):
// the unoptimized IR (entry still named kKernelEntry, module named "nuphar": no name or counter
// of the session enters it), the codegen options, the target, LLVM's version, kCacheVersion.
// Hashes (SHA-256) what is written to it instead of keeping it: the kernel key is the hash of the
// module's text, which need not exist as one string (printing into a string, unbuffered, then
// hashing it was most of a warm session's time per kernel).
class Sha256Stream final : public llvm::raw_ostream {
 public:
  Sha256Stream() { SetBufferSize(1 << 16); }
  ~Sha256Stream() override { flush(); }
  std::string HexDigest() {
    flush();
    return llvm::toHex(sha_.final(), /*LowerCase=*/true);
  }

 private:
  void write_impl(const char* bytes, size_t size) override {
    sha_.update(llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t*>(bytes), size));
    written_ += size;
  }
  uint64_t current_pos() const override { return written_; }
  llvm::SHA256 sha_;
  uint64_t written_ = 0;
};

std::string KernelKey(const llvm::Module& module, const CodegenTarget& target) {
  Sha256Stream os;
  module.print(os, nullptr);
  os << "\n; codegen O3 reloc=pic fp-contract=standard fast-math=off"
     << "\n; target " << module.getTargetTriple() << " " << target.cpu << " " << target.features
     << "\n; llvm " << LLVM_VERSION_STRING << "\n; cache " << kCacheVersion << "\n";
  return "k_" + os.HexDigest().substr(0, 32);
}

// A new JITDylib for one kernel, linking against the engine's main JITDylib (libm).
Expected<llvm::orc::JITDylib*> NewKernelDylib(Engine* engine) {
  static std::atomic<uint64_t> counter{0};
  auto dylib = engine->jit().getExecutionSession().createJITDylib("nuphar_kernel_" + std::to_string(counter++));
  if (!dylib) return Diag::Msg("jit: " + ErrorText(dylib.takeError()));
  dylib->addToLinkOrder(engine->jit().getMainJITDylib());
  return &*dylib;
}

// Looks the kernel's entry up in `dylib`, which then belongs to the returned code; on failure the
// dylib is removed.
Expected<std::unique_ptr<CompiledCode>> LookUpEntry(Engine* engine, llvm::orc::JITDylib* dylib, const std::string& name,
                                                    CodeSource source) {
  auto symbol = engine->jit().lookup(*dylib, name);
  if (!symbol) {
    std::string why = ErrorText(symbol.takeError());
    RemoveKernelDylib(engine, dylib);
    return Diag::Msg("jit: linking '" + name + "' failed: " + why);
  }
  return std::unique_ptr<CompiledCode>(
      new JitDylibCode(name, source, engine, dylib, reinterpret_cast<void*>(symbol->getAddress())));
}

// Links a verified cached object straight into a new JITDylib. Going through the IR layer with
// the object cache instead made LLJIT's compiler build a TargetMachine per kernel only to be
// handed the object, and needed a copy of the module in case the link failed.
Expected<std::unique_ptr<CompiledCode>> LinkObject(Engine* engine, const std::string& name,
                                                   std::unique_ptr<llvm::MemoryBuffer> object) {
  NUPHAR_ASSIGN_OR_RETURN(llvm::orc::JITDylib * dylib, NewKernelDylib(engine));
  if (auto err = engine->jit().addObjectFile(*dylib, std::move(object))) {
    std::string why = ErrorText(std::move(err));
    RemoveKernelDylib(engine, dylib);
    return Diag::Msg("jit: adding the object failed: " + why);
  }
  return LookUpEntry(engine, dylib, name, CodeSource::kObjectCache);
}

// Compiles `module` (optimized already) into a new JITDylib and looks its entry up; `compiled`
// receives the object LLJIT's compiler produced (KernelObjectCache::notifyObjectCompiled).
Expected<std::unique_ptr<CompiledCode>> CompileAndLink(Engine* engine, const std::string& name,
                                                       std::unique_ptr<llvm::Module> module,
                                                       llvm::orc::ThreadSafeContext context,
                                                       std::unique_ptr<llvm::MemoryBuffer>* compiled) {
  static std::atomic<uint64_t> counter{0};
  NUPHAR_ASSIGN_OR_RETURN(llvm::orc::JITDylib * dylib, NewKernelDylib(engine));
  const std::string module_id = name + "#" + std::to_string(counter++);  // concurrent compiles of one kernel
  module->setModuleIdentifier(module_id);
  engine->object_cache().Begin(module_id);
  if (auto err = engine->jit().addIRModule(*dylib, llvm::orc::ThreadSafeModule(std::move(module), context))) {
    engine->object_cache().End(module_id);
    RemoveKernelDylib(engine, dylib);
    return Diag::Msg("jit: adding the module failed: " + ErrorText(std::move(err)));
  }
  auto code = LookUpEntry(engine, dylib, name, CodeSource::kCompiled);
  std::unique_ptr<llvm::MemoryBuffer> produced = engine->object_cache().End(module_id);
  if (compiled) *compiled = std::move(produced);
  return code;
}

}  // namespace

Expected<std::string> NameKernel(llvm::Module& module, const CodegenTarget& target) {
  NUPHAR_ASSIGN_OR_RETURN(Engine * engine, EngineFor(target));
  module.setModuleIdentifier("nuphar");
  module.setSourceFileName("nuphar");
  module.setDataLayout(engine->jit().getDataLayout());
  module.setTargetTriple(engine->triple());
  {
    std::string errors;
    llvm::raw_string_ostream os(errors);
    NUPHAR_CHECK(!llvm::verifyModule(module, &os), ("generated module is invalid: " + os.str()).c_str());
  }
  llvm::Function* entry = module.getFunction(kKernelEntry);
  NUPHAR_CHECK(entry != nullptr, "kernel module without its entry function");
  std::string name = KernelKey(module, target);
  entry->setName(name);
  return name;
}

Expected<std::unique_ptr<CompiledCode>> CompileKernel(std::unique_ptr<llvm::LLVMContext> context,
                                                      std::unique_ptr<llvm::Module> module_in, const std::string& name,
                                                      const CodegenTarget& target, const DumpOptions& dump,
                                                      const CachePolicy& cache) {
  // The module must die before its context, on every return path: locals die in reverse order.
  llvm::orc::ThreadSafeContext shared_context(std::move(context));
  std::unique_ptr<llvm::Module> module = std::move(module_in);
  NUPHAR_ASSIGN_OR_RETURN(Engine * engine, EngineFor(target));
  NUPHAR_CHECK(module->getFunction(name) != nullptr, "kernel module not named by NameKernel");

  if (void* address = FindInSharedLibrary(cache, name)) {
    return std::unique_ptr<CompiledCode>(new SharedLibraryCode(name, address));
  }
  if (auto object = LoadCachedObject(cache, name)) {
    // Linking a verified object can still fail (a symbol it needs is missing here): then the
    // kernel compiles as if it were not cached.
    auto code = LinkObject(engine, name, std::move(object));
    if (code) return code;
    ReportDiagnostic(Severity::kWarning, "nuphar: warning: cache: " + cache.dir + "/" + name + ".o: " +
                                             code.diag().reason + "; compiling the kernel again");
  }
  if (cache.force_no_jit)
    return Diag::Msg("nuphar_cache_force_no_jit: kernel " + name + " is not served by the cache (" +
                     (cache.enabled() ? cache.dir + "/" + cache.so_name + " or " + cache.dir + "/" + name + ".o"
                                      : std::string("nuphar_cache_path is unset")) +
                     ")");
  NUPHAR_ASSIGN_OR_RETURN(std::unique_ptr<llvm::TargetMachine> tm, engine->CreateTargetMachine());
  Optimize(*module, *tm);
  NUPHAR_RETURN_IF_ERROR(Dump(*module, *tm, name, dump));
  std::unique_ptr<llvm::MemoryBuffer> object;
  NUPHAR_ASSIGN_OR_RETURN(auto code,
                          CompileAndLink(engine, name, std::move(module), shared_context, &object));
  if (object && cache.enabled()) SaveCachedObject(cache, name, object->getBuffer());
  return code;
}

}  // namespace nuphar::jit
