// Reductions. The kernels (src/backends/cpu/reduce.cpp) see their operands
// only through TensorIter's reduction view (output elements x blocks of
// reduced elements), so their results are bit-identical on any thread count
// (Note [Deterministic reductions] there).
//
#include <algorithm>
#include <cmath>
#include <limits>

#include "backends/kernels.h"
#include "core/tensor_iter.h"
#include "ops/apply.h"
#include "ops/complex.h"
#include "ops/elementwise_common.h"
#include "ops/reduce.h"

namespace stride {

using detail::Op;

namespace {

struct ReduceDims {
  SmallVector<bool, 8> reduced;  // per input dim
  DimVector keep_shape;          // keepdim=true shape
  DimVector out_shape;           // keepdim=false shape
  int64_t count = 1;             // elements reduced into each output
};

ReduceDims reduce_dims(const Tensor& x, IntArrayRef dims, const char* op) {
  ReduceDims r;
  const int64_t n = x.dim();
  r.reduced.assign(size_t(n), dims.empty());
  for (int64_t d : dims) {
    const int64_t w = wrap_dim(d, n, op);
    if (n == 0) continue;
    STRIDE_CHECK(!r.reduced[size_t(w)], ShapeError, "[", op, "] dim ", w, " appears twice in ",
                 shape_str(dims), ".");
    r.reduced[size_t(w)] = true;
  }
  for (int64_t d = 0; d < n; ++d) {
    const int64_t s = x.sizes()[size_t(d)];
    if (r.reduced[size_t(d)]) {
      r.keep_shape.push_back(1);
      r.count *= s;
    } else {
      r.keep_shape.push_back(s);
      r.out_shape.push_back(s);
    }
  }
  return r;
}

// `out` given by the user in the final shape, viewed in keepdim form.
Tensor keepdim_view(const Tensor& out, const ReduceDims& r, bool keepdim) {
  if (keepdim) return out;
  Tensor v = out;
  for (size_t d = 0; d < r.reduced.size(); ++d) {
    if (r.reduced[d]) v = v.unsqueeze(int64_t(d));
  }
  return v;
}

// sum of `x` (already in the compute dtype) into `out_keep` (keepdim form).
void sum_into(Tensor& out_keep, const Tensor& x) {
  TensorIter iter = TensorIterConfig("sum")
                        .add_output(out_keep)
                        .add_input(x)
                        .is_reduction(true)
                        .check_all_same_dtype(false)
                        .build();
  kernels::reduce_sum(x.device(), iter, x.dtype(), out_keep.dtype());
}

ScalarType sum_dtype(ScalarType t) {
  return is_floating_point(t) ? t : kInt64;
}

}  // namespace

namespace {

Tensor& sum_kernel(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim) {
  ReduceDims r = reduce_dims(x, dims, "sum");
  const ScalarType rt = sum_dtype(x.dtype());
  if (!out.defined()) out = empty(keepdim ? r.keep_shape : r.out_shape, x.options().dtype(rt));
  STRIDE_CHECK(out.dtype() == rt, DTypeError, "[sum] out has dtype ", to_string(out.dtype()),
               " but the result is ", to_string(rt), ".");
  STRIDE_CHECK(out.sizes() == IntArrayRef(keepdim ? r.keep_shape : r.out_shape), ShapeError,
               "[sum] out ", shape_str(out.sizes()), " does not match the result shape ",
               shape_str(keepdim ? r.keep_shape : r.out_shape), ".");
  if (detail::is_16bit(rt)) {
    Tensor tmp;
    sum_kernel(tmp, x.to(kFloat32), dims, keepdim);
    out.copy_(tmp);
    return out;
  }
  Tensor keep = keepdim_view(out, r, keepdim);
  sum_into(keep, x);
  return out;
}

// A gradient of a reduction's result, viewed in keepdim form.
Tensor keepdim_grad(const Tensor& g, const SmallVector<bool, 8>& reduced, bool keepdim) {
  if (keepdim) return g;
  Tensor v = g;
  for (size_t d = 0; d < reduced.size(); ++d) {
    if (reduced[d]) v = v.unsqueeze(int64_t(d));
  }
  return v;
}

}  // namespace

Tensor& sum_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim) {
  return detail::apply_out(Op::sum, out, {&x},
                           [&]() -> Tensor& { return sum_kernel(out, x, dims, keepdim); });
}

Tensor sum(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  const Tensor src = dtype ? x.to(*dtype) : x;
  if (src.is_complex()) return detail::complex_sum(src, dims, keepdim);
  return detail::apply(
      Op::sum, {&src},
      [&] {
        Tensor out;
        sum_kernel(out, src, dims, keepdim);
        return out;
      },
      [&](const Tensor&) {
        return [shape = src.sizes().dims(), reduced = reduce_dims(src, dims, "sum").reduced,
                keepdim](const autograd::Grads& gs) {
          return autograd::Grads{keepdim_grad(gs[0], reduced, keepdim).expand(shape)};
        };
      });
}

Tensor mean(const Tensor& x, IntArrayRef dims, bool keepdim) {
  if (!x.is_complex()) detail::check_dtype_rule(Op::mean, x);
  ReduceDims r = reduce_dims(x, dims, "mean");
  return sum(x, dims, keepdim).div(Scalar(double(r.count)));
}

Tensor var(const Tensor& x, IntArrayRef dims, double correction, bool keepdim) {
  detail::check_dtype_rule(Op::var, x);
  ReduceDims r = reduce_dims(x, dims, "var");
  Tensor centered = x - mean(x, dims, true);
  // As PyTorch: the divisor is clamped at 0 (inf, or nan for an empty dim).
  const double divisor = std::max(double(r.count) - correction, 0.0);
  return sum(centered * centered, dims, keepdim).div(Scalar(divisor));
}

namespace {

Tensor& prod_kernel(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim) {
  ReduceDims r = reduce_dims(x, dims, "prod");
  const ScalarType rt = sum_dtype(x.dtype());
  if (detail::is_16bit(rt)) {
    Tensor tmp;
    prod_kernel(tmp, x.to(kFloat32), dims, keepdim);
    out = tmp.to(rt);
    return out;
  }
  out = empty(keepdim ? r.keep_shape : r.out_shape, x.options().dtype(rt));
  Tensor keep = keepdim_view(out, r, keepdim);
  TensorIter iter = TensorIterConfig("prod")
                        .add_output(keep)
                        .add_input(x)
                        .is_reduction(true)
                        .check_all_same_dtype(false)
                        .build();
  kernels::reduce_prod(x.device(), iter, x.dtype(), rt);
  return out;
}

// d prod / dx_i along dim: the product of the other elements of its line,
// the exclusive running products from the front times those from the back,
// which is exact where the line holds zeros (no division). Written with
// cumprod and flip, so it is differentiable again.
Tensor prod_grad_along(const Tensor& g_keep, const Tensor& x, int64_t dim) {
  const int64_t n = x.size(dim);
  if (n == 0) return zeros_like(x);
  DimVector one_shape = x.sizes().dims();
  one_shape[size_t(dim)] = 1;
  const Tensor one = ones(one_shape, x.options());
  const Tensor front = cat({one, x.narrow(dim, 0, n - 1)}, dim).cumprod(dim);
  const Tensor back = cat({one, x.narrow(dim, 1, n - 1).flip({dim})}, dim).cumprod(dim).flip({dim});
  return g_keep * front * back;
}

}  // namespace

Tensor prod(const Tensor& x,
            std::optional<int64_t> dim,
            bool keepdim,
            std::optional<ScalarType> dtype) {
  // A result dtype the kernel does not write (bool, int32): the int64 product, cast.
  if (dtype && !is_floating_point(*dtype) && *dtype != kInt64) {
    return prod(x.to(*dtype), dim, keepdim).to(*dtype);
  }
  const Tensor src = dtype ? x.to(*dtype) : x;
  DimVector dims;
  if (dim) dims.push_back(*dim);
  return detail::apply(
      Op::prod, {&src},
      [&] {
        Tensor out;
        return prod_kernel(out, src, dims, keepdim);
      },
      [&](const Tensor&) {
        return [sx = autograd::SavedTensor::input(src), dims, keepdim,
                reduced = reduce_dims(src, dims, "prod").reduced](const autograd::Grads& gs) {
          const Tensor xv = sx.get();
          const Tensor g = keepdim_grad(gs[0], reduced, keepdim);
          if (xv.dim() == 0) return autograd::Grads{g.reshape({})};
          if (dims.empty()) {  // every element: one line
            return autograd::Grads{
                prod_grad_along(g.reshape({1}), xv.reshape({-1}), 0).view(xv.sizes())};
          }
          return autograd::Grads{prod_grad_along(g, xv, wrap_dim(dims[0], xv.dim(), "prod"))};
        };
      });
}

Tensor nansum(const Tensor& x, IntArrayRef dims, bool keepdim, std::optional<ScalarType> dtype) {
  detail::check_dtype_rule(Op::nansum, x);
  if (!x.is_floating_point()) return sum(x, dims, keepdim, dtype);
  return sum(masked_fill(x, x.isnan(), Scalar(0)), dims, keepdim, dtype);
}

Tensor nanmean(const Tensor& x, IntArrayRef dims, bool keepdim) {
  detail::check_dtype_rule(Op::nanmean, x);
  Tensor count;
  {
    NoGradGuard no_grad;
    count = sum(x.isnan().eq(Scalar(false)), dims, keepdim);
  }
  return nansum(x, dims, keepdim) / count;
}

Tensor std_dev(const Tensor& x, IntArrayRef dims, double correction, bool keepdim) {
  detail::check_dtype_rule(Op::std_dev, x);
  return var(x, dims, correction, keepdim).sqrt();
}

std::pair<Tensor, Tensor> var_mean(const Tensor& x,
                                   IntArrayRef dims,
                                   double correction,
                                   bool keepdim) {
  detail::check_dtype_rule(Op::var_mean, x);
  return {var(x, dims, correction, keepdim), mean(x, dims, keepdim)};
}

std::pair<Tensor, Tensor> std_mean(const Tensor& x,
                                   IntArrayRef dims,
                                   double correction,
                                   bool keepdim) {
  detail::check_dtype_rule(Op::std_mean, x);
  return {std_dev(x, dims, correction, keepdim), mean(x, dims, keepdim)};
}

Tensor count_nonzero(const Tensor& x, IntArrayRef dims) {
  detail::check_dtype_rule(Op::count_nonzero, x);
  NoGradGuard no_grad;
  return sum(x.ne(Scalar(0)), dims);
}

namespace {

// amax / amin: NaN propagates; an empty block is an error.

template <bool IsMax>
Tensor& extreme_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim, const char* op) {
  ReduceDims r = reduce_dims(x, dims, op);
  STRIDE_CHECK(r.count > 0 || numel_of(r.out_shape) == 0, ShapeError, "[", op,
               "] cannot reduce over a zero-size dim of shape ", shape_str(x.sizes()),
               ": the result has no identity.");
  if (!out.defined()) out = empty(keepdim ? r.keep_shape : r.out_shape, x.options());
  STRIDE_CHECK(out.sizes() == IntArrayRef(keepdim ? r.keep_shape : r.out_shape), ShapeError, "[",
               op, "] out ", shape_str(out.sizes()), " does not match the result shape ",
               shape_str(keepdim ? r.keep_shape : r.out_shape), ".");
  if (detail::is_16bit(x.dtype())) {
    Tensor tmp;
    extreme_out<IsMax>(tmp, x.to(kFloat32), dims, keepdim, op);
    out.copy_(tmp);
    return out;
  }
  Tensor keep = keepdim_view(out, r, keepdim);
  TensorIter iter = TensorIterConfig(op).add_output(keep).add_input(x).is_reduction(true).build();
  kernels::reduce_extreme(x.device(), iter, x.dtype(), IsMax, op);
  return out;
}
// max/min along one dim with the index of the first extreme element.
template <bool IsMax>
std::pair<Tensor, Tensor> extreme_with_index(const Tensor& x,
                                             int64_t dim,
                                             bool keepdim,
                                             const char* op) {
  const int64_t d = wrap_dim(dim, x.dim(), op);
  ReduceDims r = reduce_dims(x, IntArrayRef(d), op);
  STRIDE_CHECK(r.count > 0, ShapeError, "[", op, "] cannot reduce over zero-size dim ", d,
               " of shape ", shape_str(x.sizes()), ".");
  if (detail::is_16bit(x.dtype())) {
    auto [v, i] = extreme_with_index<IsMax>(x.to(kFloat32), dim, keepdim, op);
    return {v.to(x.dtype()), i};
  }
  Tensor values = empty(r.keep_shape, x.options());
  Tensor indices = empty(r.keep_shape, x.options().dtype(kInt64));
  TensorIter iter = TensorIterConfig(op)
                        .add_output(values)
                        .add_output(indices)
                        .add_input(x)
                        .is_reduction(true)
                        .check_all_same_dtype(false)
                        .build();
  kernels::reduce_extreme_index(x.device(), iter, x.dtype(), IsMax, op);
  if (!keepdim) {
    values = values.squeeze(d);
    indices = indices.squeeze(d);
  }
  return {values, indices};
}
Tensor arg_extreme(const Tensor& x, std::optional<int64_t> dim, bool keepdim, bool is_max) {
  const char* op = is_max ? "argmax" : "argmin";
  if (!dim) {
    STRIDE_CHECK(x.numel() > 0, ShapeError, "[", op, "] the tensor is empty.");
    Tensor flat = x.reshape({-1});
    Tensor idx = is_max ? extreme_with_index<true>(flat, 0, false, op).second
                        : extreme_with_index<false>(flat, 0, false, op).second;
    if (keepdim) return idx.view(DimVector(size_t(x.dim()), 1));
    return idx;
  }
  return is_max ? extreme_with_index<true>(x, *dim, keepdim, op).second
                : extreme_with_index<false>(x, *dim, keepdim, op).second;
}

}  // namespace

namespace {

// amax/amin with autograd: the gradient goes to the elements equal to the
// result, split evenly among ties (as PyTorch does).
template <bool IsMax>
Tensor extreme(const Tensor& x, IntArrayRef dims, bool keepdim) {
  const Op id = IsMax ? Op::amax : Op::amin;
  const char* op = detail::op_name(id);
  return detail::apply(
      id, {&x},
      [&] {
        Tensor out;
        extreme_out<IsMax>(out, x, dims, keepdim, op);
        return out;
      },
      [&](const Tensor& out) {
        return [sx = autograd::SavedTensor::input(x), sy = autograd::SavedTensor::output(out),
                reduced = reduce_dims(x, dims, op).reduced, dims = dims.dims(),
                keepdim](const autograd::Grads& gs) {
          const Tensor xv = sx.get();
          Tensor mask;
          {
            NoGradGuard no_grad;
            mask = xv.eq(keepdim_grad(sy.get(), reduced, keepdim)).to(xv.dtype());
            mask = mask / mask.sum(dims, true);
          }
          return autograd::Grads{keepdim_grad(gs[0], reduced, keepdim) * mask};
        };
      });
}

// max/min along a dim: the gradient goes to the returned index.
template <bool IsMax>
std::pair<Tensor, Tensor> extreme_dim(const Tensor& x, int64_t dim, bool keepdim) {
  const Op id = IsMax ? Op::max : Op::min;
  const char* op = detail::op_name(id);
  return detail::apply(
      id, {&x}, [&] { return extreme_with_index<IsMax>(x, dim, keepdim, op); },
      [&](const std::pair<Tensor, Tensor>& r) {
        return [shape = x.sizes().dims(), idx = r.second, d = wrap_dim(dim, x.dim(), op), keepdim,
                scalar = x.dim() == 0](const autograd::Grads& gs) {
          if (scalar) return autograd::Grads{gs[0]};
          Tensor g = keepdim ? gs[0] : gs[0].unsqueeze(d);
          Tensor i = keepdim ? idx : idx.unsqueeze(d);
          return autograd::Grads{zeros(shape, g.options()).scatter_add(d, i, g)};
        };
      });
}

}  // namespace

Tensor& amax_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim) {
  return detail::apply_out(Op::amax, out, {&x}, [&]() -> Tensor& {
    return extreme_out<true>(out, x, dims, keepdim, "amax");
  });
}
Tensor amax(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return extreme<true>(x, dims, keepdim);
}
Tensor amin(const Tensor& x, IntArrayRef dims, bool keepdim) {
  return extreme<false>(x, dims, keepdim);
}
std::pair<Tensor, Tensor> aminmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  detail::check_dtype_rule(Op::aminmax, x);
  DimVector dims;
  if (dim) dims.push_back(*dim);
  return {amin(x, dims, keepdim), amax(x, dims, keepdim)};
}
std::pair<Tensor, Tensor> max(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim<true>(x, dim, keepdim);
}
std::pair<Tensor, Tensor> min(const Tensor& x, int64_t dim, bool keepdim) {
  return extreme_dim<false>(x, dim, keepdim);
}
Tensor argmax(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return detail::apply_without_grad(Op::argmax, {&x},
                                    [&] { return arg_extreme(x, dim, keepdim, true); });
}
Tensor argmin(const Tensor& x, std::optional<int64_t> dim, bool keepdim) {
  return detail::apply_without_grad(Op::argmin, {&x},
                                    [&] { return arg_extreme(x, dim, keepdim, false); });
}

Tensor logsumexp(const Tensor& x, IntArrayRef dims, bool keepdim) {
  Tensor xf = x.is_floating_point() ? x : x.to(kFloat32);
  if (ReduceDims r = reduce_dims(xf, dims, "logsumexp"); r.count == 0) {  // log of an empty sum
    return full(keepdim ? r.keep_shape : r.out_shape, -std::numeric_limits<double>::infinity(),
                xf.options());
  }
  // The shift by the max cancels in the gradient, so it is a constant.
  Tensor m;
  {
    NoGradGuard no_grad;
    m = amax(xf, dims, true);
    // An all -inf (or +inf) block would give inf - inf = NaN; shift by 0 there.
    Tensor finite = m.abs().lt(
        scalar_tensor(std::numeric_limits<double>::infinity(), m.options().dtype(kFloat64)));
    m = where(finite, m, zeros_like(m));
  }
  Tensor out = sum(exp(xf - m), dims, true).log() + m;
  if (!keepdim) {
    ReduceDims r = reduce_dims(xf, dims, "logsumexp");
    out = out.view(r.out_shape);
  }
  return out;
}

// all and any count the zeros (the non-zeros) of each block, so an empty
// block gives all's True and any's False, as PyTorch's.
Tensor all(const Tensor& x, IntArrayRef dims, bool keepdim) {
  detail::check_dtype_rule(Op::all, x);
  NoGradGuard no_grad;
  return sum(x.eq(Scalar(0)), dims, keepdim).eq(Scalar(0));
}
Tensor any(const Tensor& x, IntArrayRef dims, bool keepdim) {
  detail::check_dtype_rule(Op::any, x);
  NoGradGuard no_grad;
  return sum(x.ne(Scalar(0)), dims, keepdim).gt(Scalar(0));
}

Tensor norm(const Tensor& x, double p, IntArrayRef dims, bool keepdim) {
  detail::check_dtype_rule(Op::norm, x);
  if (std::isinf(p)) return p > 0 ? amax(x.abs(), dims, keepdim) : amin(x.abs(), dims, keepdim);
  if (p == 0) return sum(x.ne(Scalar(0)).to(x.dtype()), dims, keepdim);
  if (p == 1) return sum(x.abs(), dims, keepdim);
  if (p == 2) return sum(x * x, dims, keepdim).sqrt();
  return sum(x.abs().pow(Scalar(p)), dims, keepdim).pow(Scalar(1.0 / p));
}

// ---- Tensor methods ----
Tensor Tensor::sum(std::optional<ScalarType> dtype) const {
  return stride::sum(*this, {}, false, dtype);
}
Tensor Tensor::sum(IntArrayRef dims, bool keepdim) const {
  return stride::sum(*this, dims, keepdim);
}
Tensor Tensor::mean() const {
  return stride::mean(*this);
}
Tensor Tensor::mean(IntArrayRef dims, bool keepdim) const {
  return stride::mean(*this, dims, keepdim);
}
Tensor Tensor::var() const {
  return stride::var(*this);
}
Tensor Tensor::var(IntArrayRef dims, double correction, bool keepdim) const {
  return stride::var(*this, dims, correction, keepdim);
}
Tensor Tensor::max() const {
  return stride::amax(*this);
}
std::pair<Tensor, Tensor> Tensor::max(int64_t dim, bool keepdim) const {
  return stride::max(*this, dim, keepdim);
}
Tensor Tensor::min() const {
  return stride::amin(*this);
}
std::pair<Tensor, Tensor> Tensor::min(int64_t dim, bool keepdim) const {
  return stride::min(*this, dim, keepdim);
}
Tensor Tensor::amax(IntArrayRef dims, bool keepdim) const {
  return stride::amax(*this, dims, keepdim);
}
Tensor Tensor::amin(IntArrayRef dims, bool keepdim) const {
  return stride::amin(*this, dims, keepdim);
}
Tensor Tensor::argmax(std::optional<int64_t> dim, bool keepdim) const {
  return stride::argmax(*this, dim, keepdim);
}
Tensor Tensor::argmin(std::optional<int64_t> dim, bool keepdim) const {
  return stride::argmin(*this, dim, keepdim);
}
Tensor Tensor::logsumexp(IntArrayRef dims, bool keepdim) const {
  return stride::logsumexp(*this, dims, keepdim);
}
Tensor Tensor::all(IntArrayRef dims, bool keepdim) const {
  return stride::all(*this, dims, keepdim);
}
Tensor Tensor::any(IntArrayRef dims, bool keepdim) const {
  return stride::any(*this, dims, keepdim);
}
Tensor Tensor::norm(double p) const {
  return stride::norm(*this, p);
}
Tensor Tensor::norm(double p, IntArrayRef dims, bool keepdim) const {
  return stride::norm(*this, p, dims, keepdim);
}

namespace detail {

Tensor sum_to(const Tensor& grad, IntArrayRef shape) {
  if (grad.sizes() == shape) return grad;
  const int64_t lead = grad.dim() - int64_t(shape.size());
  STRIDE_ASSERT(lead >= 0, "cannot sum ", shape_str(grad.sizes()), " to ", shape_str(shape));
  DimVector dims;
  for (int64_t d = 0; d < grad.dim(); ++d) {
    if (d < lead || (shape[size_t(d - lead)] == 1 && grad.size(d) != 1)) dims.push_back(d);
  }
  Tensor r = dims.empty() ? grad : grad.sum(dims, true);
  return r.view(shape);
}

}  // namespace detail

}  // namespace stride
