// The Profiler: starts and stops the recorder (src/core/recorder.cpp) and
// turns the events it returns into torch.profiler's tables and a Chrome
// trace.
#include "stride/profiler.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/check.h"
#include "stride/io.h"
#include "stride/tensor.h"

namespace stride::profiler {

namespace {

std::string format_ms(int64_t ns) {
  char buf[32];
  if (ns >= 1'000'000)
    std::snprintf(buf, sizeof buf, "%.3fms", double(ns) / 1e6);
  else
    std::snprintf(buf, sizeof buf, "%.3fus", double(ns) / 1e3);
  return buf;
}

}  // namespace

Profiler::Profiler(ProfilerOptions options) : options_(options) {}

Profiler::~Profiler() {
  if (running_) stop();
}

void Profiler::start() {
  detail::start_recording(options_.record_shapes);
  events_.clear();
  running_ = true;
}

void Profiler::stop() {
  if (!running_) return;
  events_ = detail::stop_recording();
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
