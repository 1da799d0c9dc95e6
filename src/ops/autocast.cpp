#include <unordered_map>

#include "backends/kernels.h"
#include "core/layout.h"
#include "ops/autocast_internal.h"
#include "stride/autocast.h"
#include "stride/autograd.h"
#include "stride/ops.h"

namespace stride {

namespace {

struct CachedCast {
  Tensor source;  // keeps the parameter (and so its address) alive
  uint64_t version;
  Tensor bf16, rounded_float32;  // either may be undefined
};

struct AutocastState {
  int depth = 0;  // guards alive on this thread; the cache lives while > 0
  std::unordered_map<const void*, CachedCast> cache;
};

thread_local AutocastState state;
// Apart from the state: every matmul-class call reads it, and a thread_local
// of a trivial type needs no initialisation check on each access.
thread_local bool enabled = false;

}  // namespace

namespace detail {

Tensor autocast_round(const Tensor& t, ScalarType dtype) {
  // A broadcast factor (matmul's expanded batch) is rounded once per element
  // it holds, then expanded again.
  DimVector held = t.sizes().dims();
  bool broadcast = false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.stride(d) == 0 && t.size(d) > 1) {
      held[size_t(d)] = 1;
      broadcast = true;
    }
  }
  if (broadcast) {
    return autocast_round(t.as_strided(held, t.strides(), t.storage_offset()), dtype)
        .expand(t.sizes());
  }
  // A dense layout (a transposed weight) is kept: the GEMM reads either
  // orientation, and the rounding is then one pass in memory order.
  const Tensor src = is_non_overlapping_and_dense(t) ? t : t.contiguous();
  Tensor out = empty_preserving_strides(src, t.options().dtype(dtype));
  kernels::round_to_bfloat16(t.device(), src, out);
  return out;
}

}  // namespace detail

bool Autocast::is_enabled() {
  return enabled;
}

AutocastGuard::AutocastGuard(bool on) : prev_(enabled) {
  enabled = on;
  ++state.depth;
}

AutocastGuard::~AutocastGuard() {
  enabled = prev_;
  if (--state.depth == 0) state.cache.clear();
}

namespace detail {

Tensor autocast_weight(const Tensor& t, ScalarType dtype) {
  NoGradGuard no_grad;
  if (!(t.is_leaf() && t.requires_grad()) || state.depth == 0) return autocast_round(t, dtype);
  CachedCast& cached = state.cache[t.impl()];
  if (!(cached.source.defined() && cached.version == t.version() &&
        cached.source.sizes() == t.sizes() && cached.source.strides() == t.strides())) {
    cached = CachedCast{t, t.version(), Tensor(), Tensor()};
  }
  Tensor& cast = dtype == kBFloat16 ? cached.bf16 : cached.rounded_float32;
  if (!cast.defined()) cast = autocast_round(t, dtype);
  return cast;
}

}  // namespace detail
}  // namespace stride
