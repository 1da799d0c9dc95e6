#include "stride/logging.h"

#include <atomic>
#include <cstdio>
#include <mutex>
#include <set>
#include <utility>

#include "stride/error.h"

namespace stride::logging {

namespace {

struct State {
  std::mutex mu;
  WarningHandler handler;  // empty = the default (stderr)
  std::set<std::string> seen;
  std::atomic<bool> as_errors{false};
};

State& state() {
  static State* s = new State();  // never destroyed: warnings may come from static destructors
  return *s;
}

void default_handler(const std::string& message) {
  std::fprintf(stderr, "stride: warning: %s\n", message.c_str());
  std::fflush(stderr);
}

}  // namespace

void warn(const std::string& message) {
  State& s = state();
  if (s.as_errors.load()) throw Error("warning treated as an error: " + message);
  WarningHandler handler;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    handler = s.handler;
  }
  // Called outside the lock so that a handler may warn or swap handlers.
  if (handler) {
    handler(message);
  } else {
    default_handler(message);
  }
}

bool warn_once(const std::string& key, const std::string& message) {
  State& s = state();
  if (s.as_errors.load()) throw Error("warning treated as an error: " + message);
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (!s.seen.insert(key).second) return false;
  }
  warn(message);
  return true;
}

WarningHandler set_warning_handler(WarningHandler handler) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  std::swap(s.handler, handler);
  return handler;
}

void set_warnings_as_errors(bool as_errors) {
  state().as_errors.store(as_errors);
}

bool warnings_as_errors() {
  return state().as_errors.load();
}

void reset_warn_once() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mu);
  s.seen.clear();
}

}  // namespace stride::logging
