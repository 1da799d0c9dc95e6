// Warnings from the library: the channel for "this will run, but it is
// probably not what you meant" (cross_entropy fed probabilities, a loss whose
// target broadcasts). Errors throw; warnings go through here, so a user can
// route them (a logger, a test), silence them, or turn them into errors.
//
// Thread-safe: the handler, the warnings-as-errors switch and the warn_once
// registry may be used from any thread. The handler is called outside the
// internal lock, so it may itself warn.
//
// Note: the namespace is stride::logging, not stride::log, because
// stride::log is the elementwise logarithm (a namespace and a function may
// not share a name in one scope).
#pragma once

#include <functional>
#include <string>
#include <utility>

namespace stride::logging {

using WarningHandler = std::function<void(const std::string& message)>;

// Emits `message`: throws stride::Error("warning treated as an error: ...")
// when warnings are errors, otherwise calls the handler. The default handler
// writes "stride: warning: <message>\n" to stderr.
void warn(const std::string& message);

// Emits `message` the first time `key` is seen in this process (until
// reset_warn_once). Returns true when it emitted. When warnings are errors it
// throws every time and does not mark the key as seen.
bool warn_once(const std::string& key, const std::string& message);

// Installs `handler` for every later warning and returns the previous one. An
// empty handler restores the default (stderr).
WarningHandler set_warning_handler(WarningHandler handler);

// When on, warn() and warn_once() throw stride::Error instead of calling the
// handler (like Python's `-W error`). Off by default.
void set_warnings_as_errors(bool as_errors);
bool warnings_as_errors();

// Forgets which warn_once keys were seen (all of them), so they fire again.
// For tests and long-lived processes that want a fresh report.
void reset_warn_once();

// Installs a handler for the lifetime of a scope, then restores the previous
// one: `logging::WarningHandlerGuard g([&](const std::string& m) { ... });`
class WarningHandlerGuard {
 public:
  explicit WarningHandlerGuard(WarningHandler handler)
      : prev_(set_warning_handler(std::move(handler))) {}
  ~WarningHandlerGuard() { set_warning_handler(std::move(prev_)); }
  WarningHandlerGuard(const WarningHandlerGuard&) = delete;
  WarningHandlerGuard& operator=(const WarningHandlerGuard&) = delete;

 private:
  WarningHandler prev_;
};

}  // namespace stride::logging
