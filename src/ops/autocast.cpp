#include <unordered_map>

#include "backends/cpu/blas.h"
#include "ops/autocast_internal.h"
#include "ops/device_kernel.h"
#include "stride/autocast.h"
#include "stride/autograd.h"
#include "stride/ops.h"
#include "stride/parallel.h"

namespace stride {

namespace {

struct CachedCast {
  Tensor source;  // keeps the parameter (and so its address) alive
  uint64_t version;
  Tensor bf16;
};

struct AutocastState {
  bool enabled = false;
  int depth = 0;  // guards alive on this thread; the cache lives while > 0
  std::unordered_map<const void*, CachedCast> cache;
};

thread_local AutocastState state;

}  // namespace

namespace detail {

Tensor autocast_bf16(const Tensor& t) {
  const Tensor src = t.contiguous();
  Tensor out = empty(t.sizes(), t.options().dtype(kBFloat16));
  run_kernel("autocast_bf16", t.device(), [&] {
    const float* from = src.data_ptr<float>();
    BFloat16* to = out.data_ptr<BFloat16>();
    // A pass over memory (a gradient of the large Llama is 4M floats): split
    // only when large, as linalg's operand conversion.
    parallel_for(0, src.numel(), int64_t(1) << 16, [&](int64_t begin, int64_t end) {
      cpu::round_to_bf16(from + begin, to + begin, end - begin);
    });
  });
  return out;
}

}  // namespace detail

bool Autocast::is_enabled() {
  return state.enabled;
}

AutocastGuard::AutocastGuard(bool enabled) : prev_(state.enabled) {
  state.enabled = enabled;
  ++state.depth;
}

AutocastGuard::~AutocastGuard() {
  state.enabled = prev_;
  if (--state.depth == 0) state.cache.clear();
}

namespace detail {

Tensor autocast_bf16_weight(const Tensor& t) {
  NoGradGuard no_grad;
  if (!(t.is_leaf() && t.requires_grad()) || state.depth == 0) return autocast_bf16(t);
  auto it = state.cache.find(t.impl());
  if (it != state.cache.end() && it->second.version == t.version() &&
      it->second.source.sizes() == t.sizes() && it->second.source.strides() == t.strides()) {
    return it->second.bf16;
  }
  Tensor converted = autocast_bf16(t);
  state.cache[t.impl()] = CachedCast{t, t.version(), converted};
  return converted;
}

}  // namespace detail
}  // namespace stride
