// stride inspect: a model's parameters and the memory a training step needs,
// from its config alone, measured on the meta device (nothing is allocated).
#include <chrono>
#include <cstdio>
#include <string>

#include "commands.h"
#include "lm/inspect.h"
#include "run_dir.h"
#include "support/text.h"

namespace stride::app {

namespace {

// 6738415616 -> "6,738,415,616"
std::string with_commas(int64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0 && digits[i - 1] != '-') out += ',';
    out += digits[i];
  }
  return out;
}

void print_parameters(const lm::ModelInspection& r) {
  size_t width = 0;
  for (const auto& p : r.parameters) width = std::max(width, p.name.size());
  for (const auto& p : r.parameters) {
    std::printf("  %-*s %-16s %15s\n", int(width), p.name.c_str(), shape_str(p.shape).c_str(),
                with_commas(p.numel).c_str());
  }
}

void print_step_memory(const lm::RunConfig& config, const lm::ModelInspection& r) {
  std::printf("\nOne training step at batch %lld x context %lld (float32, %s):\n",
              static_cast<long long>(config.train.batch_size),
              static_cast<long long>(config.model.context), config.train.optimizer.c_str());
  std::printf("  parameters       %12s\n", bytes_text(r.parameter_bytes).c_str());
  std::printf("  gradients        %12s\n", bytes_text(r.gradient_bytes).c_str());
  std::printf("  optimizer state  %12s  (exp_avg and exp_avg_sq)\n",
              bytes_text(r.optimizer_bytes).c_str());
  std::printf("  activations      %12s  (saved by the forward for the backward)\n",
              bytes_text(r.activation_bytes).c_str());
  std::printf(
      "  step peak        %12s  (parameters + optimizer state + the forward and "
      "backward's peak)\n",
      bytes_text(r.step_peak_bytes).c_str());
}

}  // namespace

int run_inspect(const InspectArgs& args) {
  const auto start = std::chrono::steady_clock::now();
  const lm::RunConfig config = lm::load_config(args.config);
  check_fits_on_meta(config);
  const lm::ModelInspection r = lm::inspect_model(config);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s (%s): %s parameters\n", config.name.c_str(), config.model.arch.c_str(),
              with_commas(r.parameter_count).c_str());
  print_parameters(r);
  print_step_memory(config, r);
  std::printf(
      "\nMeasured on the meta device in %.0f ms: no parameter or activation memory was "
      "allocated.\n",
      ms);
  return 0;
}

}  // namespace stride::app
