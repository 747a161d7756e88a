// The runtime's public API: load a model, then Run it with named inputs (STYLE R5).
//
//   auto session = nuphar::Session::Create("model.onnx", options);   // Expected<unique_ptr<Session>>
//   auto outputs = (*session)->Run({{"input", tensor}});              // Expected<vector<Tensor>>
//
// Everything that can be checked without data is checked by Create: unknown ops, unsupported
// types and attributes, cycles, dangling names. Run checks the inputs against the graph's
// declared types and shapes (symbolic dims must agree across inputs) and computes shapes as it
// goes. Run is thread-safe: concurrent calls on one session each use their own frame.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "graph/error.h"
#include "runtime/core/tensor.h"

namespace onnx {
class ModelProto;
}

namespace nuphar {

class GraphPlan;
class Frame;
struct ModelContext;
class Settings;
class ThreadPool;
class Profiler;

struct SessionOptions {
  /// Nuphar-style settings string "key:value, key:value" (README, "Runtime settings"). Threads
  /// are nuphar_num_threads there (worker count including the calling thread, R6; default 1).
  std::string settings;
  /// Record one event per kernel run (runtime/core/profiler.h). The setting nuphar_profile_file
  /// also turns it on and names the trace file that EndProfiling (or the destructor) writes.
  bool enable_profiling = false;
};

/// A graph input or output as declared in the model.
struct ValueDesc {
  std::string name;
  DType dtype = DType::kUndefined;
  bool has_shape = false;
  std::vector<int64_t> dims;            ///< -1 where the dim is symbolic or unknown
  std::vector<std::string> dim_params;  ///< symbol name where dims[i] == -1 ("" if unknown)
  bool has_default = false;             ///< an initializer supplies it when not fed
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Session {
 public:
  static Expected<std::unique_ptr<Session>> Create(const std::string& model_path, const SessionOptions& options = {});
  static Expected<std::unique_ptr<Session>> CreateFromBytes(const void* data, size_t size,
                                                            const SessionOptions& options = {});
  static Expected<std::unique_ptr<Session>> CreateFromModel(const onnx::ModelProto& model,
                                                            const SessionOptions& options = {},
                                                            const std::string& origin = "<model>");
  ~Session();

  /// Graph inputs the caller may feed (initializer-backed inputs are listed and optional).
  const std::vector<ValueDesc>& inputs() const { return inputs_; }
  const std::vector<ValueDesc>& outputs() const { return outputs_; }

  /// Subgraph patterns replaced by fused kernels at load time (0 in "reference" mode).
  int fused_pattern_count() const;

  /// A load-time statistic (0 when never set): "jit_kernels" (generated kernels), "jit_nodes"
  /// (model nodes they run), "jit_compile_us", "plan_nodes" (executed plan nodes of every graph)
  /// and "plan_nodes_<path>" by kernel path (runtime/core/op_kernel.h profile_path: "jit", ...),
  /// "plan_graphs_outputs_may_view_kept" (graphs whose outputs may be views of a value kept between
  /// Runs: GraphPlan::outputs_may_view_kept_values).
  int64_t counter(const std::string& name) const;

  /// Threads the session runs on (nuphar_num_threads), the calling thread included.
  int num_threads() const;
  /// Pairs of independent sequence nodes (Scan, Loop, LSTM/GRU/RNN) of the main graph that run
  /// side by side (0 with one thread).
  int concurrent_node_pairs() const;
  /// Parallel regions the session's workers have run so far (0 with one thread, or when no
  /// product was split and no nodes ran side by side): tools report the threads that really ran.
  int64_t parallel_regions_run() const;

  /// Runs the model. `output_names` empty = all graph outputs, in graph order.
  Expected<std::vector<Tensor>> Run(const NamedTensors& inputs, const std::vector<std::string>& output_names = {}) const;

  /// The events recorded so far when profiling is on, else null.
  const Profiler* profiler() const { return profiler_.get(); }
  /// Stops profiling and writes the trace (Chrome trace-event JSON, ORT's profiler format) to the
  /// nuphar_profile_file setting's path, through a temporary file; returns that path. Without a
  /// path the events stay in memory (profiler()) and this is an error saying so.
  Expected<std::string> EndProfiling();

 private:
  Session() = default;
  /// `model_bytes` gives the bytes whose md5 the JIT cache checks (R4), asked only when the
  /// cache is on; `content_key` keys the load cache (runtime/jit/load_cache.h; "" for none).
  static Expected<std::unique_ptr<Session>> CreateImpl(const onnx::ModelProto& model, const SessionOptions& options,
                                                       const std::string& origin,
                                                       const std::function<std::string()>& model_bytes,
                                                       const std::string& content_key);
  Status Init(const onnx::ModelProto& model, const std::string& origin,
              const std::function<std::string()>& model_bytes, const std::string& content_key);
  /// Fills the model context's value types and shapes: from the load cache, or by inference
  /// (then saved to the cache when it is on).
  void InferValueTypes(const onnx::ModelProto& model, const std::string& content_key);
  Status RunLoadJobs();
  Status CheckInputs(const NamedTensors& inputs) const;
  std::unique_ptr<Frame> AcquireFrame() const;
  void ReleaseFrame(std::unique_ptr<Frame> frame) const;

  SessionOptions options_;
  std::unique_ptr<Settings> settings_;
  std::unique_ptr<ThreadPool> thread_pool_;  ///< destroyed after model_ and plan_, which point at it
  std::string origin_;
  std::unique_ptr<ModelContext> model_;
  std::shared_ptr<GraphPlan> plan_;
  std::vector<ValueDesc> inputs_, outputs_;
  mutable std::mutex pool_mutex_;
  mutable std::vector<std::unique_ptr<Frame>> frame_pool_;  ///< frames reused across Runs
  std::unique_ptr<Profiler> profiler_;  ///< null unless profiling
  std::string profile_file_;
  std::atomic<bool> profiling_{false};
  size_t max_tensor_bytes_ = 0;  ///< nuphar_max_tensor_bytes (runtime/core/tensor_budget.h); 0 = no limit
};

}  // namespace nuphar
