// The CPU kernels of the reductions (backends/kernels.h): sum, prod, amax/amin
// and max/min with indices, over TensorIter's reduction view.
//
// Note [Deterministic reductions]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// A block of reduced elements is split into chunks of a fixed size
// (kReduceChunk), independent of the thread count; chunk partials are merged
// in chunk order. So a reduction gives bit-identical results on 1 and on N
// threads. Floating sums accumulate in double (float32 first in float lanes,
// 16 terms each: Note [Float lanes]).
//
// Inside a chunk the order of the adds is fixed by the shape and layout
// alone, so floating sums may use vector lanes. Three kernels, chosen by the
// iterator's layout:
// - inner (the reduced elements of an output are contiguous: sum over the
//   last dim, or all of a contiguous tensor): lane_sum, eight 8-lane double
//   accumulators added in a fixed tree at the end;
// - outer (the reduced dims are outside a contiguous kept dim: sum over dim 0
//   of a row-major matrix): column_sums adds whole rows into a strip of
//   column sums, so each output is one serial chain in row order; threads
//   split the columns and the chunks, never a chunk;
// - otherwise reduce_kernel's scalar loop, with lane_sum for contiguous runs.
// Work is split across threads only between outputs and between chunks, so
// none of this depends on the thread count. A layout change (a transposed
// copy) may change the order, and with it the last bits.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/cpu/vec_math.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "core/tensor_iter.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

constexpr int64_t kReduceChunk = 16384;

// Runs a reduction: for each output element, folds its block with
// step(acc, ptr, byte_stride, n, first_index), merges chunk partials with
// merge(a, b) and stores with write(out_ptrs, acc).
template <class Acc, class Step, class Merge, class Write>
void reduce_kernel(const TensorIter& iter, Acc init, Step step, Merge merge, Write write) {
  const int64_t n_out = iter.output_numel();
  const int64_t k = iter.reduce_numel();
  const int64_t nchunks = std::max<int64_t>(1, (k + kReduceChunk - 1) / kReduceChunk);
  auto fold = [&](int64_t o, int64_t begin, int64_t end, char** outs) {
    const char* in;
    iter.reduction_ptrs(o, outs, &in);
    Acc acc = init;
    int64_t index = begin;
    iter.for_each_run(in, begin, end, [&](const char* p, int64_t stride, int64_t n) {
      step(acc, p, stride, n, index);
      index += n;
    });
    return acc;
  };
  if (nchunks == 1) {
    const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(k, 1));
    parallel_for(0, n_out, grain, [&](int64_t b, int64_t e) {
      char* outs[kMaxIterOperands];
      for (int64_t o = b; o < e; ++o) write(outs, fold(o, 0, k, outs));
    });
    return;
  }
  std::vector<Acc> partial(size_t(n_out * nchunks), init);
  parallel_for(0, n_out * nchunks, 1, [&](int64_t b, int64_t e) {
    char* outs[kMaxIterOperands];
    for (int64_t t = b; t < e; ++t) {
      const int64_t o = t / nchunks, c = t % nchunks;
      partial[size_t(t)] = fold(o, c * kReduceChunk, std::min(k, (c + 1) * kReduceChunk), outs);
    }
  });
  char* outs[kMaxIterOperands];
  for (int64_t o = 0; o < n_out; ++o) {
    Acc acc = partial[size_t(o * nchunks)];
    for (int64_t c = 1; c < nchunks; ++c) acc = merge(acc, partial[size_t(o * nchunks + c)]);
    const char* unused;
    iter.reduction_ptrs(o, outs, &unused);
    write(outs, acc);
  }
}

template <class T>
using SumAcc = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;

// Note [Float lanes]
// Widening each float32 element to double would bind lane_sum to the
// conversions, below the rate a float cascade reads memory at. So float32 runs add
// the 64-element steps of a block of up to kFloatBlock elements in four
// 16-lane float accumulators, lane i % 64 taking element i, and widen the 64
// lane sums into the double accumulators once per block. A float lane sums
// 16 terms before it is widened, so the error stays within a few float
// roundings of those 16 (PyTorch's cascade: a few per level); all else adds
// in double. The order depends only on n.
constexpr int64_t kFloatBlock = 1024;

// kNativeDoubles elements at p as double, and the first n of them (the
// other lanes 0; reads nothing past element n), for column_sums.
template <class T>
inline vec::NativeVecd load_wide(const char* p) {
  if constexpr (std::is_same_v<T, float>) {
    return vec::widen_native(reinterpret_cast<const float*>(p));
  } else {
    return vec::load_native(reinterpret_cast<const double*>(p));
  }
}

template <class T>
inline vec::NativeVecd load_wide_n(const char* p, int64_t n) {
#if defined(__AVX512F__) && defined(__AVX512VL__)
  const __mmask8 m = __mmask8((1u << n) - 1);
  if constexpr (std::is_same_v<T, float>) {
    return _mm512_maskz_cvtps_pd(0xFF, _mm256_maskz_loadu_ps(m, p));
  } else {
    return _mm512_maskz_loadu_pd(m, p);
  }
#elif defined(__AVX2__) && !defined(__AVX512F__)
  const __m128i m = _mm_cmpgt_epi32(_mm_set1_epi32(int(n)), _mm_setr_epi32(0, 1, 2, 3));
  if constexpr (std::is_same_v<T, float>) {
    return _mm256_cvtps_pd(_mm_maskload_ps(reinterpret_cast<const float*>(p), m));
  } else {
    return _mm256_maskload_pd(reinterpret_cast<const double*>(p), _mm256_cvtepi32_epi64(m));
  }
#else
  T v[vec::kNativeDoubles] = {};
  std::memcpy(v, p, size_t(n) * sizeof(T));
  return load_wide<T>(reinterpret_cast<const char*>(v));
#endif
}

// lane_sum's 64 float64 lanes, in vectors of the register width (Note
// [Register width] in vec_math.h): lane l is lanes[l / W][l % W]. As eight
// 8-double vectors, with the float lanes as four 16-float vectors, they would
// go through the stack on every step on AVX2.
using Wide = vec::NativeVecd;
constexpr int64_t kWide = vec::kNativeDoubles;
constexpr int kWides = int(64 / kWide);

// Adds the `elements` floats at p (a multiple of 64) to the lanes as Note
// [Float lanes] says, and moves p past them.
inline void add_float_blocks(const char*& p, int64_t elements, Wide (&lanes)[kWides]) {
  constexpr int kVecs = int(64 / vec::kNativeLanes);  // float lane l is f[l / W][l % W]
  for (int64_t block = 0; block < elements; block += kFloatBlock) {
    vec::NativeVec f[kVecs];
    for (vec::NativeVec& v : f) v = vec::NativeVec{};
    const int64_t end = std::min(elements, block + kFloatBlock);
    for (int64_t i = block; i < end; i += 64, p += 64 * sizeof(float)) {
      const float* q = reinterpret_cast<const float*>(p);
      for (int v = 0; v < kVecs; ++v) f[v] += vec::load_native(q + v * vec::kNativeLanes);
    }
    vec::add_widened(lanes, f);
  }
}

// Sum of the n contiguous elements at p. Element i goes to lane i % 64 of
// 64 float64 lanes (independent add chains; the last partial block of 8 is
// zero-padded), eight groups of 8 lanes a0..a7 then added in a fixed tree,
// ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7)), and its 8 lanes in
// order. The order depends only on n, never on the address or on which
// thread runs it. Adding the padding changes nothing: a lane starts at +0
// and so never holds -0. Runs shorter than 16 are one serial chain, which is
// cheaper than setting up and folding the lanes. float32 adds in float
// lanes first (Note [Float lanes]).
template <class T>
double lane_sum(const char* p, int64_t n) {
  constexpr int64_t es = int64_t(sizeof(T));
  if (n < 16) {
    double t = 0;
    for (int64_t i = 0; i < n; ++i) t += double(reinterpret_cast<const T*>(p)[i]);
    return t;
  }
  Wide lanes[kWides];
  for (Wide& v : lanes) v = Wide{};
  int64_t i = n / 64 * 64;
  if constexpr (std::is_same_v<T, float>) {
    add_float_blocks(p, i, lanes);
  } else {
    for (int64_t j = 0; j < i; j += 64, p += 64 * es) {
      for (int w = 0; w < kWides; ++w) lanes[w] += load_wide<T>(p + w * kWide * es);
    }
  }
  // The 0 to 63 elements left, to lanes 0, 1, ... in turn.
  for (int w = 0; w < kWides && i < n; ++w) {
    const int64_t left = n - i - w * kWide;
    if (left >= kWide) {
      lanes[w] += load_wide<T>(p + w * kWide * es);
    } else if (left > 0) {
      lanes[w] += load_wide_n<T>(p + w * kWide * es, left);
    }
  }
  constexpr int kPerGroup = int(8 / kWide);  // vectors in a group of 8 lanes
  double t = 0;
  for (int h = 0; h < kPerGroup; ++h) {
    auto a = [&](int group) { return lanes[group * kPerGroup + h]; };
    const Wide s = ((a(0) + a(1)) + (a(2) + a(3))) + ((a(4) + a(5)) + (a(6) + a(7)));
    for (int k = 0; k < kWide; ++k) t += s[k];
  }
  return t;
}

// Column sums: acc[j] = sum of x[r][j] over the reduced elements ("rows") r
// in [begin, end), for the `width` adjacent columns at `col`, one row after
// another, so each column is one serial chain in row order whatever the
// width. Full strips of 8 vectors of columns keep their sums in eight
// float64 registers of the CPU's width (copied to locals for each run, so
// they stay there; 64 columns on AVX-512, 32 on AVX2, where 64 spilled),
// narrower ones in one (the last columns through masked loads).
template <class T>
void column_sums(const TensorIter& iter,
                 const char* col,
                 int64_t width,
                 int64_t begin,
                 int64_t end,
                 double* acc) {
  constexpr int64_t W = kWide;
  const int64_t es = int64_t(sizeof(T));
  int64_t j = 0;
  for (; j + 8 * W <= width; j += 8 * W) {
    Wide a[8];
    for (Wide& v : a) v = Wide{};
    iter.for_each_run(col + j * es, begin, end, [&](const char* p, int64_t s, int64_t n) {
      Wide r[8];
      for (int u = 0; u < 8; ++u) r[u] = a[u];
      for (int64_t i = 0; i < n; ++i, p += s) {
        for (int u = 0; u < 8; ++u) r[u] += load_wide<T>(p + u * W * es);
      }
      for (int u = 0; u < 8; ++u) a[u] = r[u];
    });
    std::memcpy(acc + j, a, sizeof(a));
  }
  for (; j + W <= width; j += W) {
    Wide a{};
    iter.for_each_run(col + j * es, begin, end, [&](const char* p, int64_t s, int64_t n) {
      Wide r = a;
      for (int64_t i = 0; i < n; ++i, p += s) r += load_wide<T>(p);
      a = r;
    });
    std::memcpy(acc + j, &a, sizeof(a));
  }
  if (j < width) {
    const int64_t w = width - j;
    Wide a{};
    iter.for_each_run(col + j * es, begin, end, [&](const char* p, int64_t s, int64_t n) {
      Wide r = a;
      for (int64_t i = 0; i < n; ++i, p += s) r += load_wide_n<T>(p, w);
      a = r;
    });
    for (int64_t l = 0; l < w; ++l) acc[j + l] = a[l];
  }
}

// Number of reduced dims at the front of a reduction iterator (output stride
// 0), or -1 if the layout is not the expected one.
int reduced_ndim(const TensorIter& iter) {
  int nr = 0;
  int64_t k = 1;
  while (nr < iter.ndim() && iter.strides(0)[nr] == 0) k *= iter.shape()[size_t(nr++)];
  return k == iter.reduce_numel() ? nr : -1;
}

// Sum over outer dims (e.g. dim 0 of a row-major matrix): the first kept dim
// is contiguous in the input, so adjacent outputs are adjacent columns and
// whole rows are added into a strip of column sums (vertical, dense). Work is
// split by strips of columns and by the fixed chunks of rows, never by the
// thread count, and each column sums its rows in the order the general
// kernel uses: serially within a chunk, chunks merged in order. Returns false
// (nothing done) for other layouts.
template <class T, class O>
bool sum_outer(const TensorIter& iter) {
  const int64_t k = iter.reduce_numel(), n_out = iter.output_numel();
  if (k == 0 || n_out == 0) return false;
  const int nr = reduced_ndim(iter);
  if (nr <= 0 || nr >= iter.ndim() || iter.strides(1)[nr] != int64_t(sizeof(T))) return false;
  if (iter.strides(1)[0] == int64_t(sizeof(T))) return false;  // inner reduction: lane_sum
  const int64_t m = iter.shape()[size_t(nr)];                  // columns per group
  const int64_t groups = n_out / m;
  const int64_t out_stride = iter.strides(0)[nr];
  constexpr int64_t kStrip = 256;  // columns per task (a multiple of column_sums' strips)
  const int64_t strips = (m + kStrip - 1) / kStrip;
  const int64_t nchunks = (k + kReduceChunk - 1) / kReduceChunk;
  const int64_t tasks = groups * strips * nchunks;
  const int64_t grain =
      std::max<int64_t>(1, 32768 / (std::min(m, kStrip) * std::min(k, kReduceChunk)));
  std::vector<double> partial(nchunks > 1 ? size_t(n_out * nchunks) : 0);
  parallel_for(0, tasks, grain, [&](int64_t b, int64_t e) {
    double acc[kStrip];
    char* outs[kMaxIterOperands];
    const char* in;
    for (int64_t t = b; t < e; ++t) {
      const int64_t c = t % nchunks, gs = t / nchunks;
      const int64_t g = gs / strips, j0 = (gs % strips) * kStrip;
      const int64_t width = std::min(kStrip, m - j0);
      iter.reduction_ptrs(g * m, outs, &in);
      column_sums<T>(iter, in + j0 * int64_t(sizeof(T)), width, c * kReduceChunk,
                     std::min(k, (c + 1) * kReduceChunk), acc);
      if (nchunks == 1) {
        char* o = outs[0] + j0 * out_stride;
        for (int64_t j = 0; j < width; ++j, o += out_stride) *reinterpret_cast<O*>(o) = O(acc[j]);
      } else {
        for (int64_t j = 0; j < width; ++j)
          partial[size_t(((g * m) + j0 + j) * nchunks + c)] = acc[j];
      }
    }
  });
  if (nchunks > 1) {
    char* outs[kMaxIterOperands];
    const char* in;
    for (int64_t g = 0; g < groups; ++g) {
      iter.reduction_ptrs(g * m, outs, &in);
      for (int64_t j = 0; j < m; ++j) {
        const double* p = &partial[size_t((g * m + j) * nchunks)];
        double acc = p[0];
        for (int64_t c = 1; c < nchunks; ++c) acc = acc + p[c];
        *reinterpret_cast<O*>(outs[0] + j * out_stride) = O(acc);
      }
    }
  }
  return true;
}

// Sum over the innermost dim(s) (e.g. dim 1 of a row-major matrix, or all of
// a contiguous tensor): each output's block is one contiguous run, summed by
// lane_sum. Blocks longer than kReduceChunk are left to reduce_kernel, which
// splits them into chunks summed the same way; up to that length both give
// the same bits (0 + lane_sum(...) is lane_sum(...)). Returns false (nothing
// done) for other layouts.
template <class T, class O>
bool sum_inner(const TensorIter& iter) {
  const int64_t k = iter.reduce_numel(), n_out = iter.output_numel();
  if (k == 0 || k > kReduceChunk || n_out == 0) return false;
  if (reduced_ndim(iter) != 1 || iter.strides(1)[0] != int64_t(sizeof(T))) return false;
  // One kept dim: output o is at a fixed stride (reduction_ptrs otherwise).
  const bool one_kept = iter.ndim() == 2;
  const int64_t out_stride = one_kept ? iter.strides(0)[1] : 0;
  const int64_t in_stride = one_kept ? iter.strides(1)[1] : 0;
  char* out0;
  const char* in0;
  iter.reduction_ptrs(0, &out0, &in0);
  parallel_for(0, n_out, std::max<int64_t>(1, 32768 / k), [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      char* out = out0 + o * out_stride;
      const char* in = in0 + o * in_stride;
      if (!one_kept) iter.reduction_ptrs(o, &out, &in);
      *reinterpret_cast<O*>(out) = O(lane_sum<T>(in, k));
    }
  });
  return true;
}

// The CPU kernel of sum: a T input summed into an O output.
void sum_kernel_cpu(const TensorIter& iter, ScalarType in_dtype, ScalarType out_dtype) {
  detail::dispatch_numeric_and_bool(in_dtype, "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = SumAcc<T>;
    detail::dispatch_numeric(out_dtype, "sum", [&](auto otag) {
      using O = typename decltype(otag)::type;
      constexpr bool kFloating = std::is_floating_point_v<T>;
      if constexpr (kFloating && std::is_same_v<T, O>) {  // the only floating pairs
        if (sum_inner<T, O>(iter) || sum_outer<T, O>(iter)) return;
      }
      reduce_kernel<Acc>(
          iter, Acc(0),
          [](Acc& acc, const char* p, int64_t s, int64_t n, int64_t) {
            if (s == int64_t(sizeof(T))) {
              if constexpr (kFloating) {
                acc += lane_sum<T>(p, n);
              } else {  // integer sums are exact in any order, so this vectorises
                const T* q = reinterpret_cast<const T*>(p);
                for (int64_t i = 0; i < n; ++i) acc += Acc(q[i]);
              }
              return;
            }
            for (int64_t i = 0; i < n; ++i) acc += Acc(*reinterpret_cast<const T*>(p + i * s));
          },
          [](Acc a, Acc b) { return a + b; },
          [](char** outs, Acc acc) { *reinterpret_cast<O*>(outs[0]) = O(acc); });
    });
  });
}

// The CPU kernel of prod: a T input multiplied into an O output, in sum's
// accumulator types; an empty block gives 1.
void prod_kernel_cpu(const TensorIter& iter, ScalarType in_dtype, ScalarType out_dtype) {
  detail::dispatch_numeric_and_bool(in_dtype, "prod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = SumAcc<T>;
    detail::dispatch_numeric(out_dtype, "prod", [&](auto otag) {
      using O = typename decltype(otag)::type;
      reduce_kernel<Acc>(
          iter, Acc(1),
          [](Acc& acc, const char* p, int64_t s, int64_t n, int64_t) {
            for (int64_t i = 0; i < n; ++i) acc *= Acc(*reinterpret_cast<const T*>(p + i * s));
          },
          [](Acc a, Acc b) { return a * b; },
          [](char** outs, Acc acc) { *reinterpret_cast<O*>(outs[0]) = O(acc); });
    });
  });
}

// amax / amin: NaN propagates; the op has ruled out an empty block.

// The CPU kernel of amax / amin.
template <bool IsMax>
void extreme_kernel_cpu(const TensorIter& iter, ScalarType dtype, const char* op) {
  detail::dispatch_numeric_and_bool(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto better = [](T a, T b) {  // is b preferred over a?
      if (a != a) return false;   // NaN already won
      if (b != b) return true;
      return IsMax ? b > a : b < a;
    };
    // -inf/+inf for floats, so that an all -inf (+inf) block yields -inf (+inf).
    constexpr bool has_inf = std::numeric_limits<T>::has_infinity;
    const T init =
        IsMax ? (has_inf ? -std::numeric_limits<T>::infinity() : std::numeric_limits<T>::lowest())
              : (has_inf ? std::numeric_limits<T>::infinity() : std::numeric_limits<T>::max());
    reduce_kernel<T>(
        iter, init,
        [&](T& acc, const char* p, int64_t s, int64_t n, int64_t) {
          for (int64_t i = 0; i < n; ++i) {
            const T v = *reinterpret_cast<const T*>(p + i * s);
            if (better(acc, v)) acc = v;
          }
        },
        [&](T a, T b) { return better(a, b) ? b : a; },
        [](char** outs, T acc) { *reinterpret_cast<T*>(outs[0]) = acc; });
  });
}

// The CPU kernel of max / min along a dim: values and first indices.
template <bool IsMax>
void extreme_index_kernel_cpu(const TensorIter& iter, ScalarType dtype, const char* op) {
  detail::dispatch_numeric_and_bool(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = std::pair<T, int64_t>;
    auto better = [](const Acc& a, const Acc& b) {
      if (a.second < 0) return true;
      if (a.first != a.first) return false;
      if (b.first != b.first) return true;
      return IsMax ? b.first > a.first : b.first < a.first;
    };
    reduce_kernel<Acc>(
        iter, Acc(T(0), -1),
        [&](Acc& acc, const char* p, int64_t s, int64_t n, int64_t first) {
          for (int64_t i = 0; i < n; ++i) {
            Acc v{*reinterpret_cast<const T*>(p + i * s), first + i};
            if (better(acc, v)) acc = v;
          }
        },
        [&](const Acc& a, const Acc& b) { return better(a, b) ? b : a; },
        [](char** outs, const Acc& acc) {
          *reinterpret_cast<T*>(outs[0]) = acc.first;
          *reinterpret_cast<int64_t*>(outs[1]) = acc.second;
        });
  });
}

void extreme_kernel(const TensorIter& iter, ScalarType dtype, bool is_max, const char* op) {
  if (is_max) {
    extreme_kernel_cpu<true>(iter, dtype, op);
  } else {
    extreme_kernel_cpu<false>(iter, dtype, op);
  }
}

void extreme_index_kernel(const TensorIter& iter, ScalarType dtype, bool is_max, const char* op) {
  if (is_max) {
    extreme_index_kernel_cpu<true>(iter, dtype, op);
  } else {
    extreme_index_kernel_cpu<false>(iter, dtype, op);
  }
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::reduce_sum, sum_kernel_cpu);
STRIDE_REGISTER_CPU_KERNEL(kernels::reduce_prod, prod_kernel_cpu);
STRIDE_REGISTER_CPU_KERNEL(kernels::reduce_extreme, extreme_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::reduce_extreme_index, extreme_index_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
