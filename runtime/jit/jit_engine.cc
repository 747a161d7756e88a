// LLJIT per target, per-kernel JITDylibs, the O3 pipeline and module dumps (jit_engine.h).
#include "runtime/jit/jit_engine.h"

#include <llvm/ADT/StringMap.h>
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
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/Target/TargetMachine.h>
#include <llvm/Transforms/Utils/Cloning.h>

#include <atomic>
#include <map>
#include <mutex>

#include "runtime/jit/jit_runtime_abi.h"
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

// One LLJIT for one target. Its main JITDylib holds the process's symbols and the runtime ABI;
// every kernel's JITDylib links against it.
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
    // No FMA contraction (R3 and the reference's rounding): only explicit llvm.fmuladd may fuse,
    // and codegen emits none.
    jtmb->getOptions().AllowFPOpFusion = llvm::FPOpFusion::Standard;
    auto tm = jtmb->createTargetMachine();
    if (!tm) return Diag::Msg("jit: no target machine for " + target.Describe() + ": " + ErrorText(tm.takeError()));
    auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(*jtmb).create();
    if (!jit) return Diag::Msg("jit: LLJIT creation failed: " + ErrorText(jit.takeError()));
    auto engine = std::unique_ptr<Engine>(new Engine());
    engine->tm_ = std::move(*tm);
    engine->jit_ = std::move(*jit);
    llvm::orc::JITDylib& main = engine->jit_->getMainJITDylib();
    const char prefix = engine->jit_->getDataLayout().getGlobalPrefix();
    auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
    if (!process) return Diag::Msg("jit: process symbols: " + ErrorText(process.takeError()));
    main.addGenerator(std::move(*process));
    llvm::orc::SymbolMap abi;
    auto& es = engine->jit_->getExecutionSession();
    for (const AbiSymbol& s : RuntimeAbiSymbols())
      abi[es.intern(s.name)] = llvm::JITEvaluatedSymbol(llvm::pointerToJITTargetAddress(s.address),
                                                        llvm::JITSymbolFlags::Exported);
    if (auto err = main.define(llvm::orc::absoluteSymbols(std::move(abi))))
      return Diag::Msg("jit: runtime symbols: " + ErrorText(std::move(err)));
    return engine;
  }

  llvm::TargetMachine& target_machine() { return *tm_; }
  llvm::orc::LLJIT& jit() { return *jit_; }
  /// Held while compiling into or removing from this engine: the TargetMachine caches subtargets
  /// without a lock, so concurrent sessions take turns (compiling is load-time work).
  std::mutex& mutex() { return mutex_; }

 private:
  Engine() = default;
  std::unique_ptr<llvm::TargetMachine> tm_;
  std::unique_ptr<llvm::orc::LLJIT> jit_;
  std::mutex mutex_;
};

class CompiledKernelCode final : public CompiledCode {
 public:
  CompiledKernelCode(Engine* engine, llvm::orc::JITDylib* dylib, void* entry)
      : engine_(engine), dylib_(dylib), entry_(entry) {}
  ~CompiledKernelCode() override {
    std::lock_guard<std::mutex> lock(engine_->mutex());
    if (auto err = engine_->jit().getExecutionSession().removeJITDylib(*dylib_)) llvm::consumeError(std::move(err));
  }
  void* entry() const override { return entry_; }

 private:
  Engine* engine_;
  llvm::orc::JITDylib* dylib_;
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

Expected<CodegenTarget> ResolveTarget(const std::string& setting) {
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

Expected<std::unique_ptr<CompiledCode>> CompileModule(std::unique_ptr<llvm::LLVMContext> context,
                                                      std::unique_ptr<llvm::Module> module,
                                                      const std::string& entry, const CodegenTarget& target,
                                                      const DumpOptions& dump) {
  NUPHAR_ASSIGN_OR_RETURN(Engine * engine, EngineFor(target));
  std::lock_guard<std::mutex> lock(engine->mutex());
  llvm::TargetMachine& tm = engine->target_machine();
  module->setDataLayout(engine->jit().getDataLayout());
  module->setTargetTriple(tm.getTargetTriple().str());
  {
    std::string errors;
    llvm::raw_string_ostream os(errors);
    NUPHAR_CHECK(!llvm::verifyModule(*module, &os), ("generated module is invalid: " + os.str()).c_str());
  }
  Optimize(*module, tm);
  NUPHAR_RETURN_IF_ERROR(Dump(*module, tm, entry, dump));

  static std::atomic<uint64_t> counter{0};
  auto& es = engine->jit().getExecutionSession();
  auto dylib = es.createJITDylib("nuphar_kernel_" + std::to_string(counter++));
  if (!dylib) return Diag::Msg("jit: " + ErrorText(dylib.takeError()));
  dylib->addToLinkOrder(engine->jit().getMainJITDylib());
  if (auto err = engine->jit().addIRModule(*dylib, llvm::orc::ThreadSafeModule(std::move(module), std::move(context))))
    return Diag::Msg("jit: adding the module failed: " + ErrorText(std::move(err)));
  auto symbol = engine->jit().lookup(*dylib, entry);
  if (!symbol) {
    std::string why = ErrorText(symbol.takeError());
    if (auto err = es.removeJITDylib(*dylib)) llvm::consumeError(std::move(err));
    return Diag::Msg("jit: compiling '" + entry + "' failed: " + why);
  }
  return std::unique_ptr<CompiledCode>(
      new CompiledKernelCode(engine, &*dylib, reinterpret_cast<void*>(symbol->getAddress())));
}

}  // namespace nuphar::jit
