#include "stride/profiler.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "stride/io.h"
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

std::string format_ms(int64_t ns) {
  char buf[32];
  if (ns >= 1'000'000)
    std::snprintf(buf, sizeof buf, "%.3fms", double(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3fus", double(ns) / 1e3);
  return buf;
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

}  // namespace detail

Profiler::Profiler(ProfilerOptions options) : options_(options) {}

Profiler::~Profiler() {
  if (running_) stop();
}

void Profiler::start() {
  Session& s = session();
  std::lock_guard<std::mutex> lock(s.mu);
  STRIDE_CHECK(!detail::g_enabled.load(), ValueError,
               "[Profiler] another profiler is already recording. Hint: stop() it first.");
  s.buffers.clear();
  s.t0 = Clock::now();
  s.record_shapes = options_.record_shapes;
  s.generation = g_generation.load() + 1;
  g_generation.store(s.generation, std::memory_order_release);
  events_.clear();
  running_ = true;
  detail::g_enabled.store(true, std::memory_order_release);
}

void Profiler::stop() {
  if (!running_) return;
  detail::g_enabled.store(false, std::memory_order_release);
  Session& s = session();
  std::vector<std::shared_ptr<ThreadBuffer>> buffers;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    buffers.swap(s.buffers);
    s.generation = g_generation.load() + 1;  // late end() calls find no buffer
    g_generation.store(s.generation, std::memory_order_release);
  }
  const int64_t t_stop = now_ns();
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
    for (Event& e : b->events) events_.push_back(std::move(e));
  }
  running_ = false;
}

KeyAverages Profiler::key_averages(bool group_by_input_shape) const {
  std::map<std::pair<std::string, std::string>, EventAverage> rows;
  for (const Event& e : events_) {
    auto key = std::make_pair(e.name, group_by_input_shape ? e.shapes : std::string());
    EventAverage& r = rows[key];
    r.name = key.first;
    r.shapes = key.second;
    r.calls += 1;
    r.self_ns += e.self_ns;
    r.total_ns += e.end_ns - e.start_ns;
  }
  std::vector<EventAverage> out;
  for (auto& [k, r] : rows) out.push_back(std::move(r));
  return KeyAverages(std::move(out));
}

std::string KeyAverages::table(const std::string& sort_by, int row_limit) const {
  std::vector<EventAverage> rows = rows_;
  STRIDE_CHECK(
      sort_by == "self_cpu_time_total" || sort_by == "cpu_time_total" || sort_by == "count",
      ValueError,
      "[key_averages] sort_by must be self_cpu_time_total, cpu_time_total "
      "or count; got \"",
      sort_by, "\".");
  std::stable_sort(rows.begin(), rows.end(), [&](const EventAverage& a, const EventAverage& b) {
    if (sort_by == "count") return a.calls > b.calls;
    if (sort_by == "cpu_time_total") return a.total_ns > b.total_ns;
    return a.self_ns > b.self_ns;
  });
  int64_t self_sum = 0;
  for (const auto& r : rows) self_sum += r.self_ns;
  size_t name_width = 4;
  bool shapes = false;
  for (const auto& r : rows) {
    name_width = std::max(name_width, r.name.size());
    shapes = shapes || !r.shapes.empty();
  }
  name_width = std::min<size_t>(name_width, 40);
  std::ostringstream os;
  char line[512];
  auto rule = [&] { os << std::string(name_width + 78 + (shapes ? 30 : 0), '-') << "\n"; };
  rule();
  std::snprintf(line, sizeof line, "%-*s %10s %14s %10s %14s %8s %14s", int(name_width), "Name",
                "Self CPU %", "Self CPU", "CPU total %", "CPU total", "# Calls", "CPU time avg");
  os << line << (shapes ? "  Input Shapes" : "") << "\n";
  rule();
  const int64_t denom = std::max<int64_t>(self_sum, 1);
  int printed = 0;
  for (const auto& r : rows) {
    if (row_limit > 0 && printed++ >= row_limit) break;
    std::string name =
        r.name.size() > name_width ? r.name.substr(0, name_width - 3) + "..." : r.name;
    std::snprintf(line, sizeof line, "%-*s %9.2f%% %14s %10.2f%% %14s %8lld %14s", int(name_width),
                  name.c_str(), 100.0 * double(r.self_ns) / double(denom),
                  format_ms(r.self_ns).c_str(), 100.0 * double(r.total_ns) / double(denom),
                  format_ms(r.total_ns).c_str(), static_cast<long long>(r.calls),
                  format_ms(r.total_ns / std::max<int64_t>(r.calls, 1)).c_str());
    os << line << (shapes ? "  " + r.shapes : "") << "\n";
  }
  rule();
  os << "Self CPU time total: " << format_ms(self_sum) << "\n";
  return os.str();
}

void Profiler::export_chrome_trace(const std::string& path) const {
  nlohmann::json events = nlohmann::json::array();
  for (const Event& e : events_) {
    nlohmann::json ev = {{"name", e.name},
                         {"ph", "X"},
                         {"cat", "cpu_op"},
                         {"pid", 0},
                         {"tid", e.thread},
                         {"ts", double(e.start_ns) / 1e3},
                         {"dur", double(e.end_ns - e.start_ns) / 1e3}};
    if (!e.shapes.empty()) ev["args"] = {{"Input Dims", e.shapes}};
    events.push_back(std::move(ev));
  }
  const std::string text =
      nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump();
  io::write_file_atomically(path, text, "export_chrome_trace");
}

}  // namespace stride::profiler
