// The CPU kernel of rotary_embedding (backends/kernels.h) and its row
// rotation (rope_kernels.h), which the rotary attention kernel shares. x's
// rows are read where they lie (Note [Row layout]) and y is written in its
// own layout. float32 rotates whole vectors at a time with cos/sin rounded
// once to float32 (vec_math.h): the op is a pass over memory, and widening
// every element to float64 would make it compute-bound instead; the
// result stays within float32 rounding. float64 keeps the scalar loop.
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <utility>

#include "backends/cpu/capability.h"
#include "backends/cpu/rope_kernels.h"
#include "backends/cpu/vec_math.h"
#include "backends/kernels.h"
#include "backends/row_layout.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

// Elements per parallel chunk: enough work to pay for waking a thread, and
// decoding's few rows (1, H, 1, D) run inline without a parallel region.
constexpr int64_t kGrain = 16384;

// Rotations of interleaved pairs run in vectors of the CPU's width, on
// tables expanded to the row's layout (RowRotation): C = (c0, c0, c1, c1,
// ...) and S = (-s0, s0, -s1, s1, ...), so a vector is two products and a
// pair swap within one register. Expanding compact tables in registers
// takes five shuffles a vector, more than the rotation itself when rows are
// in L1, while the tables' doubled size costs nothing measurable (bench/
// HISTORY.md, "rotations on expanded tables"). 16-lane shuffles on a CPU without AVX-512 (two
// ymm halves) compiled to scalar moves through the stack, hence the native
// width.
using RowVec = vec::NativeVec;
constexpr int64_t kPairLanes = vec::kNativeLanes;

template <size_t... I>
RowVec rotate_pairs(RowVec x, RowVec c, RowVec s, std::index_sequence<I...>) {
  return x * c + __builtin_shufflevector(x, x, (I ^ 1)...) * s;
}

// One row of D floats, pairs (x[2i], x[2i + 1]): y = x * C + swap_pairs(x) * S,
// the same on every lane. Blocks start at even offsets and a partial block
// has an even length, so both features of a pair are in one block (its
// unused lanes are zeros).
[[gnu::always_inline]] inline void rotate_interleaved(
    const float* x, const float* c, const float* s, float* y, int64_t D) {
  constexpr auto lanes = std::make_index_sequence<size_t(kPairLanes)>{};
  int64_t j = 0;
  for (; j + kPairLanes <= D; j += kPairLanes) {
    RowVec xv, cv, sv;
    std::memcpy(&xv, x + j, sizeof(xv));
    std::memcpy(&cv, c + j, sizeof(cv));
    std::memcpy(&sv, s + j, sizeof(sv));
    const RowVec yv = rotate_pairs(xv, cv, sv, lanes);
    std::memcpy(y + j, &yv, sizeof(yv));
  }
  if (j < D) {
    const size_t bytes = size_t(D - j) * sizeof(float);
    RowVec xv{}, cv{}, sv{};
    std::memcpy(&xv, x + j, bytes);
    std::memcpy(&cv, c + j, bytes);
    std::memcpy(&sv, s + j, bytes);
    const RowVec yv = rotate_pairs(xv, cv, sv, lanes);
    std::memcpy(y + j, &yv, bytes);
  }
}

// One row, pairs (x[i], x[i + half]).
void rotate_half_split(const float* x, const float* c, const float* s, float* y, int64_t half) {
  vec::for_each_block(0, half, [&](int64_t i, int64_t n) {
    const vec::Vec16f a = vec::load_n(x + i, n), b = vec::load_n(x + half + i, n);
    const vec::Vec16f cv = vec::load_n(c + i, n), sv = vec::load_n(s + i, n);
    vec::store_n(y + i, a * cv - b * sv, n);
    vec::store_n(y + half + i, a * sv + b * cv, n);
  });
}

}  // namespace

template <class T>
RowRotation<T>::RowRotation(const kernels::AngleTables& tables,
                            double sign,
                            int64_t D,
                            bool interleaved)
    : D_(D), interleaved_(interleaved) {
  const size_t half = size_t(D / 2), angles = tables.cosines.size();
  if (std::is_same_v<T, float> && interleaved_) {
    // Expanded to the rows' layout (rotate_interleaved).
    cosines_.resize(2 * angles);
    sines_.resize(2 * angles);
    for (size_t k = 0; k < angles; ++k) {
      cosines_[2 * k] = cosines_[2 * k + 1] = T(tables.cosines[k]);
      sines_[2 * k + 1] = T(sign * tables.sines[k]);
      sines_[2 * k] = -sines_[2 * k + 1];
    }
    table_cols_ = int64_t(2 * half);
  } else {
    cosines_.resize(angles);
    sines_.resize(angles);
    for (size_t k = 0; k < angles; ++k) {
      cosines_[k] = T(tables.cosines[k]);
      sines_[k] = T(sign * tables.sines[k]);
    }
    table_cols_ = int64_t(half);
  }
}

template <class T>
void RowRotation<T>::rows(
    const T* x, int64_t ldx, T* y, int64_t ldy, int64_t t0, int64_t count) const {
  const int64_t half = D_ / 2;
  // Pair i of a row: (a, b) = (x[2i], x[2i + 1]) or (x[i], x[i + D/2]).
  const int64_t a_step = interleaved_ ? 2 : 1, b_off = interleaved_ ? 1 : half;
  for (int64_t r = 0; r < count; ++r) {
    const T* xr = x + r * ldx;
    T* yr = y + r * ldy;
    const T* cs = cosines_.data() + (t0 + r) * table_cols_;
    const T* sn = sines_.data() + (t0 + r) * table_cols_;
    if constexpr (std::is_same_v<T, float>) {
      if (interleaved_) {
        rotate_interleaved(xr, cs, sn, yr, D_);
      } else {
        rotate_half_split(xr, cs, sn, yr, half);
      }
    } else {
      for (int64_t i = 0; i < half; ++i) {
        const int64_t ia = i * a_step, ib = ia + b_off;
        const T a = xr[ia], b = xr[ib], c = cs[i], s = sn[i];
        yr[ia] = a * c - b * s;
        yr[ib] = a * s + b * c;
      }
    }
  }
}

template class RowRotation<float>;
template class RowRotation<double>;

namespace {

// Rotates rows [begin, end), row r being row t = r % T of matrix r / T,
// one run of a matrix's rows at a time. A matrix's address is found once
// per matrix, not per row (RowLayout::offset divides by every leading dim).
template <class S>
void rotate_rows(const RowRotation<S>& rotate,
                 const detail::RowMatrices<const S>& xm,
                 const detail::RowMatrices<S>& ym,
                 int64_t T,
                 int64_t begin,
                 int64_t end) {
  for (int64_t r = begin; r < end;) {
    const int64_t n = r / T, t0 = r % T, t1 = std::min(T, t0 + (end - r));
    rotate.rows(xm[n] + t0 * xm.ld(), xm.ld(), ym[n] + t0 * ym.ld(), ym.ld(), t0, t1 - t0);
    r += t1 - t0;
  }
}

// Row r of x is row t = r % T of matrix r / T, as T = size(-2) is the
// innermost leading dim.
void rotary_embedding_kernel(
    const Tensor& x, const kernels::AngleTables& tables, double sign, bool interleaved, Tensor& y) {
  const int64_t T = x.size(-2), D = x.size(-1);
  const int64_t rows = D == 0 ? 0 : x.numel() / D;
  const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1));
  detail::dispatch_floating(x.dtype(), "rotary_embedding", [&](auto tag) {
    using S = typename decltype(tag)::type;
    const detail::RowMatrices<const S> xm(x);
    const detail::RowMatrices<S> ym(y);
    const RowRotation<S> rotate(tables, sign, D, interleaved);
    parallel_for(0, rows, grain,
                 [&](int64_t begin, int64_t end) { rotate_rows(rotate, xm, ym, T, begin, end); });
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::rotary_embedding, rotary_embedding_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
