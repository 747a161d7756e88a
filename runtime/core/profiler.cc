// Kernel events, their aggregation over control-flow steps, and the trace JSON (runtime/core/profiler.h).
#include "runtime/core/profiler.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <thread>

#include "runtime/core/graph_plan.h"

namespace nuphar {
namespace {

std::string JsonString(const std::string& s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\', o += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\u%04x", c);
      o += buf;
    } else o += c;
  }
  return o + "\"";
}

// ORT's form: [{"float":[1,80]},{"int64":[3]}]; absent values are {}.
std::string TypeShapes(const Frame& frame, const std::vector<int>& refs) {
  std::string s = "[";
  for (size_t i = 0; i < refs.size(); ++i) {
    if (i) s += ",";
    const Tensor* t = frame.Get(refs[i]);
    if (!t || !t->defined()) {
      s += "{}";
      continue;
    }
    s += "{\"" + std::string(DTypeName(t->dtype())) + "\":[";
    for (size_t d = 0; d < t->shape().size(); ++d) {
      if (d) s += ',';
      s += std::to_string(t->shape()[d]);
    }
    s += "]}";
  }
  return s + "]";
}

void Describe(const Frame& frame, int index, ProfileEvent* ev) {
  const PlanNode& node = frame.plan().nodes()[static_cast<size_t>(index)];
  ev->name = node.name;
  ev->op_type = node.op_type;
  ev->path = node.kernel->profile_path();
  ev->input_shapes = TypeShapes(frame, node.inputs);
  ev->output_shapes = TypeShapes(frame, node.outputs);
  ev->key = {&frame.plan(), index};
}

// Adds `src` (one more run of the same node) into the aggregated `dst`, children included.
void Merge(ProfileEvent& dst, ProfileEvent&& src) {
  dst.dur_ns += src.dur_ns;
  dst.steps += src.steps;
  for (ProfileEvent& c : src.children) {
    auto [it, inserted] = dst.child_index.emplace(c.key, dst.children.size());
    if (inserted) dst.children.push_back(std::move(c));
    else Merge(dst.children[it->second], std::move(c));
  }
}

// Even, so that tid + 1 (the lane of a pair's second side) is never another thread's id.
uint64_t ThreadId() { return 2 * (std::hash<std::thread::id>()(std::this_thread::get_id()) % 100000); }

}  // namespace

namespace {
thread_local RunProfile* tls_override = nullptr;
}  // namespace

RunProfile* RunProfile::ThreadOverride() { return tls_override; }
RunProfile::ThreadScope::ThreadScope(RunProfile* profile) : previous_(tls_override) { tls_override = profile; }
RunProfile::ThreadScope::~ThreadScope() { tls_override = previous_; }

void RunProfile::Absorb(RunProfile&& side, int lane) {
  for (ProfileEvent& ev : side.events_) {
    if (stack_.empty()) {
      ev.lane = lane;
      events_.push_back(std::move(ev));
      continue;
    }
    ProfileEvent& parent = stack_.back();
    auto [it, inserted] = parent.child_index.emplace(ev.key, parent.children.size());
    if (inserted) parent.children.push_back(std::move(ev));
    else Merge(parent.children[it->second], std::move(ev));
  }
}

void RunProfile::Leave(const Frame& frame, int index, int64_t t0_ns, int64_t t1_ns) {
  ProfileEvent ev = std::move(stack_.back());
  stack_.pop_back();
  ev.dur_ns = t1_ns - t0_ns;
  if (stack_.empty()) {
    Describe(frame, index, &ev);
    ev.ts_ns = t0_ns;
    events_.push_back(std::move(ev));
    return;
  }
  ProfileEvent& parent = stack_.back();
  const std::pair<const void*, int> key{&frame.plan(), index};
  auto [it, inserted] = parent.child_index.emplace(key, parent.children.size());
  if (inserted) {
    Describe(frame, index, &ev);  // shapes of the first step only: later steps cost two clock reads
    ev.ts_ns = t0_ns;
    parent.children.push_back(std::move(ev));
  } else {
    Merge(parent.children[it->second], std::move(ev));
  }
}

Profiler::Profiler(int64_t origin_ns) : origin_ns_(origin_ns) {}

int64_t Profiler::NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void Profiler::AddRun(int64_t t0_ns, int64_t t1_ns, RunProfile&& run) {
  std::lock_guard<std::mutex> lock(mutex_);
  runs_.push_back({t0_ns, t1_ns, ThreadId(), std::move(run.events())});
}

void Profiler::AddSessionEvent(const std::string& name, int64_t t0_ns, int64_t t1_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  session_events_.push_back({name, t0_ns, t1_ns});
}

std::string Profiler::TraceJson() const {
  std::lock_guard<std::mutex> lock(mutex_);
  const long pid = static_cast<long>(getpid());
  std::string out = "[\n";
  bool first = true;
  auto us = [&](int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3f", static_cast<double>(ns) / 1000.0);
    return std::string(buf);
  };
  auto emit = [&](const std::string& cat, const std::string& name, uint64_t tid, int64_t ts, int64_t dur,
                  const std::string& args) {
    out += first ? "" : ",\n";
    first = false;
    out += "{\"cat\":" + JsonString(cat) + ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
           ",\"dur\":" + us(dur) + ",\"ts\":" + us(ts - origin_ns_) + ",\"ph\":\"X\",\"name\":" + JsonString(name) +
           ",\"args\":{" + args + "}}";
  };
  for (const auto& e : session_events_) emit("Session", e.name, 0, e.t0_ns, e.t1_ns - e.t0_ns, "");
  std::function<void(const ProfileEvent&, const std::string&, int, int64_t, uint64_t)> node_event =
      [&](const ProfileEvent& e, const std::string& prefix, int depth, int64_t ts, uint64_t tid) {
        const std::string name = prefix + e.name;
        std::string args = "\"op_name\":" + JsonString(e.op_type) + ",\"path\":" + JsonString(e.path) +
                           ",\"input_type_shape\":" + e.input_shapes + ",\"output_type_shape\":" + e.output_shapes +
                           ",\"depth\":" + std::to_string(depth);
        if (depth > 0)
          args += ",\"steps\":" + std::to_string(e.steps) + ",\"mean_us\":" + us(e.dur_ns / std::max<int64_t>(1, e.steps));
        emit("Node", name + "_kernel_time", tid, ts, e.dur_ns, args);
        int64_t child_ts = ts;  // body nodes laid end to end inside their parent's span (see header)
        for (const ProfileEvent& c : e.children) {
          node_event(c, name + "/", depth + 1, child_ts, tid);
          child_ts += c.dur_ns;
        }
      };
  for (size_t r = 0; r < runs_.size(); ++r) {
    const RunRecord& run = runs_[r];
    emit("Session", "model_run", run.tid, run.t0_ns, run.t1_ns - run.t0_ns, "\"run\":" + std::to_string(r));
    for (const ProfileEvent& e : run.events) node_event(e, "", 0, e.ts_ns, run.tid + static_cast<uint64_t>(e.lane));
  }
  return out + "\n]\n";
}

std::vector<Profiler::KernelTotal> Profiler::Totals(double* kernel_ms, double* run_ms, int64_t* runs) const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::map<std::string, KernelTotal> by_name;
  *kernel_ms = 0;
  *run_ms = 0;
  *runs = static_cast<int64_t>(runs_.size());
  std::function<void(const ProfileEvent&, const std::string&, int)> add = [&](const ProfileEvent& e,
                                                                               const std::string& prefix, int depth) {
    KernelTotal& t = by_name[prefix + e.name];
    t.name = prefix + e.name;
    t.op_type = e.op_type;
    t.path = e.path;
    t.depth = depth;
    t.calls += e.steps;
    t.total_ms += static_cast<double>(e.dur_ns) / 1e6;
    if (depth == 0) *kernel_ms += static_cast<double>(e.dur_ns) / 1e6;
    for (const ProfileEvent& c : e.children) add(c, prefix + e.name + "/", depth + 1);
  };
  for (const RunRecord& run : runs_) {
    *run_ms += static_cast<double>(run.t1_ns - run.t0_ns) / 1e6;
    for (const ProfileEvent& e : run.events) add(e, "", 0);
  }
  std::vector<KernelTotal> totals;
  for (auto& [name, t] : by_name) totals.push_back(std::move(t));
  std::sort(totals.begin(), totals.end(), [](const KernelTotal& a, const KernelTotal& b) { return a.total_ms > b.total_ms; });
  return totals;
}

}  // namespace nuphar
