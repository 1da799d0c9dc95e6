// torch.fft: every transform is one kernel op, fft_c2c (the unscaled complex
// transform along one dim, src/backends/cpu/fft.cpp), under composites that
// resize, scale and take the real or Hermitian halves:
//   - fft, ifft, fftn: c2c along each dim;
//   - rfft(n): the c2c of the real input, its first n / 2 + 1 frequencies;
//   - irfft(n): c2c inverse along the other dims first (a real signal's
//     spectrum is then Hermitian along the last dim alone), then the full
//     spectrum X[n - k] = conj(X[k]) along the last, inverted, its real part;
//   - hfft and ihfft: irfft of conj(x) and conj of rfft, with the dual norm.
// The gradients follow from fft_c2c's (the inverse transform, unscaled) and
// from the real ops around it, in PyTorch's convention for complex inputs.
#include <cmath>

#include "backends/kernels.h"
#include "core/check.h"
#include "ops/apply.h"
#include "stride/ops.h"

namespace stride {

using autograd::Grads;
using detail::Op;

namespace {

// The scale of a transform: "backward" scales the inverse by 1/n,
// "forward" the forward transform, "ortho" both by 1/sqrt(n).
enum class Norm { Backward, Forward, Ortho };

Norm parse_norm(std::string_view norm, const char* op) {
  if (norm == "backward") return Norm::Backward;
  if (norm == "forward") return Norm::Forward;
  if (norm == "ortho") return Norm::Ortho;
  throw ValueError(detail::str_cat(
      "[", op, "] norm must be \"backward\", \"forward\" or \"ortho\"; got \"", norm, "\"."));
}

// hfft is the inverse of ihfft as fft is of ifft, but runs as irfft: its
// scale is the one irfft has under the other name.
Norm dual(Norm norm) {
  if (norm == Norm::Backward) return Norm::Forward;
  if (norm == Norm::Forward) return Norm::Backward;
  return Norm::Ortho;
}

double scale_of(Norm norm, int64_t points, bool inverse) {
  if (norm == Norm::Ortho) return 1.0 / std::sqrt(double(points));
  const bool scaled = (norm == Norm::Backward) == inverse;
  return scaled ? 1.0 / double(points) : 1.0;
}

// z * s for a real s; a complex z's parts are scaled as real numbers.
Tensor scaled(const Tensor& z, double s) {
  if (s == 1.0) return z;
  if (!z.is_complex()) return z * s;
  return view_as_complex(view_as_real(z) * s);
}

// The unscaled transform of z (complex) along dim d: the kernel op.
Tensor fft_c2c(const Tensor& z, int64_t d, bool inverse) {
  return detail::apply(
      Op::fft_c2c, {&z},
      [&] {
        const Tensor src = z.contiguous();
        int64_t outer = 1, inner = 1;
        for (int64_t i = 0; i < d; ++i) outer *= z.size(i);
        for (int64_t i = d + 1; i < z.dim(); ++i) inner *= z.size(i);
        Tensor out = empty(z.sizes(), z.options());
        Tensor out_blocks = out.view({outer, z.size(d), inner});
        kernels::fft_c2c(z.device(), src.view({outer, z.size(d), inner}), inverse, out_blocks);
        return out;
      },
      // The adjoint of the unscaled DFT is the unscaled inverse one.
      [&](const Tensor&) {
        return [d, inverse](const Grads& gs) { return Grads{fft_c2c(gs[0], d, !inverse)}; };
      });
}

// x as the complex dtype of its precision: integers and bool become
// complex64, as PyTorch's; 16-bit floats have no complex dtype here.
Tensor complex_input(const Tensor& x, const char* op) {
  STRIDE_CHECK(x.dtype() != kFloat16 && x.dtype() != kBFloat16, DTypeError, "[", op,
               "] has no kernel for dtype ", to_string(x.dtype()),
               " (supported: float32, float64, complex64, complex128 and integers). Hint: convert "
               "with .to(float32).");
  return x.to(to_complex_dtype(x.dtype()));
}

// x as a real floating tensor, for the transforms of real signals.
Tensor real_input(const Tensor& x, const char* op) {
  STRIDE_CHECK(!x.is_complex(), DTypeError, "[", op, "] expects a real input tensor; got ",
               to_string(x.dtype()), ". Hint: use fft.fft for complex inputs.");
  STRIDE_CHECK(x.dtype() != kFloat16 && x.dtype() != kBFloat16, DTypeError, "[", op,
               "] has no kernel for dtype ", to_string(x.dtype()),
               " (supported: float32, float64 and integers). Hint: convert with .to(float32).");
  return x.is_floating_point() ? x : x.to(kFloat32);
}

// x trimmed or zero-padded to n elements along d.
Tensor resized(const Tensor& x, int64_t d, int64_t n) {
  const int64_t have = x.size(d);
  if (n == have) return x;
  if (n < have) return x.narrow(d, 0, n);
  DimVector pad = x.sizes().dims();
  pad[size_t(d)] = n - have;
  return cat({x, zeros(pad, x.options())}, d);
}

// The dims a transform runs along and the signal length along each.
struct Plan {
  DimVector dims;
  DimVector lengths;
  int64_t points() const {
    int64_t p = 1;
    for (const int64_t n : lengths) p *= n;
    return p;
  }
};

void check_length(int64_t n, const char* op) {
  STRIDE_CHECK(n >= 1, ValueError, "[", op, "] invalid number of data points (", n,
               ") specified; a transform needs at least one.");
}

// PyTorch's rules for (s, dim): dim defaults to the last s.size() dims with
// s, else to every dim; s defaults to the input's sizes (-1 in s too), and
// along the halved last dim of the c2r transforms to 2 (m - 1).
Plan plan_of(const Tensor& x,
             const fft::OptionalDims& s,
             const fft::OptionalDims& dim,
             bool c2r,
             const char* op) {
  Plan p;
  if (dim) {
    for (const int64_t d : *dim) p.dims.push_back(wrap_dim(d, x.dim(), op));
  } else {
    const int64_t count = s ? int64_t(s->size()) : x.dim();
    STRIDE_CHECK(count <= x.dim(), ShapeError, "[", op, "] s has ", count,
                 " sizes but the input has only ", x.dim(), " dims.");
    for (int64_t d = x.dim() - count; d < x.dim(); ++d) p.dims.push_back(d);
  }
  for (size_t i = 0; i < p.dims.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      STRIDE_CHECK(p.dims[i] != p.dims[j], ValueError, "[", op, "] dims must be unique; dim ",
                   p.dims[i], " is given twice.");
    }
  }
  STRIDE_CHECK(!s || s->size() == p.dims.size(), ValueError, "[", op, "] s has ", s ? s->size() : 0,
               " sizes but dim names ", p.dims.size(), " dims; give one size per dim.");
  for (size_t i = 0; i < p.dims.size(); ++i) {
    const bool last = i + 1 == p.dims.size();
    int64_t n = s ? (*s)[i] : -1;
    if (n == -1) n = c2r && last ? 2 * (x.size(p.dims[i]) - 1) : x.size(p.dims[i]);
    check_length(n, op);
    p.lengths.push_back(n);
  }
  return p;
}

fft::OptionalDims one(std::optional<int64_t> n) {
  if (!n) return std::nullopt;
  return std::vector<int64_t>{*n};
}

// The complex transforms (fftn, ifftn).
Tensor c2c(const Tensor& x, const Plan& p, Norm norm, bool inverse, const char* op) {
  Tensor z = complex_input(x, op);
  for (size_t i = 0; i < p.dims.size(); ++i) {
    z = fft_c2c(resized(z, p.dims[i], p.lengths[i]), p.dims[i], inverse);
  }
  return scaled(z, scale_of(norm, p.points(), inverse));
}

// The transform of a real signal, its last dim halved (rfftn).
Tensor r2c(const Tensor& x, const Plan& p, Norm norm, const char* op) {
  STRIDE_CHECK(!p.dims.empty(), ValueError, "[", op, "] needs at least one dim to transform.");
  Tensor z = complex_input(real_input(x, op), op);
  const int64_t last = p.dims.back(), n = p.lengths.back();
  z = fft_c2c(resized(z, last, n), last, false).narrow(last, 0, n / 2 + 1);
  for (size_t i = 0; i + 1 < p.dims.size(); ++i) {
    z = fft_c2c(resized(z, p.dims[i], p.lengths[i]), p.dims[i], false);
  }
  return scaled(z, scale_of(norm, p.points(), false));
}

// The real signal of a spectrum whose last dim holds the non-negative
// frequencies (irfftn).
Tensor c2r(const Tensor& x, const Plan& p, Norm norm, const char* op) {
  STRIDE_CHECK(!p.dims.empty(), ValueError, "[", op, "] needs at least one dim to transform.");
  Tensor z = complex_input(x, op);
  for (size_t i = 0; i + 1 < p.dims.size(); ++i) {
    z = fft_c2c(resized(z, p.dims[i], p.lengths[i]), p.dims[i], true);
  }
  const int64_t last = p.dims.back(), n = p.lengths.back();
  z = resized(z, last, n / 2 + 1);
  const Tensor mirrored = conj(z.narrow(last, 1, (n - 1) / 2).flip({last}));
  const Tensor full = cat({z, mirrored}, last);
  return scaled(real(fft_c2c(full, last, true)), scale_of(norm, p.points(), true));
}

// fft2's dims as fftn's.
fft::OptionalDims dims2(const std::vector<int64_t>& dim) {
  return dim;
}

}  // namespace

namespace fft {

Tensor fft(const Tensor& x, std::optional<int64_t> n, int64_t dim, std::string_view norm) {
  const char* op = "fft.fft";
  return c2c(x, plan_of(x, one(n), std::vector<int64_t>{dim}, false, op), parse_norm(norm, op),
             false, op);
}

Tensor ifft(const Tensor& x, std::optional<int64_t> n, int64_t dim, std::string_view norm) {
  const char* op = "fft.ifft";
  return c2c(x, plan_of(x, one(n), std::vector<int64_t>{dim}, false, op), parse_norm(norm, op),
             true, op);
}

Tensor rfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, std::string_view norm) {
  const char* op = "fft.rfft";
  return r2c(x, plan_of(x, one(n), std::vector<int64_t>{dim}, false, op), parse_norm(norm, op), op);
}

Tensor irfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, std::string_view norm) {
  const char* op = "fft.irfft";
  return c2r(x, plan_of(x, one(n), std::vector<int64_t>{dim}, true, op), parse_norm(norm, op), op);
}

Tensor hfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, std::string_view norm) {
  const char* op = "fft.hfft";
  return c2r(conj(complex_input(x, op)), plan_of(x, one(n), std::vector<int64_t>{dim}, true, op),
             dual(parse_norm(norm, op)), op);
}

Tensor ihfft(const Tensor& x, std::optional<int64_t> n, int64_t dim, std::string_view norm) {
  const char* op = "fft.ihfft";
  return conj(r2c(x, plan_of(x, one(n), std::vector<int64_t>{dim}, false, op),
                  dual(parse_norm(norm, op)), op));
}

Tensor fftn(const Tensor& x,
            const OptionalDims& s,
            const OptionalDims& dim,
            std::string_view norm) {
  const char* op = "fft.fftn";
  return c2c(x, plan_of(x, s, dim, false, op), parse_norm(norm, op), false, op);
}

Tensor ifftn(const Tensor& x,
             const OptionalDims& s,
             const OptionalDims& dim,
             std::string_view norm) {
  const char* op = "fft.ifftn";
  return c2c(x, plan_of(x, s, dim, false, op), parse_norm(norm, op), true, op);
}

Tensor rfftn(const Tensor& x,
             const OptionalDims& s,
             const OptionalDims& dim,
             std::string_view norm) {
  const char* op = "fft.rfftn";
  return r2c(x, plan_of(x, s, dim, false, op), parse_norm(norm, op), op);
}

Tensor irfftn(const Tensor& x,
              const OptionalDims& s,
              const OptionalDims& dim,
              std::string_view norm) {
  const char* op = "fft.irfftn";
  return c2r(x, plan_of(x, s, dim, true, op), parse_norm(norm, op), op);
}

Tensor hfftn(const Tensor& x,
             const OptionalDims& s,
             const OptionalDims& dim,
             std::string_view norm) {
  const char* op = "fft.hfftn";
  return c2r(conj(complex_input(x, op)), plan_of(x, s, dim, true, op), dual(parse_norm(norm, op)),
             op);
}

Tensor ihfftn(const Tensor& x,
              const OptionalDims& s,
              const OptionalDims& dim,
              std::string_view norm) {
  const char* op = "fft.ihfftn";
  return conj(r2c(x, plan_of(x, s, dim, false, op), dual(parse_norm(norm, op)), op));
}

Tensor fft2(const Tensor& x,
            const OptionalDims& s,
            const std::vector<int64_t>& dim,
            std::string_view norm) {
  return fftn(x, s, dims2(dim), norm);
}
Tensor ifft2(const Tensor& x,
             const OptionalDims& s,
             const std::vector<int64_t>& dim,
             std::string_view norm) {
  return ifftn(x, s, dims2(dim), norm);
}
Tensor rfft2(const Tensor& x,
             const OptionalDims& s,
             const std::vector<int64_t>& dim,
             std::string_view norm) {
  return rfftn(x, s, dims2(dim), norm);
}
Tensor irfft2(const Tensor& x,
              const OptionalDims& s,
              const std::vector<int64_t>& dim,
              std::string_view norm) {
  return irfftn(x, s, dims2(dim), norm);
}
Tensor hfft2(const Tensor& x,
             const OptionalDims& s,
             const std::vector<int64_t>& dim,
             std::string_view norm) {
  return hfftn(x, s, dims2(dim), norm);
}
Tensor ihfft2(const Tensor& x,
              const OptionalDims& s,
              const std::vector<int64_t>& dim,
              std::string_view norm) {
  return ihfftn(x, s, dims2(dim), norm);
}

Tensor fftfreq(int64_t n, double d, TensorOptions options) {
  check_length(n, "fft.fftfreq");
  const Tensor k = cat({arange(0, (n + 1) / 2), arange(-(n / 2), 0)}, 0);
  return k.to(options.dtype()).to(options.device()) * (1.0 / (double(n) * d));
}

Tensor rfftfreq(int64_t n, double d, TensorOptions options) {
  check_length(n, "fft.rfftfreq");
  return arange(0, n / 2 + 1).to(options.dtype()).to(options.device()) * (1.0 / (double(n) * d));
}

namespace {

// x rolled by shift(size) along each of dim (every dim by default).
template <class Shift>
Tensor shifted(const Tensor& x, const OptionalDims& dim, Shift shift, const char* op) {
  DimVector dims, shifts;
  if (dim) {
    for (const int64_t d : *dim) dims.push_back(wrap_dim(d, x.dim(), op));
  } else {
    for (int64_t d = 0; d < x.dim(); ++d) dims.push_back(d);
  }
  if (dims.empty()) return x.clone();
  for (const int64_t d : dims) shifts.push_back(shift(x.size(d)));
  return roll(x, shifts, dims);
}

}  // namespace

Tensor fftshift(const Tensor& x, const OptionalDims& dim) {
  return shifted(
      x, dim, [](int64_t n) { return n / 2; }, "fft.fftshift");
}

Tensor ifftshift(const Tensor& x, const OptionalDims& dim) {
  return shifted(
      x, dim, [](int64_t n) { return (n + 1) / 2; }, "fft.ifftshift");
}

}  // namespace fft

}  // namespace stride
