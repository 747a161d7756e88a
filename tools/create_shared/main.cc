// create_shared: links the JIT cache's objects into the AOT library a deployed process loads
// (runtime/jit/create_shared.h; spec runtime.md R4). Flags of the original create_shared.py, and
// the create_shared.sh forms -c/-m/-o. Exit codes (tools/common/cli.h): 0 written, 1 error
// (nothing written), 2 usage error.
#include <CLI/CLI.hpp>

#include <cstdio>

#include "runtime/jit/create_shared.h"
#include "tools/common/cli.h"

int main(int argc, char** argv) {
  nuphar::tools::PrintDiagnosticsToStderr();
  CLI::App app{"create_shared: link the kernel objects of a nuphar JIT cache directory into one shared library "
               "(load it with nuphar_cache_path; nuphar_cache_force_no_jit:on then compiles nothing)."};
  nuphar::jit::SharedLibraryOptions options;
  app.add_option("-c,--input_dir", options.dir,
                 std::string("the versioned cache directory: <nuphar_cache_path>/") + nuphar::jit::CacheVersion())
      ->required();
  app.add_option("-o,--output_name", options.output_name, "library file name inside the directory (default jit.so)");
  app.add_option("-m,--input_model", options.input_model,
                 "the model whose md5 the library records; sessions of another model then ignore it");
  app.add_flag("--keep_input", options.keep_input, "keep the .o files (default: delete them once linked)");
  if (int code = nuphar::tools::ParseCommandLine(app, argc, argv); code >= 0) return code;
  auto report = nuphar::jit::CreateSharedLibrary(options);
  if (!report) return nuphar::tools::ReportError("create_shared", report.status());
  std::printf("create_shared: wrote %s: %zu kernel(s)%s\n", report->output.c_str(), report->objects.size(),
              report->model_md5.empty() ? "" : (", model md5 " + report->model_md5).c_str());
  return nuphar::tools::kExitOk;
}
