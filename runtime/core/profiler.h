// Per-kernel profiling in the trace-event format of ONNX Runtime's profiler (a JSON array of
// "X" events, opened by Perfetto and chrome://tracing).
//
// # What is recorded
// Every Run of a profiled session gives one "model_run" event (cat "Session") and one event per
// kernel run of the main graph (cat "Node", name "<node>_kernel_time"), with args: op_name, path
// (reference, ngemm, fused_ngemm, gemv_f32, ...), input_type_shape, output_type_shape, depth 0.
// Nodes of Scan/Loop/If bodies are aggregated per body node over all steps of one invocation:
// one event per body node, nested under its control-flow node (depth >= 1), with dur = the sum
// over the steps and args.steps / args.mean_us. Their ts is synthetic: the body's nodes are laid
// end to end from the start of the parent event, in first-run order, so they nest correctly.
// The depth-0 "Node" events of one Run add up to the Run minus the executor's own bookkeeping.
//
// # Cost
// Off (the default) a frame pays one predictable branch per Execute (graph_plan.cc). On, each
// kernel run reads the clock twice; body nodes record their shapes on the first step only.
//
// # Threading
// A RunProfile belongs to one Run and one thread. The two nodes of a pair that a frame runs side
// by side on the pool (nuphar_num_threads > 1) record into one RunProfile each, merged after both
// finish; their events overlap in time, so with pairs the depth-0 events can add up to more than
// the Run. Profiler is shared by the session's concurrent Runs and locks only when a Run hands its
// events over.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nuphar {

class Frame;
struct PlanNode;

/// One kernel event, possibly aggregated over steps, with the body events nested under it.
struct ProfileEvent {
  std::string name;     ///< node name
  std::string op_type;
  std::string path;     ///< which implementation ran (OpKernel::profile_path)
  std::string input_shapes, output_shapes;  ///< ORT's [{"float":[1,80]},...] form, JSON text
  int64_t ts_ns = 0;    ///< start (first step for aggregated events)
  int64_t dur_ns = 0;   ///< duration (sum over steps)
  int64_t steps = 1;
  int lane = 0;         ///< 1 for the second node of a pair run side by side: its own trace "tid"
  std::pair<const void*, int> key{nullptr, -1};  ///< (graph plan, node index)
  std::vector<ProfileEvent> children;
  std::map<std::pair<const void*, int>, size_t> child_index;  ///< key -> slot in children
};

/// The events of one Run. Not thread-safe (one per Run).
class RunProfile {
 public:
  /// Around one kernel run of `frame`'s node `index` (Frame::Execute calls both).
  void Enter() { stack_.emplace_back(); }
  void Leave(const Frame& frame, int index, int64_t t0_ns, int64_t t1_ns);
  std::vector<ProfileEvent>& events() { return events_; }

  /// Takes the events of `side`, recorded on another thread for a node that ran side by side
  /// with another (Frame::ExecuteProfiled), as if they had been recorded here.
  /// `lane` 1 puts the main-graph events of the second side on a trace row of their own.
  void Absorb(RunProfile&& side, int lane);

  /// The RunProfile this thread records into instead of its frame's, while it runs one side of
  /// a node pair (null otherwise). Read only when profiling is on.
  static RunProfile* ThreadOverride();
  class ThreadScope {
   public:
    explicit ThreadScope(RunProfile* profile);
    ~ThreadScope();
    ThreadScope(const ThreadScope&) = delete;
    ThreadScope& operator=(const ThreadScope&) = delete;

   private:
    RunProfile* previous_;
  };

 private:
  std::vector<ProfileEvent> stack_;   ///< open kernel runs, outermost first
  std::vector<ProfileEvent> events_;  ///< finished main-graph kernel runs
};

/// The profile of one session.
class Profiler {
 public:
  /// `origin_ns` is time zero of the trace (the session's creation).
  explicit Profiler(int64_t origin_ns);
  static int64_t NowNs();
  /// Records a finished Run [t0, t1] and its kernel events.
  void AddRun(int64_t t0_ns, int64_t t1_ns, RunProfile&& run);
  /// A session-level event such as "session_initialization".
  void AddSessionEvent(const std::string& name, int64_t t0_ns, int64_t t1_ns);
  /// The trace as ORT writes it: a JSON array of events, ts and dur in microseconds.
  std::string TraceJson() const;

  struct KernelTotal {
    std::string name;  ///< node name; body nodes as "<control-flow node>/<body node>"
    std::string op_type, path;
    int64_t calls = 0;  ///< kernel runs (steps included)
    double total_ms = 0;
    int depth = 0;
  };
  /// Time per node over every recorded Run, largest first; also the total of depth-0 kernels and of Runs.
  std::vector<KernelTotal> Totals(double* kernel_ms, double* run_ms, int64_t* runs) const;

 private:
  struct RunRecord {
    int64_t t0_ns, t1_ns;
    uint64_t tid;
    std::vector<ProfileEvent> events;
  };
  struct SessionEvent {
    std::string name;
    int64_t t0_ns, t1_ns;
  };
  int64_t origin_ns_;
  mutable std::mutex mutex_;
  std::vector<RunRecord> runs_;
  std::vector<SessionEvent> session_events_;
};

}  // namespace nuphar
