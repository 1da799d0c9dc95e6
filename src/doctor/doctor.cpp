#include "stride/doctor.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>
#include <unordered_set>

#include "stride/autograd.h"
#include "stride/generator.h"
#include "stride/ops.h"

namespace stride::doctor {

CausalityResult check_causality(const std::function<Tensor(const Tensor&)>& forward,
                                int64_t vocab_size,
                                int64_t length,
                                const CausalityOptions& options) {
  if (vocab_size < 2 || length < 2) {
    throw ValueError("[check_causality] needs vocab_size >= 2 and length >= 2; got " +
                     std::to_string(vocab_size) + " and " + std::to_string(length) + ".");
  }
  NoGradGuard no_grad;
  Generator gen(options.seed);
  Generator& shared = default_generator();
  const GeneratorState before = shared.get_state();
  auto run = [&](const Tensor& ids) {
    shared.set_state(before);
    return forward(ids).to(kFloat64);
  };
  CausalityResult r;
  for (int64_t trial = 0; trial < options.trials; ++trial) {
    const Tensor ids = randint(0, vocab_size, {options.batch, length}, kInt64, &gen);
    const Tensor base = run(ids);
    for (int64_t t = 0; t + 1 < length; ++t) {
      // Tokens after t move to different ids (shifted by 1..V-1 mod V).
      std::vector<int64_t> changed = ids.to_vector<int64_t>();
      const std::vector<int64_t> shift =
          randint(1, vocab_size, {options.batch, length}, kInt64, &gen).to_vector<int64_t>();
      for (int64_t b = 0; b < options.batch; ++b) {
        for (int64_t j = t + 1; j < length; ++j) {
          const size_t k = size_t(b * length + j);
          changed[k] = (changed[k] + shift[k]) % vocab_size;
        }
      }
      const Tensor out = run(tensor<int64_t>(changed, {options.batch, length}));
      const double change =
          (out.narrow(1, 0, t + 1) - base.narrow(1, 0, t + 1)).abs().max().item<double>();
      r.max_change = std::max(r.max_change, change);
      if (change > options.tolerance &&
          (r.first_leaking_position < 0 || t < r.first_leaking_position)) {
        r.first_leaking_position = t;
      }
    }
  }
  shared.set_state(before);
  r.causal = r.first_leaking_position < 0;
  std::ostringstream msg;
  if (r.causal) {
    msg << "causal: outputs at every position t are unchanged when tokens after t change (max "
           "change "
        << r.max_change << ")";
  } else {
    msg << "NOT causal: the output at position " << r.first_leaking_position
        << " changed when only later tokens changed (max change " << r.max_change
        << "). The model reads the future: its validation loss is not a next-token loss. Usual "
           "causes: no causal mask, or a norm/pooling over the sequence dimension.";
  }
  r.message = msg.str();
  return r;
}

AuditResult audit_parameters(nn::Module& model,
                             optim::Optimizer& optimizer,
                             const std::function<Tensor()>& loss_fn) {
  AuditResult r;
  const auto named = model.named_parameters();
  std::unordered_set<const void*> owned;
  for (const Tensor& p : optimizer.parameters()) owned.insert(p.impl());
  std::unordered_set<const void*> in_model;
  std::vector<std::pair<std::string, Tensor>> before;
  for (const auto& [name, p] : named) {
    in_model.insert(p.impl());
    if (p.requires_grad()) {
      NoGradGuard no_grad;
      before.emplace_back(name, p.clone());
    }
  }
  optimizer.zero_grad();
  loss_fn().backward();
  // Gradients are read before the step: some optimizers may consume them.
  std::vector<bool> got_grad;
  for (const auto& [name, p] : named) {
    if (!p.requires_grad()) continue;
    const Tensor& g = p.grad();
    NoGradGuard no_grad;
    got_grad.push_back(g.defined() && g.abs().max().item<double>() > 0);
  }
  optimizer.step();
  size_t i = 0;
  for (const auto& [name, p] : named) {
    if (!p.requires_grad()) continue;
    const bool is_owned = owned.count(p.impl()) != 0;
    if (!is_owned) r.problems.push_back(name + ": not owned by the optimizer");
    if (!got_grad[i]) r.problems.push_back(name + ": received no gradient");
    NoGradGuard no_grad;
    if (is_owned && got_grad[i] && equal(p, before[i].second)) {
      r.problems.push_back(name + ": unchanged by the optimizer step although it has a gradient");
    } else if (!is_owned && !equal(p, before[i].second)) {
      r.problems.push_back(name + ": changed although no optimizer owns it");
    }
    ++i;
  }
  int64_t foreign = 0;
  for (const Tensor& p : optimizer.parameters()) foreign += in_model.count(p.impl()) == 0;
  if (foreign > 0) {
    r.problems.push_back("the optimizer holds " + std::to_string(foreign) +
                         " tensor(s) that are not parameters of this model (was it built on "
                         "another model's parameters?)");
  }
  r.ok = r.problems.empty();
  std::ostringstream msg;
  if (r.ok) {
    msg << "every trainable parameter (" << before.size()
        << ") is owned by the optimizer, received a gradient and changed";
  } else {
    msg << r.problems.size() << " problem(s):";
    for (const auto& p : r.problems) msg << "\n  " << p;
  }
  r.message = msg.str();
  return r;
}

GradientFlow gradient_flow(const nn::Module& model, double zero_tolerance) {
  NoGradGuard no_grad;
  GradientFlow flow;
  for (const auto& [name, p] : model.named_parameters()) {
    if (!p.requires_grad()) continue;
    GradientStat s;
    s.name = name;
    s.numel = p.numel();
    s.weight_norm = p.to(kFloat64).square().sum().sqrt().item<double>();
    const Tensor& g = p.grad();
    s.has_grad = g.defined();
    if (s.has_grad && s.numel > 0) {
      const Tensor g64 = g.to(kFloat64);
      s.grad_norm = g64.square().sum().sqrt().item<double>();
      s.zero_fraction = g64.abs().le(zero_tolerance).to(kFloat64).mean().item<double>();
      s.ratio = s.weight_norm > 0 ? s.grad_norm / s.weight_norm : 0;
      s.no_signal = s.zero_fraction >= 1.0;
    }
    flow.ok = flow.ok && !s.no_signal;
    flow.params.push_back(s);
  }
  return flow;
}

std::string GradientFlow::table() const {
  size_t width = 9;
  for (const auto& s : params) width = std::max(width, s.name.size());
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %10s %8s %11s %11s\n", int(width), "parameter", "numel",
                "%zero", "|grad|", "|grad|/|w|");
  out << line;
  for (const auto& s : params) {
    std::snprintf(line, sizeof line, "%-*s %10lld %7.1f%% %11.3e %11.3e  %s\n", int(width),
                  s.name.c_str(), static_cast<long long>(s.numel), 100.0 * s.zero_fraction,
                  s.grad_norm, s.ratio,
                  !s.has_grad ? "NO GRADIENT" : (s.no_signal ? "NO SIGNAL" : ""));
    out << line;
  }
  return out.str();
}

namespace {

bool all_finite(const Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.numel() == 0) return true;
  // NaN compares false, so only finite entries are below infinity.
  const Tensor finite = t.abs().lt(std::numeric_limits<double>::infinity());
  return finite.sum().item<int64_t>() == t.numel();
}

}  // namespace

NonFiniteResult find_nonfinite(nn::Module& model, const std::function<void()>& fn) {
  NonFiniteResult r;
  std::vector<HookHandle> handles;
  struct Remove {
    std::vector<HookHandle>& h;
    ~Remove() {
      for (auto& handle : h) handle.remove();
    }
  } remove{handles};
  for (const auto& [name, module] : model.named_modules()) {
    handles.push_back(module->register_forward_hook(
        [&r, name = name](nn::Module& m, const Tensor& input, const Tensor& output) {
          if (r.found) return;
          NoGradGuard no_grad;
          if (all_finite(output)) return;
          r.found = true;
          r.module = name;
          r.message = "the first NaN/Inf of the forward pass comes out of " +
                      (name.empty() ? std::string("the model") : "\"" + name + "\"") + " (" +
                      m.name() + ", output " + shape_str(output.sizes()) + ") whose input was " +
                      (all_finite(input) ? "finite" : "already non-finite");
        }));
  }
  fn();
  if (!r.found) r.message = "no module produced a NaN or an Inf";
  return r;
}

LogitsCheck check_logits(const Tensor& outputs) {
  NoGradGuard no_grad;
  LogitsCheck c;
  if (outputs.dim() < 1 || outputs.size(-1) < 2 || outputs.numel() == 0) return c;
  const Tensor x = outputs.to(kFloat64);
  const bool in_unit = x.min().item<double>() >= 0 && x.max().item<double>() <= 1;
  const bool sums_to_one = in_unit && (x.sum({-1}) - 1.0).abs().max().item<double>() <= 1e-3;
  c.looks_like_probabilities = in_unit && sums_to_one;
  c.message = c.looks_like_probabilities
                  ? "the model outputs probabilities (every row in [0, 1], summing to 1), and "
                    "cross_entropy applies log_softmax to them as if they were logits: the "
                    "loss cannot fall much below log(C). Remove the softmax before the loss."
                  : "outputs look like logits";
  return c;
}

}  // namespace stride::doctor
