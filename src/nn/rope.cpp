// rotary_embedding: each pair of features (a, b) at position p is rotated by
// the angle +p * theta_i, i.e. a + i b is multiplied by e^{i p theta_i} (Meta's
// complex multiply, and what Hugging Face's rotate_half computes):
//   a' = a cos - b sin,   b' = a sin + b cos.
// The kernel (src/backends/cpu/rope.cpp) reads x's rows where they lie when x
// has a row layout (Note [Row layout]) and writes y in x's memory order; its
// backward is the rotation by the opposite angle (the transpose of a
// rotation), which is the same kernel, so it is differentiable to any order.
// Angles and cos/sin are computed in float64, so the result does not lose
// precision at large positions.
#include <algorithm>
#include <cmath>
#include <memory>
#include <numbers>
#include <utility>
#include <vector>

#include "backends/kernels.h"
#include "nn/rope_tables.h"
#include "nn/row_layout.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"
#include "stride/parallel.h"

namespace stride::nn::functional {

namespace {

// Angles per chunk of a table (each a sincos, some 10 ns).
constexpr int64_t kTableGrain = 512;

void check_args(const Tensor& x, int64_t position_offset, double base, const char* op) {
  ::stride::detail::check_dtype_rule(::stride::detail::Op::rotary_embedding, op, &x);
  STRIDE_CHECK(
      x.dim() >= 2 && x.size(-1) % 2 == 0, ShapeError, "[", op,
      "] expected x (..., T, D) with an even D; got ", shape_str(x.sizes()),
      ". Hint: rotary embeddings rotate pairs of features, per head: (B, H, T, head_dim).");
  STRIDE_CHECK(position_offset >= 0, ValueError, "[", op, "] expected position_offset >= 0; got ",
               position_offset, ".");
  STRIDE_CHECK(base > 0, ValueError, "[", op, "] expected base > 0; got ", base, ".");
}

using detail::SharedTables;
using kernels::AngleTables;

// The unscaled frequencies theta_i = base^(-2i/D).
std::vector<double> plain_frequencies(int64_t D, double base) {
  std::vector<double> thetas(static_cast<size_t>(D / 2));
  for (int64_t i = 0; i < D / 2; ++i) {
    thetas[size_t(i)] = 1.0 / std::pow(base, double(2 * i) / double(D));
  }
  return thetas;
}

// Llama 3.1's band-wise rescaling (RopeScaling::Type::Llama3), in the order
// transformers' _compute_llama3_parameters takes its cases.
double llama3_frequency(double theta, const RopeScaling& s) {
  const double context = double(s.original_context);
  const double wavelength = 2 * std::numbers::pi / theta;
  const double low_freq_wavelength = context / s.low_freq_factor;
  const double high_freq_wavelength = context / s.high_freq_factor;
  if (wavelength < high_freq_wavelength) return theta;
  if (wavelength > low_freq_wavelength) return theta / s.factor;
  const double smooth =
      (context / wavelength - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
  return (1 - smooth) * theta / s.factor + smooth * theta;
}

void check_scaling(const RopeScaling& s) {
  if (s.type == RopeScaling::Type::Default) return;
  STRIDE_CHECK(s.factor > 0, ValueError, "[rope_frequencies] expected a scaling factor > 0; got ",
               s.factor, ".");
  if (s.type != RopeScaling::Type::Llama3) return;
  STRIDE_CHECK(s.low_freq_factor > 0 && s.high_freq_factor > s.low_freq_factor, ValueError,
               "[rope_frequencies] llama3 scaling needs 0 < low_freq_factor < high_freq_factor; "
               "got ",
               s.low_freq_factor, " and ", s.high_freq_factor, ".");
  STRIDE_CHECK(s.original_context > 0, ValueError,
               "[rope_frequencies] llama3 scaling needs original_context > 0; got ",
               s.original_context, ".");
}

// The angles (offset + t) * theta_i. A sincos costs about as much as
// rotating a few dozen elements, so long sequences split the table among
// threads (each entry is computed alike wherever it falls).
AngleTables angle_tables(int64_t T, const std::vector<double>& thetas, int64_t offset) {
  const int64_t half = int64_t(thetas.size());
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

// Rotates by +angle (sign = 1) or -angle (sign = -1).
Tensor rope(const Tensor& x, const SharedTables& tables, RopeConvention conv, double sign) {
  auto forward = [&] {
    Tensor y = detail::empty_preserving_layout(x, x.size(-1));
    kernels::rotary_embedding(x.device(), detail::with_row_layout(x), *tables, sign,
                              conv == RopeConvention::Interleaved, y);
    return y;
  };
  auto backward = [&](const Tensor&) {
    return [tables, conv, sign](const autograd::Grads& gs) {
      return autograd::Grads{rope(gs[0], tables, conv, -sign)};
    };
  };
  return ::stride::detail::apply(::stride::detail::Op::rotary_embedding, {&x}, forward, backward);
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
    auto tables = std::make_shared<const AngleTables>(
        angle_tables(xf.size(-2), plain_frequencies(xf.size(-1), base), position_offset));
    return rope(xf, tables, convention, 1.0);
  });
}

namespace detail {

void check_tables(const char* op, const Tensor& x, const Tensor& cos, const Tensor& sin) {
  const int64_t T = x.size(-2), half = x.size(-1) / 2;
  for (const Tensor* table : {&cos, &sin}) {
    STRIDE_CHECK(table->defined() && table->is_floating_point() && table->dim() == 2 &&
                     table->size(0) == T && table->size(1) == half,
                 ShapeError, "[", op, "] expected floating cos and sin tables (T, D/2) = (", T,
                 ", ", half, ") for x ", shape_str(x.sizes()), "; got ",
                 table->defined() ? shape_str(table->sizes()) : std::string("undefined"), ".");
  }
  ::stride::detail::common_device(op, {&x, &cos, &sin});
}

SharedTables float64_tables(const Tensor& cos, const Tensor& sin) {
  auto tables = std::make_shared<AngleTables>();
  if (cos.device().is_meta()) return tables;
  // Detached: the rotations take no gradient for their tables, so the copies
  // need no graph.
  const Tensor c = cos.detach().to(kFloat64).contiguous();
  const Tensor s = sin.detach().to(kFloat64).contiguous();
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
  detail::check_tables("rotary_embedding", x, cos, sin);
  const SharedTables tables = detail::float64_tables(cos, sin);
  return in_float32(x, [&](const Tensor& xf) { return rope(xf, tables, convention, 1.0); });
}

std::vector<double> rope_frequencies(int64_t D, double base, const RopeScaling& scaling) {
  STRIDE_CHECK(D >= 0 && D % 2 == 0, ShapeError, "[rope_frequencies] expected an even D >= 0; got ",
               D, ".");
  STRIDE_CHECK(base > 0, ValueError, "[rope_frequencies] expected base > 0; got ", base, ".");
  check_scaling(scaling);
  std::vector<double> thetas = plain_frequencies(D, base);
  for (double& theta : thetas) {
    switch (scaling.type) {
      case RopeScaling::Type::Default:
        break;
      case RopeScaling::Type::Linear:
        theta /= scaling.factor;
        break;
      case RopeScaling::Type::Llama3:
        theta = llama3_frequency(theta, scaling);
        break;
    }
  }
  return thetas;
}

std::pair<Tensor, Tensor> rotary_tables(
    int64_t T, int64_t D, int64_t position_offset, double base, const RopeScaling& scaling) {
  STRIDE_CHECK(T >= 0 && D >= 0 && D % 2 == 0, ShapeError,
               "[rotary_tables] expected T >= 0 and an even D >= 0; got T = ", T, ", D = ", D, ".");
  STRIDE_CHECK(position_offset >= 0, ValueError,
               "[rotary_tables] expected position_offset >= 0; got ", position_offset, ".");
  STRIDE_CHECK(base > 0, ValueError, "[rotary_tables] expected base > 0; got ", base, ".");
  const AngleTables tables = angle_tables(T, rope_frequencies(D, base, scaling), position_offset);
  return {tensor<double>(tables.cosines, {T, D / 2}), tensor<double>(tables.sines, {T, D / 2})};
}

Tensor rotary_embedding_reference(const Tensor& x,
                                  int64_t position_offset,
                                  double base,
                                  RopeConvention convention) {
  check_args(x, position_offset, base, "rotary_embedding_reference");
  const int64_t T = x.size(-2), D = x.size(-1), half = D / 2;
  const AngleTables tables = angle_tables(T, plain_frequencies(D, base), position_offset);
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
