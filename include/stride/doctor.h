// stride::doctor — checks that make silent training bugs loud.
//
// Each of these bugs trains "fine" (the loss goes down, nothing throws) and
// yet the model is wrong:
//   * check_causality: a next-token model whose output at position t depends
//     on tokens after t (a future leak: the validation loss looks too good);
//   * audit_parameters: a trainable parameter that no optimizer owns, that
//     gets no gradient, or that the step does not change (an optimizer built
//     on another model's parameters; a kernel that skips non-contiguous
//     parameters);
//   * gradient_flow: per parameter, how much gradient signal arrives (on the
//     gradients, not on the weights);
//   * check_logits: probabilities fed to cross_entropy, which expects logits.
// Anomaly detection (autograd.h, DetectAnomalyGuard) names the forward op of
// the first NaN/Inf gradient.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "stride/nn/module.h"
#include "stride/optim/optimizer.h"
#include "stride/tensor.h"

namespace stride::doctor {

struct CausalityOptions {
  int64_t batch = 2;       // random sequences per trial
  int64_t trials = 2;      // independent random inputs
  double tolerance = 0.0;  // |change| above this is a leak; 0: exact
  uint64_t seed = 0;       // for the random token ids
};

struct CausalityResult {
  bool causal = true;
  // The first position t whose output changed when only tokens after t
  // changed (-1 when causal), and the largest change seen anywhere.
  int64_t first_leaking_position = -1;
  double max_change = 0;
  std::string message;
};

// `forward` maps ids (B, T) int64 -> (B, T, ...). For each cut t in [0, T-1),
// the tokens after t are replaced by other random tokens and the outputs at
// positions <= t must not change. The default generator's state is reset
// before every call, so a model that draws random numbers even in eval mode
// (the article's attention dropout) draws the same ones in both runs; put
// the model in eval mode first. Grad mode is off during the probe.
CausalityResult check_causality(const std::function<Tensor(const Tensor&)>& forward,
                                int64_t vocab_size,
                                int64_t length,
                                const CausalityOptions& options = {});

struct AuditResult {
  bool ok = true;
  // One line per problem, naming the parameter: "layers.0.wq.weight: not
  // owned by the optimizer", "...: received no gradient", "...: unchanged
  // by the step", "optimizer holds N tensors that are not parameters of the
  // model".
  std::vector<std::string> problems;
  std::string message;
};

// Takes ONE real optimizer step on `model` (zero_grad, loss_fn().backward(),
// step) and checks that every trainable parameter is owned by `optimizer`,
// received a non-zero gradient, and changed. Parameters are compared with
// copies taken before the step.
AuditResult audit_parameters(nn::Module& model,
                             optim::Optimizer& optimizer,
                             const std::function<Tensor()>& loss_fn);

struct GradientStat {
  std::string name;
  int64_t numel = 0;
  double zero_fraction = 1;  // entries with |grad| <= tolerance (1 when there is no grad)
  double grad_norm = 0;
  double weight_norm = 0;
  double ratio = 0;  // grad_norm / weight_norm (0 when the weight is 0)
  bool has_grad = false;
  bool no_signal = true;  // no gradient, or every entry within tolerance
};

struct GradientFlow {
  std::vector<GradientStat> params;
  bool ok = true;  // no trainable parameter without signal
  // name, numel, % near-zero grads, |grad|, |grad|/|w|, a flag column.
  std::string table() const;
};

// Reads the .grad() of every trainable parameter of `model` (run a backward
// pass first). This is what the article's show_grads meant to measure: it
// looked at parameter values instead.
GradientFlow gradient_flow(const nn::Module& model, double zero_tolerance = 0.0);

struct LogitsCheck {
  bool looks_like_probabilities = false;
  std::string message;
};

struct NonFiniteResult {
  bool found = false;
  std::string module;  // dotted name of the first module whose output was NaN/Inf ("" = the root)
  std::string message;
};

// Runs `fn` (a forward pass, or forward + backward) with a forward hook on
// every module of `model`, and names the first module, in execution order,
// whose output holds a NaN or an Inf while its input did not: where the
// forward pass breaks. Combine with DetectAnomalyGuard (autograd.h) to name
// the backward function of the first non-finite gradient. Hooks are removed
// on return, also when fn throws.
NonFiniteResult find_nonfinite(nn::Module& model, const std::function<void()>& fn);

// Outputs (..., C) that a loss will treat as logits: flags them when every
// value is in [0, 1] and every row sums to 1 (softmax output).
LogitsCheck check_logits(const Tensor& outputs);

}  // namespace stride::doctor
