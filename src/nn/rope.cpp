// rotary_embedding: each pair of features (a, b) at position p is rotated by
// the angle +p * theta_i, i.e. a + i b is multiplied by e^{i p theta_i} (Meta's
// complex multiply, and what Hugging Face's rotate_half computes):
//   a' = a cos - b sin,   b' = a sin + b cos.
// The kernel reads x's rows where they lie when x has a row layout
// (Note [Row layout]) and writes y in x's memory order; its backward is the
// rotation by the opposite angle (the transpose of a rotation), which is the
// same kernel, so it is differentiable to any order. Angles and cos/sin are computed in
// float64, so the result does not lose precision at large positions.
#include <cmath>
#include <memory>

#include "autograd/node.h"
#include "core/dispatch.h"
#include "nn/row_layout.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "stride/parallel.h"
#include "stride/profiler.h"

namespace stride::nn::functional {

namespace {

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

// cos and sin of each angle, (T, D/2) each; shared by a rotation and its
// backward.
struct AngleTables {
  std::vector<double> cosines, sines;
};
using SharedTables = std::shared_ptr<const AngleTables>;

// The angles (offset + t) * theta_i, theta_i = base^(-2i/D).
AngleTables angle_tables(int64_t T, int64_t D, int64_t offset, double base) {
  const int64_t half = D / 2;
  AngleTables tables;
  tables.cosines.resize(size_t(T * half));
  tables.sines.resize(size_t(T * half));
  for (int64_t i = 0; i < half; ++i) {
    const double theta = 1.0 / std::pow(base, double(2 * i) / double(D));
    for (int64_t t = 0; t < T; ++t) {
      const double angle = double(offset + t) * theta;
      tables.cosines[size_t(t * half + i)] = std::cos(angle);
      tables.sines[size_t(t * half + i)] = std::sin(angle);
    }
  }
  return tables;
}

// Rotates by +angle (sign = 1) or -angle (sign = -1). Row r of x is row
// t = r % T of matrix r / T, as T = size(-2) is the innermost leading dim.
Tensor rope(const Tensor& x, const SharedTables& tables, RopeConvention conv, double sign) {
  const int64_t T = x.size(-2), D = x.size(-1), half = D / 2;
  const int64_t rows = D == 0 ? 0 : x.numel() / D;
  Tensor y = detail::empty_preserving_layout(x, D);
  {
    NoGradGuard no_grad;
    const Tensor xr = detail::with_row_layout(x);
    // Pair i of a row: (a, b) = (x[2i], x[2i + 1]) or (x[i], x[i + D/2]).
    const bool interleaved = conv == RopeConvention::Interleaved;
    const int64_t a_step = interleaved ? 2 : 1, b_off = interleaved ? 1 : half;
    ::stride::detail::dispatch_floating(x.dtype(), "rotary_embedding", [&](auto tag) {
      using S = typename decltype(tag)::type;
      const detail::RowMatrices<const S> xm(xr);
      const detail::RowMatrices<S> ym(y);
      parallel_for(0, rows, std::max<int64_t>(1, 4096 / std::max<int64_t>(D, 1)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t r = begin; r < end; ++r) {
                       const int64_t n = r / T, t = r % T;
                       const double* cs = tables->cosines.data() + t * half;
                       const double* sn = tables->sines.data() + t * half;
                       const S* xrow = xm[n] + t * xm.ld();
                       S* yrow = ym[n] + t * ym.ld();
                       for (int64_t i = 0; i < half; ++i) {
                         const int64_t ia = i * a_step, ib = ia + b_off;
                         const double a = double(xrow[ia]), b = double(xrow[ib]);
                         const double c = cs[i], s = sign * sn[i];
                         yrow[ia] = S(a * c - b * s);
                         yrow[ib] = S(a * s + b * c);
                       }
                     }
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

Tensor rotary_embedding(const Tensor& x,
                        const Tensor& cos,
                        const Tensor& sin,
                        RopeConvention convention) {
  check_args(x, 0, 1.0, "rotary_embedding");
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  for (const Tensor* table : {&cos, &sin}) {
    STRIDE_CHECK(table->defined() && table->is_floating_point() && table->dim() == 2 &&
                     table->size(0) == T && table->size(1) == half,
                 ShapeError, "[rotary_embedding] expected floating cos and sin tables (T, D/2) = (",
                 T, ", ", half, ") for x ", shape_str(x.sizes()), "; got ",
                 table->defined() ? shape_str(table->sizes()) : std::string("undefined"), ".");
  }
  return in_float32(x, [&](const Tensor& xf) {
    profiler::RecordFunction record("rotary_embedding", {xf});
    auto tables = std::make_shared<AngleTables>();
    const Tensor c = cos.to(kFloat64).contiguous(), s = sin.to(kFloat64).contiguous();
    tables->cosines.assign(c.data_ptr<double>(), c.data_ptr<double>() + c.numel());
    tables->sines.assign(s.data_ptr<double>(), s.data_ptr<double>() + s.numel());
    return rope(xf, tables, convention, 1.0);
  });
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
