// Raw random fills of contiguous buffers: the CPU kernels behind uniform_,
// normal_, random_ (randint) and the ops built on them (registered as the
// random-fill stubs of backends/kernels.h in random_fill.cpp).
//
// Note [Counter-based fills]
// A fill of n elements with k outputs per Philox counter reserves
// ceil(n / k) counters with one gen.reserve() call (base = the first), then
// computes element i only from (gen.key(), counter base + i / k) and i % k.
// The result therefore does not depend on the thread count or on how
// parallel_for chunks the range, and a fill of n followed by a fill of m
// equals elements [0, n) and [ceil(n / k) * k, ceil(n / k) * k + m) of one
// fill of ceil(n / k) * k + m. The leftover outputs of a partial last counter
// are discarded.
#pragma once

#include <cstdint>

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "stride/generator.h"

namespace STRIDE_CPU_NAMESPACE {

using kernels::kNormalDoublePerCounter;
using kernels::kNormalFloatPerCounter;
using kernels::kRandintPerCounter;
using kernels::kUniformDoublePerCounter;
using kernels::kUniformFloatPerCounter;

// out[i] ~ U[from, to) for i in [0, n), rounded to the output type and kept
// strictly below `to` (in the output type) when from < to; from == to gives
// `from`. Throws ValueError unless from <= to and to - from is finite.
void fill_uniform(float* out, int64_t n, double from, double to, Generator& gen);
void fill_uniform(double* out, int64_t n, double from, double to, Generator& gen);

// bernoulli_(p)'s draws for elements [first, first + count) of a fill
// whose counters started at `base` under Philox key `key` (Generator::key()):
// out[i] = 1 when element first + i of fill_uniform(double*) over [0, 1) is
// below p, else 0, touching no Generator. For kernels that reserve the
// counters once and draw pieces of the fill later or on several threads,
// such as the dropout of fused attention.
void bernoulli_at(
    uint8_t* out, int64_t first, int64_t count, double p, uint64_t key, uint64_t base);

// out[i] ~ N(mean, std^2). Throws ValueError unless std >= 0.
void fill_normal(float* out, int64_t n, double mean, double std, Generator& gen);
void fill_normal(double* out, int64_t n, double mean, double std, Generator& gen);

// out[i] uniform on the integers [low, high), exactly unbiased (Lemire's
// multiply-shift with rejection; retries come from a per-element side stream,
// so they do not shift other elements). Throws ValueError unless low < high.
void fill_randint(int64_t* out, int64_t n, int64_t low, int64_t high, Generator& gen);

}  // namespace STRIDE_CPU_NAMESPACE
