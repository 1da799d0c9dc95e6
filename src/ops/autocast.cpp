#include <unordered_map>

#include "backends/kernels.h"
#include "ops/autocast_internal.h"
#include "stride/autocast.h"
#include "stride/autograd.h"
#include "stride/ops.h"

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
  kernels::round_to_bfloat16(t.device(), src, out);
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
