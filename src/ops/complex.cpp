// Complex numbers: the parts as views (view_as_real, view_as_complex are in
// views.cpp), and every complex op as real ops on the parts (ops/complex.h).
#include "ops/complex.h"

#include "core/check.h"
#include "ops/elementwise_common.h"

namespace stride {

using detail::Op;

namespace {

// The real and imaginary parts of `x` converted to the complex dtype `rt`
// (a real x has imaginary part 0; its gradient keeps the real part).
std::pair<Tensor, Tensor> parts(const Tensor& x, ScalarType rt) {
  const Tensor z = x.to(rt);
  const Tensor r = view_as_real(z);
  return {r.select(-1, 0), r.select(-1, 1)};
}

// The complex tensor re + i im of two real tensors of one dtype.
Tensor from_parts(const Tensor& re, const Tensor& im) {
  const DimVector shape = broadcast_shapes(re.sizes(), im.sizes(), "complex");
  return view_as_complex(stack({re.expand(shape), im.expand(shape)}, -1));
}

void check_real_parts(const Tensor& re, const Tensor& im, const char* op) {
  STRIDE_CHECK(re.dtype() == im.dtype(), DTypeError, "[", op,
               "] both parts must have one dtype; got ", to_string(re.dtype()), " and ",
               to_string(im.dtype()), ". Hint: convert one with .to().");
  STRIDE_CHECK(re.dtype() == kFloat32 || re.dtype() == kFloat64, DTypeError, "[", op,
               "] expects float32 or float64 parts; got ", to_string(re.dtype()), ".");
}

}  // namespace

namespace detail {

Tensor complex_add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  STRIDE_CHECK(!alpha.is_complex(), NotImplementedError,
               "[add] a complex alpha is not supported. Hint: multiply the operand by it first.");
  const ScalarType rt = result_type(a, b);
  const Tensor sum = alpha.to_double() == 1.0
                         ? view_as_real(a.to(rt)) + view_as_real(b.to(rt))
                         : view_as_real(a.to(rt)) + view_as_real(b.to(rt)) * alpha.to_double();
  return view_as_complex(sum);
}

Tensor complex_mul(const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  const auto [ar, ai] = parts(a, rt);
  const auto [br, bi] = parts(b, rt);
  return from_parts(ar * br - ai * bi, ar * bi + ai * br);
}

Tensor complex_div(const Tensor& a, const Tensor& b) {
  const ScalarType rt = result_type(a, b);
  const auto [ar, ai] = parts(a, rt);
  const auto [br, bi] = parts(b, rt);
  const Tensor d = br * br + bi * bi;
  return from_parts((ar * br + ai * bi) / d, (ai * br - ar * bi) / d);
}

Tensor complex_unary(Op op, const Tensor& z) {
  switch (op) {
    case Op::neg:
      return view_as_complex(-view_as_real(z));
    case Op::exp: {
      const Tensor m = exp(real(z)), im = imag(z);
      return from_parts(m * cos(im), m * sin(im));
    }
    case Op::reciprocal: {
      const Tensor re = real(z), im = imag(z), d = re * re + im * im;
      return from_parts(re / d, -im / d);
    }
    case Op::abs: {
      const Tensor re = real(z), im = imag(z);
      return sqrt(re * re + im * im);
    }
    default:
      throw DTypeError(
          str_cat("[", op_name(op), "] does not support complex tensors (", to_string(z.dtype()),
                  "); the complex ops are add, sub, mul, div, neg, exp, reciprocal, abs, "
                  "sum, mean, angle, conj and the torch.fft functions. Hint: compute "
                  "on view_as_real(z)."));
  }
}

Tensor complex_sum(const Tensor& z, IntArrayRef dims, bool keepdim) {
  DimVector reduced;
  if (dims.empty()) {
    for (int64_t d = 0; d < z.dim(); ++d) reduced.push_back(d);
  } else {
    for (const int64_t d : dims) reduced.push_back(wrap_dim(d, z.dim(), "sum"));
  }
  // A 0-d tensor has no dims: its real view's sum over none is itself.
  if (reduced.empty()) return z.clone();
  return view_as_complex(view_as_real(z).sum(reduced, keepdim));
}

Tensor& complex_add_(Tensor& a, const Tensor& b, const Scalar& alpha) {
  Tensor parts_of_a = view_as_real(a);
  parts_of_a.add_(view_as_real(b.to(a.dtype())), alpha);
  return a;
}

}  // namespace detail

Tensor real(const Tensor& z) {
  if (!z.is_complex()) return z;
  return view_as_real(z).select(-1, 0);
}

Tensor imag(const Tensor& z) {
  STRIDE_CHECK(z.is_complex(), DTypeError, "[imag] expects a complex tensor; got ",
               to_string(z.dtype()), ". Hint: a real tensor's imaginary part is zeros_like(x).");
  return view_as_real(z).select(-1, 1);
}

Tensor complex(const Tensor& re, const Tensor& im) {
  detail::check_dtype_rule(Op::complex, re);
  check_real_parts(re, im, "complex");
  return from_parts(re, im);
}

Tensor polar(const Tensor& abs, const Tensor& angle) {
  detail::check_dtype_rule(Op::polar, abs);
  check_real_parts(abs, angle, "polar");
  return from_parts(abs * cos(angle), abs * sin(angle));
}

Tensor conj_physical(const Tensor& z) {
  if (!z.is_complex()) return z;
  return from_parts(real(z), -imag(z));
}

Tensor conj(const Tensor& z) {
  return conj_physical(z);
}

Tensor resolve_conj(const Tensor& z) {
  return z;
}

// PyTorch's angle of a real number is pi for negatives, 0 otherwise (NaN
// stays NaN), in the default float dtype for integers.
Tensor angle(const Tensor& z) {
  if (z.is_complex()) return atan2(imag(z), real(z));
  const Tensor x = z.to(detail::float_result(z.dtype()));
  return atan2(zeros_like(x), x);
}

Tensor isreal(const Tensor& z) {
  if (!z.is_complex()) return ones(z.sizes(), z.options().dtype(kBool));
  return imag(z).eq(0);
}

Tensor Tensor::real() const {
  return stride::real(*this);
}
Tensor Tensor::imag() const {
  return stride::imag(*this);
}
Tensor Tensor::conj() const {
  return stride::conj(*this);
}
Tensor Tensor::angle() const {
  return stride::angle(*this);
}

}  // namespace stride
