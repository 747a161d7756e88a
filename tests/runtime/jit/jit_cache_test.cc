// The JIT's kernel cache and AOT library (runtime/jit/kernel_cache.h, create_shared.h; spec
// runtime.md R4): a warm cache compiles nothing; identical kernels of two models share one
// object; every fault (truncated, garbage or foreign objects, a garbage manifest, a library of
// another version or model, an unwritable directory, a full disk) is a warning and a recompile
// with unchanged outputs and nothing corrupt left; create_shared + nuphar_cache_force_no_jit runs
// with zero compilations; two processes filling one directory leave every object verifiable.
// The load cache beside the objects (runtime/jit/load_cache.h) serves a second session the same
// inferred types and shapes, and survives the same faults with a warning and a full load.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>

#include "benchmark/rnn_model_gen.h"
#include "editor/editor.h"
#include "graph/diagnostics.h"
#include "graph/model_io.h"
#include "quantizer/quantizer.h"
#include "runtime/jit/create_shared.h"
#include "runtime/jit/kernel_cache.h"
#include "runtime/session.h"

extern char** environ;

namespace nuphar {
namespace {
namespace fs = std::filesystem;

// An int8 to_scan LSTM (one generated Scan loop plus elementwise partitions); `seed` changes
// the weights only, so two seeds give two models with identical kernels.
onnx::ModelProto MakeModel(uint32_t seed, int64_t hidden = 40) {
  bench::RnnModelSpec spec;
  spec.op = "lstm";
  spec.input_dim = 24;
  spec.hidden_dim = hidden;
  spec.seq_len = "seq";
  spec.seed = seed;
  auto model = bench::MakeRnnModel(spec);
  EXPECT_TRUE(model.ok()) << model.message();
  editor::EditorOptions eo;
  eo.log = [](const std::string&) {};
  EXPECT_TRUE(editor::RunEditor("to_scan", &*model, eo).ok());
  quant::QuantizeOptions qo;
  qo.only_for_scan = true;
  EXPECT_TRUE(quant::Quantize(&*model, qo).ok());
  return *model;
}

// A bidirectional two-layer GRU: several Scan loops and partitions, for side-by-side compiles.
onnx::ModelProto MakeOtherShapesModel() {
  bench::RnnModelSpec spec;
  spec.op = "gru";
  spec.input_dim = 24;
  spec.hidden_dim = 40;
  spec.layers = 2;
  spec.bidirectional = true;
  spec.seq_len = "seq";
  auto model = bench::MakeRnnModel(spec);
  EXPECT_TRUE(model.ok()) << model.message();
  editor::EditorOptions eo;
  eo.log = [](const std::string&) {};
  EXPECT_TRUE(editor::RunEditor("to_scan", &*model, eo).ok());
  return *model;
}

NamedTensors Inputs(const onnx::ModelProto& model) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<float> v(9 * 24);
  for (auto& x : v) x = dist(rng);
  return {{model.graph().input(0).name(), Tensor::FromVector<float>({9, 1, 24}, v)}};
}

struct Loaded {
  std::unique_ptr<Session> session;
  std::vector<Tensor> outputs;
  std::vector<std::string> warnings;
  int64_t compiled = 0, from_cache = 0, from_so = 0, shapes_from_cache = 0, jit_kernels = 0, jit_nodes = 0;
};

// How a test hands the model to the session: the load cache keys only models given as bytes
// (CreateFromBytes, or Create from a file).
enum class Given { kProto, kBytes };

Loaded Load(const onnx::ModelProto& model, const std::string& settings, Given given = Given::kProto) {
  Loaded l;
  DiagnosticCapture capture;
  SessionOptions options;
  options.settings = settings;
  const std::string bytes = given == Given::kBytes ? model.SerializeAsString() : std::string();
  auto session = given == Given::kBytes ? Session::CreateFromBytes(bytes.data(), bytes.size(), options)
                                        : Session::CreateFromModel(model, options);
  EXPECT_TRUE(session.ok()) << session.message();
  if (!session.ok()) return l;
  l.session = std::move(*session);
  auto out = l.session->Run(Inputs(model));
  EXPECT_TRUE(out.ok()) << out.message();
  if (out.ok()) l.outputs = std::move(*out);
  l.warnings = capture.Texts(Severity::kWarning);
  l.compiled = l.session->counter("jit_compiled");
  l.from_cache = l.session->counter("jit_from_cache");
  l.from_so = l.session->counter("jit_from_so");
  l.shapes_from_cache = l.session->counter("shapes_from_cache");
  l.jit_kernels = l.session->counter("jit_kernels");
  l.jit_nodes = l.session->counter("jit_nodes");
  return l;
}

// Load with a full disk: every file write past `max_file_bytes` fails (EFBIG, as ENOSPC would).
Loaded LoadOnFullDisk(const onnx::ModelProto& model, const std::string& settings, rlim_t max_file_bytes,
                      Given given = Given::kProto) {
  struct rlimit old_limit;
  EXPECT_EQ(::getrlimit(RLIMIT_FSIZE, &old_limit), 0);
  auto old_handler = ::signal(SIGXFSZ, SIG_IGN);  // writes past the limit fail with EFBIG instead
  struct rlimit small = old_limit;
  small.rlim_cur = max_file_bytes;
  EXPECT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  Loaded l = Load(model, settings, given);
  ::setrlimit(RLIMIT_FSIZE, &old_limit);
  ::signal(SIGXFSZ, old_handler);
  return l;
}

void ExpectSameOutputs(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].shape(), b[i].shape());
    EXPECT_EQ(0, std::memcmp(a[i].raw(), b[i].raw(), a[i].bytes())) << "output " << i;
  }
}

bool AnyContains(const std::vector<std::string>& lines, const std::string& fragment) {
  for (const auto& l : lines)
    if (l.find(fragment) != std::string::npos) return true;
  return false;
}

class JitCache : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("nuphar_cache_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
    dir_ = root_ / jit::CacheVersion();
  }
  void TearDown() override { fs::remove_all(root_); }

  std::string Settings(const std::string& extra = "") const {
    return "nuphar_cache_path:" + root_.string() + (extra.empty() ? "" : ", " + extra);
  }
  std::vector<fs::path> Objects() const {
    std::vector<fs::path> out;
    if (!fs::exists(dir_)) return out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().extension() == ".o") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  std::vector<fs::path> LoadEntries() const {
    std::vector<fs::path> out;
    if (!fs::exists(dir_)) return out;
    for (const auto& e : fs::directory_iterator(dir_))
      if (e.path().filename().string().rfind("load_", 0) == 0) out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
  }
  // Nothing corrupt or half-written is left: every object verifies against the manifest and no
  // temporary file remains.
  void ExpectCacheSound() const {
    if (!fs::exists(dir_)) return;
    for (const auto& e : fs::directory_iterator(dir_)) {
      const std::string file = e.path().filename().string();
      EXPECT_EQ(file.find(".tmp."), std::string::npos) << "temporary file left: " << file;
      if (e.path().extension() == ".o")
        EXPECT_EQ(jit::VerifyObjectFile(e.path().string(), e.path().stem().string(), true), "") << file;
    }
  }
  // The outputs of `model` on the reference executor (generated code is bit-identical to it).
  static std::vector<Tensor> WantOutputs(const onnx::ModelProto& model) {
    return Load(model, "nuphar_execution_mode:reference").outputs;
  }

  fs::path root_, dir_;
};

TEST_F(JitCache, WarmSessionCompilesNothingAndMatches) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  Loaded cold = Load(model, Settings());
  EXPECT_GT(cold.compiled, 0);
  EXPECT_EQ(cold.from_cache, 0);
  EXPECT_EQ(static_cast<int64_t>(Objects().size()), cold.compiled);  // this model's kernels are all distinct
  Loaded warm = Load(model, Settings());
  EXPECT_EQ(warm.compiled, 0);
  EXPECT_EQ(warm.from_cache, cold.compiled);
  EXPECT_TRUE(warm.warnings.empty()) << warm.warnings.front();
  ExpectSameOutputs(want, cold.outputs);
  ExpectSameOutputs(want, warm.outputs);
  ExpectCacheSound();
}

// With two threads the kernels of a session compile side by side (Session::RunLoadJobs); the
// results, the counters and what is saved are those of one thread.
TEST_F(JitCache, KernelsCompileSideBySideWithTwoThreads) {
  const auto model = MakeOtherShapesModel();
  const auto want = WantOutputs(model);
  Loaded one = Load(model, "nuphar_num_threads:1");
  Loaded two = Load(model, Settings("nuphar_num_threads:2"));
  EXPECT_GT(one.compiled, 1);
  // Identical kernels of the session hit the cache once the first is saved (or compile side by
  // side when they race): every kernel is served once either way.
  EXPECT_GT(two.compiled, 0);
  EXPECT_EQ(two.compiled + two.from_cache, one.compiled);
  ExpectSameOutputs(want, two.outputs);
  Loaded warm = Load(model, Settings("nuphar_num_threads:2"));
  EXPECT_EQ(warm.compiled, 0);
  EXPECT_EQ(warm.from_cache, one.compiled);
  ExpectSameOutputs(want, warm.outputs);
  ExpectCacheSound();
}

TEST_F(JitCache, IdenticalKernelsOfTwoModelsShareOneObject) {
  const auto a = MakeModel(1), b = MakeModel(2);
  Loaded la = Load(a, Settings());
  const auto objects = Objects();
  ASSERT_FALSE(objects.empty());
  Loaded lb = Load(b, Settings());
  EXPECT_EQ(lb.compiled, 0) << "model b's kernels are model a's";
  EXPECT_EQ(Objects(), objects);
  ExpectSameOutputs(WantOutputs(b), lb.outputs);
  // A model with other static dims has other kernels.
  Loaded lc = Load(MakeModel(1, 48), Settings());
  EXPECT_GT(lc.compiled, 0);
  EXPECT_GT(Objects().size(), objects.size());
}

TEST_F(JitCache, TruncatedAndGarbageObjectsAreRecompiled) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  Load(model, Settings());
  auto objects = Objects();
  ASSERT_GE(objects.size(), 2u);
  fs::resize_file(objects[0], fs::file_size(objects[0]) / 2);
  {
    std::ofstream garbage(objects[1], std::ios::binary | std::ios::trunc);
    std::mt19937 rng(3);
    for (int i = 0; i < 4096; ++i) garbage.put(static_cast<char>(rng()));
  }
  Loaded l = Load(model, Settings());
  EXPECT_EQ(l.compiled, 2);
  EXPECT_TRUE(AnyContains(l.warnings, objects[0].filename().string())) << l.warnings.size();
  EXPECT_TRUE(AnyContains(l.warnings, objects[1].filename().string()));
  ExpectSameOutputs(want, l.outputs);
  ExpectCacheSound();  // both were overwritten by good objects
  EXPECT_EQ(Load(model, Settings()).compiled, 0);
}

TEST_F(JitCache, ObjectOfAnotherKernelOrVersionIsNotUsed) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  Load(model, Settings());
  auto objects = Objects();
  ASSERT_GE(objects.size(), 2u);
  // Another kernel's valid object under this kernel's name, listed as such in the manifest: only
  // the symbol check can refuse it.
  fs::copy_file(objects[1], objects[0], fs::copy_options::overwrite_existing);
  {
    std::ifstream in(dir_ / "manifest.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto entry = [&](const std::string& name) {
      std::smatch m;
      EXPECT_TRUE(std::regex_search(text, m, std::regex("\"" + name + "\": \\{[^}]*\\}")));
      return m.str(0);
    };
    const std::string e0 = entry(objects[0].stem().string()), e1 = entry(objects[1].stem().string());
    std::string forged = e1;
    forged.replace(1, objects[1].stem().string().size(), objects[0].stem().string());
    text.replace(text.find(e0), e0.size(), forged);
    std::ofstream(dir_ / "manifest.json", std::ios::trunc) << text;
  }
  EXPECT_NE(jit::VerifyObjectFile(objects[0].string(), objects[0].stem().string(), true), "");
  // Objects of another cache version sit in another directory and are never looked at.
  fs::create_directories(root_ / "0.9.0");
  fs::copy_file(objects[1], root_ / "0.9.0" / objects[1].filename());
  Loaded l = Load(model, Settings());
  EXPECT_GE(l.compiled, 1);
  EXPECT_TRUE(AnyContains(l.warnings, objects[0].filename().string()));
  ExpectSameOutputs(want, l.outputs);
  ExpectCacheSound();
}

// A verified object (listed with its size and hash, defining its kernel) that cannot be linked
// here, since it calls a function this process lacks: linking fails and the kernel compiles.
TEST_F(JitCache, VerifiedObjectThatFailsToLinkIsRecompiled) {
  if (std::system("c++ --version > /dev/null 2>&1 && sha256sum --version > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "no C++ compiler or sha256sum to build the object";
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  Load(model, Settings());
  auto objects = Objects();
  ASSERT_GE(objects.size(), 1u);
  const std::string name = objects[0].stem().string();
  const fs::path source = root_ / "unlinkable.c";
  std::ofstream(source) << "void nuphar_test_symbol_nowhere(void);\nvoid " << name
                        << "(void) { nuphar_test_symbol_nowhere(); }\n";
  const std::string compile =
      "c++ -x c -fPIC -O1 -c " + source.string() + " -o " + objects[0].string() + " > /dev/null 2>&1";
  ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
  std::string sha256(64, ' ');
  {
    FILE* sum = ::popen(("sha256sum " + objects[0].string()).c_str(), "r");
    ASSERT_NE(sum, nullptr);
    ASSERT_EQ(std::fread(sha256.data(), 1, sha256.size(), sum), sha256.size());
    ::pclose(sum);
  }
  {
    std::ifstream in(dir_ / "manifest.json");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::smatch m;
    ASSERT_TRUE(std::regex_search(text, m, std::regex("\"" + name + "\": \\{[^}]*\\}")));
    const std::string entry = "\"" + name + "\": {\"sha256\": \"" + sha256 + "\", \"size\": " +
                              std::to_string(fs::file_size(objects[0])) + "}";
    text.replace(text.find(m.str(0)), m.str(0).size(), entry);
    std::ofstream(dir_ / "manifest.json", std::ios::trunc) << text;
  }
  ASSERT_EQ(jit::VerifyObjectFile(objects[0].string(), name, true), "");
  Loaded l = Load(model, Settings());
  EXPECT_EQ(l.compiled, 1);
  EXPECT_TRUE(AnyContains(l.warnings, name + ".o")) << "the failed link is reported";
  EXPECT_TRUE(AnyContains(l.warnings, "compiling the kernel again"));
  EXPECT_TRUE(AnyContains(l.warnings, "nuphar_test_symbol_nowhere")) << "ORC's reason, as a warning, not on stderr";
  ExpectSameOutputs(want, l.outputs);
}

TEST_F(JitCache, GarbageManifestIsRebuilt) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  Load(model, Settings());
  { std::ofstream(dir_ / "manifest.json", std::ios::trunc) << "{ not json"; }
  Loaded l = Load(model, Settings());
  EXPECT_GT(l.compiled, 0);
  EXPECT_TRUE(AnyContains(l.warnings, "manifest.json"));
  ExpectSameOutputs(want, l.outputs);
  ExpectCacheSound();
  EXPECT_EQ(Load(model, Settings()).compiled, 0);
}

TEST_F(JitCache, UnwritableDirectoryOnlyWarns) {
  const auto model = MakeModel(1);
  { std::ofstream(root_ / "file") << "x"; }  // a path through a regular file cannot be created, even as root
  Loaded l = Load(model, "nuphar_cache_path:" + (root_ / "file" / "cache").string());
  EXPECT_GT(l.compiled, 0);
  EXPECT_TRUE(AnyContains(l.warnings, "cannot create"));
  ExpectSameOutputs(WantOutputs(model), l.outputs);
}

TEST_F(JitCache, DiskFullWhileSavingLeavesNothingBehind) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  fs::create_directories(dir_);
  Loaded l = LoadOnFullDisk(model, Settings(), /*max_file_bytes=*/512);  // below any object's size
  EXPECT_GT(l.compiled, 0);
  EXPECT_TRUE(AnyContains(l.warnings, "cannot save"));
  ExpectSameOutputs(want, l.outputs);
  EXPECT_TRUE(Objects().empty());
  ExpectCacheSound();
}

TEST_F(JitCache, SharedLibraryServesEverythingAndChecksTheModel) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  const fs::path model_file = root_ / "model.onnx";
  { std::ofstream(model_file, std::ios::binary) << model.SerializeAsString(); }
  SessionOptions options;
  options.settings = Settings();
  auto warm = Session::Create(model_file.string(), options);  // fills the cache
  ASSERT_TRUE(warm.ok()) << warm.message();
  const int64_t kernels = (*warm)->counter("jit_compiled");
  jit::SharedLibraryOptions so;
  so.dir = dir_.string();
  so.input_model = model_file.string();
  auto report = jit::CreateSharedLibrary(so);
  ASSERT_TRUE(report.ok()) << report.message();
  EXPECT_EQ(static_cast<int64_t>(report->objects.size()), kernels);
  EXPECT_TRUE(Objects().empty()) << "the objects are removed without keep_input";

  // Force no JIT: everything from the library, bit-identical.
  options.settings = Settings("nuphar_cache_force_no_jit:on");
  {
    DiagnosticCapture capture;
    auto s = Session::Create(model_file.string(), options);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ((*s)->counter("jit_compiled"), 0);
    EXPECT_EQ((*s)->counter("jit_from_so"), kernels);
    auto out = (*s)->Run(Inputs(model));
    ASSERT_TRUE(out.ok());
    ExpectSameOutputs(want, *out);
    EXPECT_TRUE(capture.Texts(Severity::kWarning).empty());
  }
  // Another model (other weights, same kernels): the library's checksum differs, so it is ignored
  // with the warning and the kernels compile; with force_no_jit, creation fails naming a kernel.
  const auto other = MakeModel(2);
  Loaded l = Load(other, Settings());
  EXPECT_EQ(l.from_so, 0);
  EXPECT_EQ(l.compiled, kernels);
  EXPECT_TRUE(AnyContains(l.warnings, "Cache checksum validation failed, using JIT..."));
  ExpectSameOutputs(WantOutputs(other), l.outputs);
  const fs::path other_file = root_ / "other.onnx";
  { std::ofstream(other_file, std::ios::binary) << other.SerializeAsString(); }
  for (const auto& o : Objects()) fs::remove(o);
  auto refused = Session::Create(other_file.string(), options);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.message().find("nuphar_cache_force_no_jit"), std::string::npos) << refused.message();
  EXPECT_NE(refused.message().find("k_"), std::string::npos) << refused.message();
}

TEST_F(JitCache, LibraryOfAnotherVersionIsIgnored) {
  const auto model = MakeModel(1);
  fs::create_directories(dir_);
  const fs::path src = root_ / "v.cc";
  { std::ofstream(src) << "extern \"C\" const char* nuphar_cache_version() { return \"0.0.1\"; }\n"; }
  const std::string command = "c++ -shared -fPIC -o " + (dir_ / "jit.so").string() + " " + src.string();
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "no C++ compiler";
  Loaded l = Load(model, Settings());
  EXPECT_EQ(l.from_so, 0);
  EXPECT_GT(l.compiled, 0);
  EXPECT_TRUE(AnyContains(l.warnings, "is cache version 0.0.1"));
  ExpectSameOutputs(WantOutputs(model), l.outputs);
  { std::ofstream(dir_ / "jit.so", std::ios::trunc) << "garbage"; }
  Loaded g = Load(model, "nuphar_cache_path:" + root_.string() + ", nuphar_cache_so_name:jit.so");
  EXPECT_EQ(g.from_so, 0);  // opened once per process: the warning came with the first load
  ExpectSameOutputs(WantOutputs(model), g.outputs);
}

TEST_F(JitCache, CreateSharedRefusesCorruptObjectsAndMissingFiles) {
  const auto model = MakeModel(1);
  Load(model, Settings());
  auto objects = Objects();
  ASSERT_FALSE(objects.empty());
  jit::SharedLibraryOptions so;
  so.dir = dir_.string();
  so.input_model = (root_ / "missing.onnx").string();
  auto missing = jit::CreateSharedLibrary(so);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("missing.onnx"), std::string::npos);
  fs::resize_file(objects[0], 10);
  so.input_model.clear();
  auto corrupt = jit::CreateSharedLibrary(so);
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.message().find(objects[0].filename().string()), std::string::npos) << corrupt.message();
  so.compiler = "/nonexistent/c++";
  fs::remove(objects[0]);
  auto no_toolchain = jit::CreateSharedLibrary(so);
  ASSERT_FALSE(no_toolchain.ok());
  EXPECT_NE(no_toolchain.message().find("was not found"), std::string::npos) << no_toolchain.message();
  EXPECT_FALSE(fs::exists(dir_ / "jit.so"));
  ExpectCacheSound();
}

// ---- the load cache (runtime/jit/load_cache.h): the inferred types and shapes of a model ----

// A second session of a model given as bytes reads the inferred types and shapes instead of
// inferring them, and loads the same partitions with the same outputs; a model given as a
// ModelProto has no content key and no entry.
TEST_F(JitCache, LoadCacheServesTheSecondSessionTheSameShapes) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  Load(model, Settings());
  EXPECT_TRUE(LoadEntries().empty()) << "a ModelProto has no content key";
  Loaded cold = Load(model, Settings(), Given::kBytes);
  EXPECT_EQ(cold.shapes_from_cache, 0);
  ASSERT_EQ(LoadEntries().size(), 1u);
  Loaded warm = Load(model, Settings(), Given::kBytes);
  EXPECT_EQ(warm.shapes_from_cache, 1);
  EXPECT_EQ(warm.compiled, 0);
  EXPECT_TRUE(warm.warnings.empty()) << warm.warnings.front();
  EXPECT_GT(cold.jit_kernels, 0);
  EXPECT_EQ(warm.jit_kernels, cold.jit_kernels);
  EXPECT_EQ(warm.jit_nodes, cold.jit_nodes);
  ExpectSameOutputs(want, cold.outputs);
  ExpectSameOutputs(want, warm.outputs);
  // Other weights are another model; reference mode (no symbolic pass) is another entry.
  Loaded other = Load(MakeModel(2), Settings(), Given::kBytes);
  EXPECT_EQ(other.shapes_from_cache, 0);
  Loaded reference = Load(model, Settings("nuphar_execution_mode:reference"), Given::kBytes);
  EXPECT_EQ(reference.shapes_from_cache, 0);
  ExpectSameOutputs(want, reference.outputs);
  EXPECT_EQ(LoadEntries().size(), 3u);
  EXPECT_EQ(Load(model, Settings("nuphar_execution_mode:reference"), Given::kBytes).shapes_from_cache, 1);
  ExpectCacheSound();
}

// Session::Create from a file keys the entry by the file's bytes; weights in a side file leave
// the model without a content key.
TEST_F(JitCache, LoadCacheKeysModelFilesButNotExternalData) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  const fs::path file = root_ / "model.onnx";
  ASSERT_TRUE(SaveModel(model, file.string()).ok());
  auto load_file = [&](const fs::path& path) {
    SessionOptions options;
    options.settings = Settings();
    auto session = Session::Create(path.string(), options);
    EXPECT_TRUE(session.ok()) << session.message();
    if (!session.ok()) return int64_t{-1};
    auto out = (*session)->Run(Inputs(model));
    EXPECT_TRUE(out.ok());
    if (out.ok()) ExpectSameOutputs(want, *out);
    return (*session)->counter("shapes_from_cache");
  };
  EXPECT_EQ(load_file(file), 0);
  EXPECT_EQ(load_file(file), 1);
  const fs::path external = root_ / "external.onnx";
  SaveOptions side;
  side.save_as_external_data = true;
  side.external_threshold_bytes = 64;
  ASSERT_TRUE(SaveModel(model, external.string(), side).ok());
  const size_t entries = LoadEntries().size();
  EXPECT_EQ(load_file(external), 0);
  EXPECT_EQ(load_file(external), 0);
  EXPECT_EQ(LoadEntries().size(), entries);
}

// Every damaged entry is a warning naming the file and a load that infers again, with the same
// outputs; the entry is rewritten, so the next session reads it without a warning.
TEST_F(JitCache, LoadCacheFaultsAreWarnedAndTheEntryRewritten) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  Load(model, Settings(), Given::kBytes);
  const auto entries = LoadEntries();
  ASSERT_EQ(entries.size(), 1u);
  const fs::path entry = entries[0];
  std::string good;
  {
    std::ifstream in(entry, std::ios::binary);
    good.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ASSERT_GT(good.size(), 200u);
  const size_t payload = good.find('\n', good.find("\npayload ") + 1) + 1;
  std::string garbage(good.size(), '\0');
  std::mt19937 rng(5);
  for (char& c : garbage) c = static_cast<char>(rng());
  std::string other_version = good, other_key = good, flipped = good, short_count = good;
  other_version.replace(good.find(jit::CacheVersion()), std::strlen(jit::CacheVersion()), "0.9.0");
  other_key[good.find("xxh64:") + 6] ^= 1;
  flipped[payload + 5] ^= 0x40;
  const struct {
    const char* fault;
    std::string bytes;
    const char* reason;
  } cases[] = {
      {"truncated", good.substr(0, good.size() - 7), "its payload has"},
      {"garbage", garbage, "not a load cache file"},
      {"empty", "", "not a load cache file"},
      {"another version", other_version, "cache version 0.9.0"},
      {"another model", other_key, "another model"},
      {"a changed payload byte", flipped, "content hash"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.fault);
    { std::ofstream(entry, std::ios::binary | std::ios::trunc) << c.bytes; }
    Loaded l = Load(model, Settings(), Given::kBytes);
    EXPECT_EQ(l.shapes_from_cache, 0);
    EXPECT_TRUE(AnyContains(l.warnings, entry.filename().string()));
    EXPECT_TRUE(AnyContains(l.warnings, c.reason)) << (l.warnings.empty() ? "" : l.warnings.front());
    ExpectSameOutputs(want, l.outputs);
    Loaded again = Load(model, Settings(), Given::kBytes);
    EXPECT_EQ(again.shapes_from_cache, 1) << "the entry was rewritten";
    EXPECT_TRUE(again.warnings.empty());
  }
  ExpectCacheSound();
}

TEST_F(JitCache, LoadCacheInUnwritableDirectoryOrFullDiskOnlyWarns) {
  const auto model = MakeModel(1);
  const auto want = WantOutputs(model);
  { std::ofstream(root_ / "file") << "x"; }  // a path through a regular file cannot be created, even as root
  Loaded unwritable = Load(model, "nuphar_cache_path:" + (root_ / "file" / "cache").string(), Given::kBytes);
  EXPECT_TRUE(AnyContains(unwritable.warnings, "cannot create"));
  ExpectSameOutputs(want, unwritable.outputs);
  // Kernels first, so that only the entry is left to save when the disk is full.
  Load(model, Settings());
  Loaded full = LoadOnFullDisk(model, Settings(), /*max_file_bytes=*/64, Given::kBytes);  // below any entry's size
  EXPECT_TRUE(AnyContains(full.warnings, "cannot save"));
  ExpectSameOutputs(want, full.outputs);
  EXPECT_TRUE(LoadEntries().empty());
  ExpectCacheSound();
  EXPECT_EQ(Load(model, Settings(), Given::kBytes).shapes_from_cache, 0);
  EXPECT_EQ(Load(model, Settings(), Given::kBytes).shapes_from_cache, 1);
}

// The child side of the next test: loads the model file named by the environment into the
// cache directory named there and checks its outputs against the reference executor.
TEST(JitCacheChild, LoadAndCheck) {
  const char* dir = std::getenv("NUPHAR_CACHE_TEST_CHILD_DIR");
  if (!dir) GTEST_SKIP() << "runs as a child of JitCache.TwoProcessesFillOneDirectory";
  const auto model = MakeModel(1);
  SessionOptions options;
  options.settings = std::string("nuphar_cache_path:") + dir;
  auto session = Session::CreateFromModel(model, options);
  ASSERT_TRUE(session.ok()) << session.message();
  auto out = (*session)->Run(Inputs(model));
  ASSERT_TRUE(out.ok());
  SessionOptions reference;
  reference.settings = "nuphar_execution_mode:reference";
  auto ref = Session::CreateFromModel(model, reference);
  ASSERT_TRUE(ref.ok());
  auto want = (*ref)->Run(Inputs(model));
  ASSERT_TRUE(want.ok());
  ASSERT_EQ(out->size(), want->size());
  for (size_t i = 0; i < out->size(); ++i)
    EXPECT_EQ(0, std::memcmp((*out)[i].raw(), (*want)[i].raw(), (*want)[i].bytes()));
}

TEST_F(JitCache, TwoProcessesFillOneDirectory) {
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    const fs::path dir = root_ / ("round" + std::to_string(round));
    std::vector<std::string> env_strings;
    for (char** e = environ; *e; ++e) env_strings.push_back(*e);
    env_strings.push_back("NUPHAR_CACHE_TEST_CHILD_DIR=" + dir.string());
    std::vector<char*> env;
    for (auto& s : env_strings) env.push_back(s.data());
    env.push_back(nullptr);
    std::string self = fs::read_symlink("/proc/self/exe").string();
    std::string filter = "--gtest_filter=JitCacheChild.LoadAndCheck";
    std::string quiet = "--gtest_brief=1";
    char* argv[] = {self.data(), filter.data(), quiet.data(), nullptr};
    posix_spawn_file_actions_t quiet_stdout;  // a failing child still prints to stderr
    posix_spawn_file_actions_init(&quiet_stdout);
    posix_spawn_file_actions_addopen(&quiet_stdout, 1, "/dev/null", O_WRONLY, 0);
    pid_t pids[2];
    for (pid_t& pid : pids)
      ASSERT_EQ(::posix_spawn(&pid, self.c_str(), &quiet_stdout, nullptr, argv, env.data()), 0);
    posix_spawn_file_actions_destroy(&quiet_stdout);
    for (pid_t pid : pids) {
      int status = 0;
      ASSERT_EQ(::waitpid(pid, &status, 0), pid);
      EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    }
    const fs::path versioned = dir / jit::CacheVersion();
    int objects = 0;
    for (const auto& e : fs::directory_iterator(versioned)) {
      const std::string file = e.path().filename().string();
      EXPECT_EQ(file.find(".tmp."), std::string::npos) << file;
      if (e.path().extension() != ".o") continue;
      ++objects;
      EXPECT_EQ(jit::VerifyObjectFile(e.path().string(), e.path().stem().string(), true), "") << file;
    }
    EXPECT_GT(objects, 0);
  }
}

}  // namespace
}  // namespace nuphar
