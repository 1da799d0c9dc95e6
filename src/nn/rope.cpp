// rotary_embedding: each pair of features (a, b) at position p is rotated by
// the angle +p * theta_i, i.e. a + i b is multiplied by e^{i p theta_i} (Meta's
// complex multiply, and what Hugging Face's rotate_half computes):
//   a' = a cos - b sin,   b' = a sin + b cos.
// The kernel reads x's rows where they lie when x has a row layout
// (Note [Row layout]) and writes y in x's memory order; its backward is the
// rotation by the opposite angle (the transpose of a rotation), which is the
// same kernel, so it is differentiable to any order. Angles and cos/sin are
// computed in float64, so the result does not lose precision at large
// positions. float32 rotates whole vectors at a time with cos/sin rounded once to
// float32 (backends/cpu/vec_math.h): the op is a pass over memory, and
// widening every element to float64 made it several times slower than that;
// the result stays within float32 rounding. float64 keeps the scalar loop.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "autograd/node.h"
#include "backends/cpu/vec_math.h"
#include "core/dispatch.h"
#include "nn/rope_kernels.h"
#include "nn/row_layout.h"
#include "ops/device_kernel.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "stride/parallel.h"
#include "stride/profiler.h"

namespace stride::nn::functional {

namespace {

namespace vec = ::stride::cpu::vec;

// Elements per parallel chunk: enough work to pay for waking a thread, and
// decoding's few rows (1, H, 1, D) run inline without a parallel region.
constexpr int64_t kGrain = 16384;
// Angles per chunk of a table (each a sincos, some 10 ns).
constexpr int64_t kTableGrain = 512;

void check_args(const Tensor& x, int64_t position_offset, double base, const char* op) {
  STRIDE_CHECK(x.is_floating_point(), DTypeError, "[", op,
               "] expected a floating-point input; got ", to_string(x.dtype()),
               ". Hint: convert with .to(kFloat32).");
  STRIDE_CHECK(
      x.dim() >= 2 && x.size(-1) % 2 == 0, ShapeError, "[", op,
      "] expected x (..., T, D) with an even D; got ", shape_str(x.sizes()),
      ". Hint: rotary embeddings rotate pairs of features, per head: (B, H, T, head_dim).");
  STRIDE_CHECK(position_offset >= 0, ValueError, "[", op, "] expected position_offset >= 0; got ",
               position_offset, ".");
  STRIDE_CHECK(base > 0, ValueError, "[", op, "] expected base > 0; got ", base, ".");
}

using detail::AngleTables;
using detail::SharedTables;

// The angles (offset + t) * theta_i, theta_i = base^(-2i/D). A sincos costs
// about as much as rotating a few dozen elements, so long sequences split
// the table among threads (each entry is computed alike wherever it falls).
AngleTables angle_tables(int64_t T, int64_t D, int64_t offset, double base) {
  const int64_t half = D / 2;
  std::vector<double> thetas(static_cast<size_t>(half));
  for (int64_t i = 0; i < half; ++i) {
    thetas[size_t(i)] = 1.0 / std::pow(base, double(2 * i) / double(D));
  }
  AngleTables tables;
  tables.cosines.resize(size_t(T * half));
  tables.sines.resize(size_t(T * half));
  parallel_for(0, T, std::max<int64_t>(1, kTableGrain / std::max<int64_t>(half, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t t = begin; t < end; ++t) {
                   for (int64_t i = 0; i < half; ++i) {
                     const double angle = double(offset + t) * thetas[size_t(i)];
                     tables.cosines[size_t(t * half + i)] = std::cos(angle);
                     tables.sines[size_t(t * half + i)] = std::sin(angle);
                   }
                 }
               });
  return tables;
}

// Rotations of interleaved pairs run in vectors of the CPU's width, on
// tables expanded to the row's layout (RowRotation): C = (c0, c0, c1, c1,
// ...) and S = (-s0, s0, -s1, s1, ...), so a vector is two products and a
// pair swap within one register. Expanding compact tables in registers
// took five shuffles a vector: on a Zen 3 CPU, rows in L1, 2.3-2.5 ns a
// vector against 1.7-1.9 expanded (rows from memory cost ~6 ns either
// way), and the standalone pass over the article's heads is no slower for
// the tables' doubled size. 16-lane shuffles on a CPU without AVX-512 (two
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

namespace detail {

template <class T>
RowRotation<T>::RowRotation(const AngleTables& tables,
                            double sign,
                            int64_t D,
                            RopeConvention convention)
    : D_(D), interleaved_(convention == RopeConvention::Interleaved) {
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

}  // namespace detail

namespace {

// Rotates rows [begin, end), row r being row t = r % T of matrix r / T,
// one run of a matrix's rows at a time. A matrix's address is found once
// per matrix, not per row (RowLayout::offset divides by every leading dim).
template <class S>
void rotate_rows(const detail::RowRotation<S>& rotate,
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

// Rotates by +angle (sign = 1) or -angle (sign = -1). Row r of x is row
// t = r % T of matrix r / T, as T = size(-2) is the innermost leading dim.
Tensor rope(const Tensor& x, const SharedTables& tables, RopeConvention conv, double sign) {
  const int64_t T = x.size(-2), D = x.size(-1);
  const int64_t rows = D == 0 ? 0 : x.numel() / D;
  Tensor y = detail::empty_preserving_layout(x, D);
  {
    NoGradGuard no_grad;
    const Tensor xr = detail::with_row_layout(x);
    const int64_t grain = std::max<int64_t>(1, kGrain / std::max<int64_t>(D, 1));
    ::stride::detail::run_kernel("rotary_embedding", x.device(), [&] {
      ::stride::detail::dispatch_floating(x.dtype(), "rotary_embedding", [&](auto tag) {
        using S = typename decltype(tag)::type;
        const detail::RowMatrices<const S> xm(xr);
        const detail::RowMatrices<S> ym(y);
        const detail::RowRotation<S> rotate(*tables, sign, D, conv);
        parallel_for(0, rows, grain, [&](int64_t begin, int64_t end) {
          rotate_rows(rotate, xm, ym, T, begin, end);
        });
      });
    });
  }
  if (auto node = autograd::make_node("rotary_embedding", {&x}, {&y})) {
    node->set_backward([tables, conv, sign](const autograd::Grads& gs) {
      return autograd::Grads{rope(gs[0], tables, conv, -sign)};
    });
  }
  return y;
}

// The float16/bfloat16 inputs compute in float32, as every fused nn op.
template <class Fn>
Tensor in_float32(const Tensor& x, Fn fn) {
  if (x.dtype() == kFloat16 || x.dtype() == kBFloat16) return fn(x.to(kFloat32)).to(x.dtype());
  return fn(x);
}

}  // namespace

Tensor rotary_embedding(const Tensor& x,
                        int64_t position_offset,
                        double base,
                        RopeConvention convention) {
  check_args(x, position_offset, base, "rotary_embedding");
  return in_float32(x, [&](const Tensor& xf) {
    profiler::RecordFunction record("rotary_embedding", {xf});
    auto tables = std::make_shared<const AngleTables>(
        angle_tables(xf.size(-2), xf.size(-1), position_offset, base));
    return rope(xf, tables, convention, 1.0);
  });
}

namespace detail {

SharedTables checked_tables(const char* op, const Tensor& x, const Tensor& cos, const Tensor& sin) {
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  for (const Tensor* table : {&cos, &sin}) {
    STRIDE_CHECK(table->defined() && table->is_floating_point() && table->dim() == 2 &&
                     table->size(0) == T && table->size(1) == half,
                 ShapeError, "[", op, "] expected floating cos and sin tables (T, D/2) = (", T,
                 ", ", half, ") for x ", shape_str(x.sizes()), "; got ",
                 table->defined() ? shape_str(table->sizes()) : std::string("undefined"), ".");
  }
  ::stride::detail::common_device(op, {&x, &cos, &sin});
  auto tables = std::make_shared<AngleTables>();
  if (x.device().is_meta()) return tables;  // no values to rotate by
  const Tensor c = cos.to(kFloat64).contiguous(), s = sin.to(kFloat64).contiguous();
  tables->cosines.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
  tables->sines.assign(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
  return tables;
}

}  // namespace detail

Tensor rotary_embedding(const Tensor& x,
                        const Tensor& cos,
                        const Tensor& sin,
                        RopeConvention convention) {
  check_args(x, 0, 1.0, "rotary_embedding");
  const SharedTables tables = detail::checked_tables("rotary_embedding", x, cos, sin);
  return in_float32(x, [&](const Tensor& xf) {
    profiler::RecordFunction record("rotary_embedding", {xf});
    return rope(xf, tables, convention, 1.0);
  });
}

std::pair<Tensor, Tensor> rotary_tables(int64_t T,
                                        int64_t D,
                                        int64_t position_offset,
                                        double base) {
  STRIDE_CHECK(T >= 0 && D >= 0 && D % 2 == 0, ShapeError,
               "[rotary_tables] expected T >= 0 and an even D >= 0; got T = ", T, ", D = ", D, ".");
  STRIDE_CHECK(position_offset >= 0, ValueError,
               "[rotary_tables] expected position_offset >= 0; got ", position_offset, ".");
  STRIDE_CHECK(base > 0, ValueError, "[rotary_tables] expected base > 0; got ", base, ".");
  const AngleTables tables = angle_tables(T, D, position_offset, base);
  return {tensor<double>(tables.cosines, {T, D / 2}), tensor<double>(tables.sines, {T, D / 2})};
}

Tensor rotary_embedding_reference(const Tensor& x,
                                  int64_t position_offset,
                                  double base,
                                  RopeConvention convention) {
  check_args(x, position_offset, base, "rotary_embedding_reference");
  const int64_t T = x.size(-2), D = x.size(-1), half = D / 2;
  const AngleTables tables = angle_tables(T, D, position_offset, base);
  const std::vector<double>&cosines = tables.cosines, &sines = tables.sines;
  const bool interleaved = convention == RopeConvention::Interleaved;
  // (T, D) tables: feature j belongs to pair j / 2 (interleaved) or j % (D/2).
  std::vector<double> cos_full(size_t(T * D)), sin_full(size_t(T * D));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t j = 0; j < D; ++j) {
      const int64_t i = interleaved ? j / 2 : j % half;
      cos_full[size_t(t * D + j)] = cosines[size_t(t * half + i)];
      sin_full[size_t(t * D + j)] = sines[size_t(t * half + i)];
    }
  }
  const Tensor c = tensor<double>(cos_full, {T, D}).to(x.dtype());
  const Tensor s = tensor<double>(sin_full, {T, D}).to(x.dtype());
  // rotated(x) pairs (a, b) -> (-b, a), so that x * cos + rotated * sin rotates.
  Tensor rotated;
  if (interleaved) {
    DimVector pairs = x.sizes().dims();
    pairs.back() = half;
    pairs.push_back(2);
    const Tensor xp = x.reshape(pairs);
    rotated = stack({-xp.select(-1, 1), xp.select(-1, 0)}, -1).reshape(x.sizes());
  } else {
    rotated = cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  }
  return x * c + rotated * s;
}

}  // namespace stride::nn::functional
