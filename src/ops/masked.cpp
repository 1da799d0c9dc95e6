// torch.masked on strided tensors: each op replaces the masked-out elements
// of its input by the identity of its reduction (where), then runs stride's
// op on the result. These are listed composites (masked_NAME in
// core/op_list.h) with no kernel or node of their own: their gradients come
// from where and the reduction, so a masked-out element gets a zero
// gradient, as in PyTorch.
#include "stride/masked.h"

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/linalg.h"
#include "stride/ops.h"

namespace stride::masked {

using detail::Op;

namespace {

// What a masked-out element reads as: the value that leaves the reduction
// unchanged (Lowest: -inf or the integer minimum, for max-like ops).
enum class Identity { Zero, One, Lowest, Highest, NaN };

int64_t integer_limit(ScalarType dtype, bool lowest) {
  switch (dtype) {
    case kUInt8:
      return lowest ? 0 : std::numeric_limits<uint8_t>::max();
    case kInt32:
      return lowest ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
    default:
      return lowest ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
}

Scalar extreme_value(const char* op, ScalarType dtype, bool lowest) {
  STRIDE_CHECK(dtype != kBool && !is_complex(dtype), DTypeError, "[", op,
               "] a mask needs an ordered input dtype to fill the masked-out elements with; got ",
               to_string(dtype), ". Hint: convert the input to a floating dtype first.");
  if (is_floating_point(dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    return lowest ? -inf : inf;
  }
  return integer_limit(dtype, lowest);
}

Scalar identity_value(const char* op, Identity identity, ScalarType dtype) {
  switch (identity) {
    case Identity::Zero:
      return int64_t(0);
    case Identity::One:
      return int64_t(1);
    case Identity::NaN:
      return std::numeric_limits<double>::quiet_NaN();
    case Identity::Lowest:
    case Identity::Highest:
      break;
  }
  return extreme_value(op, dtype, identity == Identity::Lowest);
}

// The mask broadcast to input's shape, as bool (a non-bool mask reads as
// mask != 0, as PyTorch converts it).
Tensor input_mask(const char* op, const Tensor& input, const Tensor& mask, const char* name) {
  STRIDE_CHECK(mask.dim() <= input.dim(), IndexError, "[", op, "] ", name, " of shape ",
               mask.sizes(), " has more dims than the input of shape ", input.sizes(),
               ". Hint: the mask must broadcast to the input.");
  const int64_t offset = input.dim() - mask.dim();
  for (int64_t i = 0; i < mask.dim(); ++i) {
    const int64_t size = mask.sizes()[size_t(i)];
    STRIDE_CHECK(size == 1 || size == input.sizes()[size_t(i + offset)], ShapeError, "[", op, "] ",
                 name, " of shape ", mask.sizes(), " does not broadcast to the input of shape ",
                 input.sizes(),
                 ". Hint: give a mask of the input's shape, or one with size-1 dims.");
  }
  return broadcast_to(mask.to(kBool), input.sizes());
}

// input with its masked-out elements replaced by the identity.
Tensor fill_masked_out(const char* op,
                       const Tensor& input,
                       const Mask& mask,
                       Identity identity,
                       const char* name = "mask") {
  if (!mask) return input;
  const Tensor in = input_mask(op, input, *mask, name);
  const Tensor fill = scalar_tensor(identity_value(op, identity, input.dtype()), input.options());
  return where(in, input, fill);
}

// dim sorted and wrapped, every dim when empty; an error for a dim given twice.
DimVector canonical_dims(const char* op, IntArrayRef dim, int64_t ndim) {
  DimVector dims;
  if (dim.empty()) {
    for (int64_t d = 0; d < ndim; ++d) dims.push_back(d);
    return dims;
  }
  for (const int64_t d : dim) {
    const int64_t wrapped = wrap_dim(d, ndim, op);
    STRIDE_CHECK(std::find(dims.begin(), dims.end(), wrapped) == dims.end(), ShapeError, "[", op,
                 "] dim ", d, " appears more than once in dim. Hint: list each dim once.");
    dims.push_back(wrapped);
  }
  std::sort(dims.begin(), dims.end());
  return dims;
}

// The product over dims: the dims moved last and flattened into one, so that
// one prod reduces them all (stride's prod takes one dim or every one; a
// prod per dim would round once per dim, and its float32 gradients drift
// from PyTorch's by more than PyTorch's tolerance).
Tensor product_over(const Tensor& x, IntArrayRef dims, bool keepdim) {
  if (x.dim() == 0) return x;  // the product of one element
  DimVector order, flat_shape, kept_shape;
  int64_t reduced_size = 1;
  for (int64_t d = 0; d < x.dim(); ++d) {
    const bool reduced = std::find(dims.begin(), dims.end(), d) != dims.end();
    if (reduced) {
      reduced_size *= x.size(d);
    } else {
      order.push_back(d);
      flat_shape.push_back(x.size(d));
    }
    kept_shape.push_back(reduced ? 1 : x.size(d));
  }
  for (const int64_t d : dims) order.push_back(d);
  flat_shape.push_back(reduced_size);
  const Tensor result = stride::prod(x.permute(order).reshape(flat_shape), -1);
  return keepdim ? result.reshape(kept_shape) : result;
}

// sum's and prod's result dtype: dtype, else the input's, widened to int64
// for bool and the integers (as torch.sum).
ScalarType accumulate_dtype(const Tensor& input, std::optional<ScalarType> dtype) {
  if (dtype) return *dtype;
  return is_integral(input.dtype(), /*include_bool=*/true) ? kInt64 : input.dtype();
}

// The number of masked-in elements of each reduced block, int64.
Tensor masked_in_count(
    const char* op, const Tensor& input, IntArrayRef dims, bool keepdim, const Mask& mask) {
  const Tensor in = mask ? input_mask(op, input, *mask, "mask")
                         : ones(input.sizes(), TensorOptions(kBool).device(input.device()));
  return stride::sum(in, dims, keepdim, kInt64);
}

Tensor std_or_var(const char* op,
                  const Tensor& input,
                  IntArrayRef dim,
                  double correction,
                  bool keepdim,
                  std::optional<ScalarType> dtype,
                  const Mask& mask) {
  const ScalarType out_dtype = dtype.value_or(
      is_floating_point(input.dtype()) || is_complex(input.dtype()) ? input.dtype() : kFloat32);
  const ScalarType compute_dtype =
      is_floating_point(out_dtype) || is_complex(out_dtype) ? out_dtype : kFloat32;
  const DimVector dims = canonical_dims(op, dim, input.dim());
  Tensor count = masked_in_count(op, input, dims, /*keepdim=*/true, mask);
  const Tensor sample_mean = div(masked::sum(input, dims, true, out_dtype, mask), count);
  const Tensor x = sub(input, sample_mean);
  const Tensor total = masked::sum(mul(x, x.conj()), dims, keepdim, compute_dtype, mask);
  if (!keepdim) count = count.reshape(total.sizes());
  if (correction != 0) {
    count = count.to(to_real_dtype(compute_dtype));
    count = sub(count, scalar_tensor(correction, count.options()));
    count = maximum(count, zeros({}, count.options()));
  }
  return div(total, count).to(out_dtype);
}

}  // namespace

Tensor sum(const Tensor& input,
           IntArrayRef dim,
           bool keepdim,
           std::optional<ScalarType> dtype,
           const Mask& mask) {
  detail::check_dtype_rule(Op::masked_sum, input);
  const DimVector dims = canonical_dims("masked.sum", dim, input.dim());
  const Tensor x = fill_masked_out("masked.sum", input, mask, Identity::Zero);
  return stride::sum(x, dims, keepdim, accumulate_dtype(input, dtype));
}

Tensor prod(const Tensor& input,
            IntArrayRef dim,
            bool keepdim,
            std::optional<ScalarType> dtype,
            const Mask& mask) {
  detail::check_dtype_rule(Op::masked_prod, input);
  const DimVector dims = canonical_dims("masked.prod", dim, input.dim());
  const Tensor x =
      fill_masked_out("masked.prod", input, mask, Identity::One).to(accumulate_dtype(input, dtype));
  return product_over(x, dims, keepdim);
}

Tensor amax(const Tensor& input,
            IntArrayRef dim,
            bool keepdim,
            std::optional<ScalarType> dtype,
            const Mask& mask) {
  detail::check_dtype_rule(Op::masked_amax, input);
  const Tensor x = fill_masked_out("masked.amax", input, mask, Identity::Lowest);
  const DimVector dims = canonical_dims("masked.amax", dim, input.dim());
  return stride::amax(x, dims, keepdim).to(dtype.value_or(input.dtype()));
}

Tensor amin(const Tensor& input,
            IntArrayRef dim,
            bool keepdim,
            std::optional<ScalarType> dtype,
            const Mask& mask) {
  detail::check_dtype_rule(Op::masked_amin, input);
  const Tensor x = fill_masked_out("masked.amin", input, mask, Identity::Highest);
  const DimVector dims = canonical_dims("masked.amin", dim, input.dim());
  return stride::amin(x, dims, keepdim).to(dtype.value_or(input.dtype()));
}

Tensor argmax(const Tensor& input,
              std::optional<int64_t> dim,
              bool keepdim,
              std::optional<ScalarType> dtype,
              const Mask& mask) {
  detail::check_dtype_rule(Op::masked_argmax, input);
  const Tensor x = fill_masked_out("masked.argmax", input, mask, Identity::Lowest);
  return stride::argmax(x, dim, keepdim).to(dtype.value_or(input.dtype()));
}

Tensor argmin(const Tensor& input,
              std::optional<int64_t> dim,
              bool keepdim,
              std::optional<ScalarType> dtype,
              const Mask& mask) {
  detail::check_dtype_rule(Op::masked_argmin, input);
  const Tensor x = fill_masked_out("masked.argmin", input, mask, Identity::Highest);
  return stride::argmin(x, dim, keepdim).to(dtype.value_or(input.dtype()));
}

// The masked sum over the masked-in count: a fully masked-out block is 0/0,
// NaN, as PyTorch gives.
Tensor mean(const Tensor& input,
            IntArrayRef dim,
            bool keepdim,
            std::optional<ScalarType> dtype,
            const Mask& mask) {
  detail::check_dtype_rule(Op::masked_mean, input);
  const ScalarType out_dtype = dtype.value_or(input.dtype());
  STRIDE_CHECK(is_floating_point(out_dtype) || is_complex(out_dtype), ValueError,
               "[masked.mean] the result's dtype must be floating or complex; got ",
               to_string(out_dtype), ". Hint: pass dtype=float32 (or convert the input).");
  const DimVector dims = canonical_dims("masked.mean", dim, input.dim());
  const Tensor total = masked::sum(input, dims, keepdim, out_dtype, mask);
  return div(total, masked_in_count("masked.mean", input, dims, keepdim, mask));
}

// nanmedian with the masked-out elements read as NaN (PyTorch's formulation):
// one pass of stride's selection per slice, where sorting the masked-in
// elements of each slice apart would cost a gather per slice. Its cost: a
// NaN in a masked-in element is skipped as if masked out.
Tensor median(const Tensor& input,
              int64_t dim,
              bool keepdim,
              std::optional<ScalarType> dtype,
              const Mask& mask) {
  detail::check_dtype_rule(Op::masked_median, input);
  const int64_t d = wrap_dim(dim, input.dim(), "masked.median");
  const bool is_float = is_floating_point(input.dtype());
  const Tensor x = is_float ? input : input.to(kFloat32);
  const Tensor filled = fill_masked_out("masked.median", x, mask, Identity::NaN);
  const Tensor out = nanmedian(filled, d, keepdim).first;
  if (is_float) return out;
  STRIDE_CHECK(!any(isnan(out)).item<bool>(), ValueError,
               "[masked.median] an integer input must have no fully masked-out slice along dim "
               "(its median is NaN). Hint: convert the input to a floating dtype.");
  return out.to(dtype.value_or(input.dtype()));
}

Tensor logsumexp(const Tensor& input,
                 IntArrayRef dim,
                 bool keepdim,
                 std::optional<ScalarType> dtype,
                 const Mask& mask) {
  detail::check_dtype_rule(Op::masked_logsumexp, input);
  const DimVector dims = canonical_dims("masked.logsumexp", dim, input.dim());
  const Tensor x = fill_masked_out("masked.logsumexp", input, mask, Identity::Lowest);
  return stride::logsumexp(x, dims, keepdim).to(dtype.value_or(input.dtype()));
}

// Masked-out elements read as 0, or as +inf for ord -inf (the minimum of |x|).
Tensor norm(const Tensor& input,
            double ord,
            IntArrayRef dim,
            bool keepdim,
            std::optional<ScalarType> dtype,
            const Mask& mask) {
  detail::check_dtype_rule(Op::masked_norm, input);
  const Identity identity =
      ord == -std::numeric_limits<double>::infinity() ? Identity::Highest : Identity::Zero;
  const Tensor x = fill_masked_out("masked.norm", input, mask, identity);
  const DimVector dims = canonical_dims("masked.norm", dim, input.dim());
  return linalg::vector_norm(x, ord, dims, keepdim, dtype.value_or(input.dtype()));
}

Tensor var(const Tensor& input,
           IntArrayRef dim,
           double correction,
           bool keepdim,
           std::optional<ScalarType> dtype,
           const Mask& mask) {
  detail::check_dtype_rule(Op::masked_var, input);
  return std_or_var("masked.var", input, dim, correction, keepdim, dtype, mask);
}

Tensor std_dev(const Tensor& input,
               IntArrayRef dim,
               double correction,
               bool keepdim,
               std::optional<ScalarType> dtype,
               const Mask& mask) {
  detail::check_dtype_rule(Op::masked_std_dev, input);
  return sqrt(std_or_var("masked.std", input, dim, correction, keepdim, dtype, mask));
}

Tensor cumsum(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype, const Mask& mask) {
  detail::check_dtype_rule(Op::masked_cumsum, input);
  const int64_t d = wrap_dim(dim, input.dim(), "masked.cumsum");
  const Tensor x = fill_masked_out("masked.cumsum", input, mask, Identity::Zero);
  return stride::cumsum(x, d, dtype.value_or(input.dtype()));
}

Tensor cumprod(const Tensor& input,
               int64_t dim,
               std::optional<ScalarType> dtype,
               const Mask& mask) {
  detail::check_dtype_rule(Op::masked_cumprod, input);
  const int64_t d = wrap_dim(dim, input.dim(), "masked.cumprod");
  const Tensor x = fill_masked_out("masked.cumprod", input, mask, Identity::One);
  return stride::cumprod(x, d, dtype.value_or(input.dtype()));
}

// Masked-out elements read as -inf: exp gives them 0, and a fully masked-out
// slice 0/0 = NaN.
Tensor softmax(const Tensor& input,
               int64_t dim,
               std::optional<ScalarType> dtype,
               const Mask& mask) {
  detail::check_dtype_rule(Op::masked_softmax, input);
  const int64_t d = wrap_dim(dim, input.dim(), "masked.softmax");
  const Tensor x = fill_masked_out("masked.softmax", input, mask, Identity::Lowest);
  return stride::softmax(x.to(dtype.value_or(input.dtype())), d);
}

Tensor log_softmax(const Tensor& input,
                   int64_t dim,
                   std::optional<ScalarType> dtype,
                   const Mask& mask) {
  detail::check_dtype_rule(Op::masked_log_softmax, input);
  const int64_t d = wrap_dim(dim, input.dim(), "masked.log_softmax");
  const Tensor x = fill_masked_out("masked.log_softmax", input, mask, Identity::Lowest);
  return stride::log_softmax(x.to(dtype.value_or(input.dtype())), d);
}

// softmax of -x, with masked-out elements read as +inf (so as -inf in -x).
Tensor softmin(const Tensor& input,
               int64_t dim,
               std::optional<ScalarType> dtype,
               const Mask& mask) {
  detail::check_dtype_rule(Op::masked_softmin, input);
  const int64_t d = wrap_dim(dim, input.dim(), "masked.softmin");
  const Tensor x = fill_masked_out("masked.softmin", input, mask, Identity::Highest);
  return stride::softmax(neg(x.to(dtype.value_or(input.dtype()))), d);
}

Tensor normalize(const Tensor& input,
                 double ord,
                 int64_t dim,
                 double eps,
                 std::optional<ScalarType> dtype,
                 const Mask& mask) {
  detail::check_dtype_rule(Op::masked_normalize, input);
  const Tensor x = fill_masked_out("masked.normalize", input, mask, Identity::Zero);
  const Tensor norms = masked::norm(input, ord, {dim}, /*keepdim=*/true, dtype, mask);
  return div(x, maximum(norms, scalar_tensor(eps, norms.options())));
}

Tensor logaddexp(const Tensor& input,
                 const Tensor& other,
                 std::optional<ScalarType> dtype,
                 const Mask& input_mask,
                 const Mask& other_mask) {
  detail::check_dtype_rule(Op::masked_logaddexp, input);
  const char* op = "masked.logaddexp";
  const Tensor a = fill_masked_out(op, input, input_mask, Identity::Lowest, "input_mask");
  const Tensor b = fill_masked_out(op, other, other_mask, Identity::Lowest, "other_mask");
  return stride::logaddexp(a, b).to(dtype.value_or(input.dtype()));
}

}  // namespace stride::masked
