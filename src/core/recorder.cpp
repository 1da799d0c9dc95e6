// The profiler's recorder (include/stride/profiler.h): RecordFunction's
// begin and end and the per-thread event buffers they write. It sits in core
// so that every layer that opens a scope (ops, autograd, nn, optim, data)
// records without calling up; the Profiler (src/profiler/) starts and stops
// it, and turns what it recorded into tables and traces.
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/check.h"
#include "stride/profiler.h"
#include "stride/tensor.h"

namespace stride::profiler {

namespace detail {
std::atomic<bool> g_enabled{false};
}  // namespace detail

namespace {

using Clock = std::chrono::steady_clock;

// One buffer per thread and profiling session; scopes on a thread nest, so
// a stack of open events gives each event its depth and self time.
struct ThreadBuffer {
  std::mutex mu;  // uncontended except when stop() collects
  uint32_t id = 0;
  std::vector<Event> events;
  std::vector<size_t> open;          // indices of open events
  std::vector<int64_t> children_ns;  // per open event: time of closed children
};

struct Session {
  std::mutex mu;
  uint64_t generation = 0;
  Clock::time_point t0;
  bool record_shapes = false;
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
};

Session& session() {
  static Session s;
  return s;
}

std::atomic<uint64_t> g_generation{0};
thread_local std::shared_ptr<ThreadBuffer> t_buffer;
thread_local uint64_t t_generation = 0;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - session().t0).count();
}

ThreadBuffer* buffer() {
  const uint64_t gen = g_generation.load(std::memory_order_acquire);
  if (t_generation != gen || !t_buffer) {
    Session& s = session();
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.generation != gen) return nullptr;  // the session ended meanwhile
    t_buffer = std::make_shared<ThreadBuffer>();
    t_buffer->id = uint32_t(s.buffers.size());
    s.buffers.push_back(t_buffer);
    t_generation = gen;
  }
  return t_buffer.get();
}

std::string format_shapes(const Tensor* inputs, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) {
    s += (i ? ", " : "") + (inputs[i].defined() ? shape_str(inputs[i].sizes()) : "[]");
  }
  return s + "]";
}

}  // namespace

namespace detail {

bool record_shapes() {
  return session().record_shapes;
}

void begin(const char* name, const Tensor* inputs, size_t ninputs) {
  ThreadBuffer* b = buffer();
  if (!b) return;
  std::lock_guard<std::mutex> lock(b->mu);
  Event e;
  e.name = name;
  e.thread = b->id;
  e.depth = uint32_t(b->open.size());
  if (session().record_shapes && ninputs > 0) e.shapes = format_shapes(inputs, ninputs);
  e.start_ns = now_ns();
  b->open.push_back(b->events.size());
  b->children_ns.push_back(0);
  b->events.push_back(std::move(e));
}

void end() {
  const int64_t t = now_ns();
  if (t_generation != g_generation.load(std::memory_order_acquire) || !t_buffer) return;
  ThreadBuffer* b = t_buffer.get();
  std::lock_guard<std::mutex> lock(b->mu);
  if (b->open.empty()) return;
  Event& e = b->events[b->open.back()];
  const int64_t children = b->children_ns.back();
  b->open.pop_back();
  b->children_ns.pop_back();
  e.end_ns = t;
  e.self_ns = (t - e.start_ns) - children;
  if (!b->children_ns.empty()) b->children_ns.back() += t - e.start_ns;
}

void start_recording(bool record_shapes) {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  STRIDE_CHECK(!g_enabled.load(), ValueError,
               "[Profiler] another profiler is already recording. Hint: stop() it first.");
  s.buffers.clear();
  s.t0 = Clock::now();
  s.record_shapes = record_shapes;
  s.generation = g_generation.load() + 1;
  g_generation.store(s.generation, std::memory_order_release);
  g_enabled.store(true, std::memory_order_release);
}

std::vector<Event> stop_recording() {
  g_enabled.store(false, std::memory_order_release);
  Session& s = session();
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    buffers.swap(s.buffers);
    s.generation = g_generation.load() + 1;  // late end() calls find no buffer
    g_generation.store(s.generation, std::memory_order_release);
  }
  const int64_t t_stop = now_ns();
  std::vector<Event> events;
  for (auto& b : buffers) {
    std::lock_guard<std::mutex> lock(b->mu);
    // Scopes still open when the profiler stops end at the stop time.
    while (!b->open.empty()) {
      Event& e = b->events[b->open.back()];
      e.end_ns = t_stop;
      e.self_ns = (t_stop - e.start_ns) - b->children_ns.back();
      b->open.pop_back();
      b->children_ns.pop_back();
      if (!b->children_ns.empty()) b->children_ns.back() += t_stop - e.start_ns;
    }
    for (Event& e : b->events) events.push_back(std::move(e));
  }
  return events;
}

}  // namespace detail

}  // namespace stride::profiler
