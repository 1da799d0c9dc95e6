// The thread's grad mode and the process's anomaly mode
// (include/stride/autograd.h): read by the ops that record graphs, below
// the engine that runs them.
#include <atomic>

#include "stride/autograd.h"

namespace stride {

namespace {
thread_local bool grad_mode_enabled = true;
std::atomic<bool> anomaly_enabled{false};
}  // namespace

bool GradMode::is_enabled() {
  return grad_mode_enabled;
}
void GradMode::set_enabled(bool enabled) {
  grad_mode_enabled = enabled;
}
bool AnomalyMode::is_enabled() {
  return anomaly_enabled.load(std::memory_order_relaxed);
}
void AnomalyMode::set_enabled(bool enabled) {
  anomaly_enabled = enabled;
}

}  // namespace stride
