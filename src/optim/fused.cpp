#include "optim/fused.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "backends/kernels.h"
#include "core/check.h"
#include "core/overlap.h"
#include "core/tensor_iter.h"
#include "stride/parallel.h"

namespace stride::optim::detail {

bool fused_supported(const Tensor& param, const Tensor& grad) {
  const DeviceType type = param.device().type();
  return grad.device() == param.device() && kernels::adam_step.has_kernel(type) &&
         kernels::sgd_step.has_kernel(type) && param.dtype() == grad.dtype() &&
         (param.dtype() == kFloat32 || param.dtype() == kFloat64);
}

namespace {

// Elements per parallel task: the elementwise kernels' default (PyTorch's
// GRAIN_SIZE); a smaller grain has not been shown to pay.
constexpr int64_t kGrain = 32768;

TensorIter adam_iter(Tensor& param,
                     Tensor& exp_avg,
                     Tensor& exp_avg_sq,
                     Tensor& max_exp_avg_sq,
                     const Tensor& grad,
                     const kernels::AdamStepScalars& s) {
  STRIDE_ASSERT(fused_supported(param, grad), "fused Adam on ", to_string(param.dtype()));
  TensorIterConfig cfg(s.decoupled ? "AdamW" : "Adam");
  cfg.add_output(param).add_output(exp_avg).add_output(exp_avg_sq);
  if (s.amsgrad) cfg.add_output(max_exp_avg_sq);
  cfg.add_input(grad);
  return cfg.build();
}

TensorIter sgd_iter(Tensor& param,
                    Tensor& momentum_buffer,
                    const Tensor& grad,
                    const kernels::SGDStepScalars& s) {
  STRIDE_ASSERT(fused_supported(param, grad), "fused SGD on ", to_string(param.dtype()));
  TensorIterConfig cfg("SGD");
  cfg.add_output(param);
  if (s.momentum != 0) cfg.add_output(momentum_buffer);
  cfg.add_input(grad);
  return cfg.build();
}

}  // namespace

// Note [Multi-tensor steps]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~
// A model has many small parameters: the article Llama's 128 x 128 head
// projections are half of a parallel task's grain, so updated one at a time
// each ran on one thread while the others waited. A step's fused updates are
// queued instead and run together: one parallel region over all their
// elements, in tasks that may span several parameters (PyTorch's
// multi-tensor `foreach` kernels). An element's update reads and writes only
// that element of its own tensors, so the split changes no bits. When
// queued tensors share memory (parameters that are overlapping views, or a
// gradient viewing another parameter), the order of the updates could
// matter, and they run one after another as before.
struct FusedStep::Update {
  TensorIter iter;
  std::vector<Tensor> written, read;  // for the overlap test
  bool adam;
  kernels::AdamStepScalars adam_scalars;
  kernels::SGDStepScalars sgd_scalars;
  kernels::SGDMomentum mode;
  Device device;
  int64_t offset = 0;  // of its first element among the queue's elements

  // Elements [begin, end) of the update.
  void apply(int64_t begin, int64_t end) const {
    if (adam) {
      kernels::adam_step(device, iter, adam_scalars, begin, end);
    } else {
      kernels::sgd_step(device, iter, sgd_scalars, mode, begin, end);
    }
  }
};

FusedStep::FusedStep() = default;
FusedStep::~FusedStep() = default;

void FusedStep::add_adam(Tensor& param,
                         Tensor& exp_avg,
                         Tensor& exp_avg_sq,
                         Tensor& max_exp_avg_sq,
                         const Tensor& grad,
                         const kernels::AdamStepScalars& s) {
  std::vector<Tensor> written{param, exp_avg, exp_avg_sq};
  if (s.amsgrad) written.push_back(max_exp_avg_sq);
  updates_.push_back(Update{adam_iter(param, exp_avg, exp_avg_sq, max_exp_avg_sq, grad, s),
                            std::move(written),
                            {grad},
                            true,
                            s,
                            {},
                            kernels::SGDMomentum::None,
                            param.device()});
}

void FusedStep::add_sgd(Tensor& param,
                        Tensor& momentum_buffer,
                        bool first_step,
                        const Tensor& grad,
                        const kernels::SGDStepScalars& s) {
  const bool has_momentum = s.momentum != 0;
  std::vector<Tensor> written{param};
  if (has_momentum) written.push_back(momentum_buffer);
  using kernels::SGDMomentum;
  const SGDMomentum mode = !has_momentum ? SGDMomentum::None
                           : first_step  ? SGDMomentum::First
                                         : SGDMomentum::Update;
  updates_.push_back(Update{sgd_iter(param, momentum_buffer, grad, s),
                            std::move(written),
                            {grad},
                            false,
                            {},
                            s,
                            mode,
                            param.device()});
}

bool FusedStep::independent() const {
  // Every operand's span, sorted by start: two spans of different updates
  // that intersect, one of them written, make the order matter.
  struct Span {
    uintptr_t lo, hi;
    size_t update;
    bool written;
  };
  std::vector<Span> spans;
  for (size_t u = 0; u < updates_.size(); ++u) {
    for (bool written : {true, false}) {
      for (const Tensor& t : written ? updates_[u].written : updates_[u].read) {
        if (t.numel() == 0) continue;
        const auto [lo, hi] = ::stride::detail::byte_span(t);
        spans.push_back({lo, hi, u, written});
      }
    }
  }
  std::sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.lo < b.lo; });
  // Each span against the earlier ones still open (their hi past its lo).
  std::vector<const Span*> open;
  for (const Span& s : spans) {
    std::erase_if(open, [&](const Span* o) { return o->hi <= s.lo; });
    for (const Span* o : open) {
      if (o->update != s.update && (o->written || s.written)) return false;
    }
    open.push_back(&s);
  }
  return true;
}

void FusedStep::run() {
  if (updates_.empty()) return;
  if (!independent()) {
    for (const Update& u : updates_) {
      parallel_for(0, u.iter.numel(), kGrain, [&](int64_t b, int64_t e) { u.apply(b, e); });
    }
    updates_.clear();
    return;
  }
  int64_t total = 0;
  for (Update& u : updates_) {
    u.offset = total;
    total += u.iter.numel();
  }
  parallel_for(0, total, kGrain, [&](int64_t begin, int64_t end) {
    // The last update starting at or before `begin`, then those after it.
    auto it = std::upper_bound(updates_.begin(), updates_.end(), begin,
                               [](int64_t at, const Update& u) { return at < u.offset; });
    for (--it; it != updates_.end() && it->offset < end; ++it) {
      const int64_t lo = std::max(begin, it->offset) - it->offset;
      const int64_t hi = std::min(end, it->offset + it->iter.numel()) - it->offset;
      if (lo < hi) it->apply(lo, hi);
    }
  });
  updates_.clear();
}

}  // namespace stride::optim::detail
