// The profiler: where the time goes, the way torch.profiler shows it.
//
//   profiler::Profiler prof({.record_shapes = true});
//   prof.start();
//   ... train a few steps ...
//   prof.stop();
//   std::cout << prof.key_averages().table("self_cpu_time_total", 20);
//   prof.export_chrome_trace("trace.json");  // open in Perfetto or chrome://tracing
//
// Every kernel launch (op dispatch), every autograd backward node, optimizer
// steps and data-loader waits open a RecordFunction scope. When no profiler
// runs, a scope costs one relaxed atomic load and a branch.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "stride/shape.h"

namespace stride {
class Tensor;
}

namespace stride::profiler {

struct Event {
  std::string name;
  int64_t start_ns = 0;  // since the profiler started
  int64_t end_ns = 0;
  int64_t self_ns = 0;  // end - start minus the time of nested events
  uint32_t thread = 0;  // a small id per thread, in order of first use
  uint32_t depth = 0;   // nesting depth on its thread
  std::string shapes;   // input shapes, when record_shapes is on
};

struct ProfilerOptions {
  bool record_shapes = false;
};

// One row of key_averages(): all events with one name (and shapes, if grouped).
struct EventAverage {
  std::string name;
  std::string shapes;
  int64_t calls = 0;
  int64_t self_ns = 0;
  int64_t total_ns = 0;
};

class KeyAverages {
 public:
  explicit KeyAverages(std::vector<EventAverage> rows) : rows_(std::move(rows)) {}
  const std::vector<EventAverage>& rows() const { return rows_; }
  // A table like PyTorch's: name, self %, self total, total %, total, calls,
  // average. sort_by: "self_cpu_time_total" (default), "cpu_time_total",
  // "count"; row_limit <= 0 prints every row.
  std::string table(const std::string& sort_by = "self_cpu_time_total", int row_limit = 0) const;

 private:
  std::vector<EventAverage> rows_;
};

class Profiler {
 public:
  explicit Profiler(ProfilerOptions options = {});
  ~Profiler();  // stops if still running
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Only one profiler records at a time; starting a second throws.
  void start();
  void stop();
  // The recorded events, ordered by thread then start time.
  const std::vector<Event>& events() const { return events_; }
  KeyAverages key_averages(bool group_by_input_shape = false) const;
  // Trace Event JSON ("X" complete events, microseconds), properly nested per
  // thread. Written atomically.
  void export_chrome_trace(const std::string& path) const;

 private:
  ProfilerOptions options_;
  bool running_ = false;
  std::vector<Event> events_;
};

// The recorder (src/core/recorder.cpp), below every layer that records.
namespace detail {
extern std::atomic<bool> g_enabled;
bool record_shapes();
void begin(const char* name, const Tensor* inputs, size_t ninputs);
void end();
// Starts a session (a ValueError while one records); stop_recording ends it
// and returns its events, ordered by thread then start time, the scopes
// still open ended at the stop.
void start_recording(bool record_shapes);
std::vector<Event> stop_recording();
}  // namespace detail

inline bool is_enabled() {
  return detail::g_enabled.load(std::memory_order_relaxed);
}

// An RAII scope recorded while a profiler runs.
class RecordFunction {
 public:
  explicit RecordFunction(const char* name, const Tensor* inputs = nullptr, size_t ninputs = 0)
      : active_(is_enabled()) {
    if (active_) detail::begin(name, inputs, ninputs);
  }
  RecordFunction(const char* name, std::initializer_list<Tensor> inputs)
      : RecordFunction(name, inputs.begin(), inputs.size()) {}
  ~RecordFunction() {
    if (active_) detail::end();
  }
  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;

 private:
  bool active_;
};

}  // namespace stride::profiler
