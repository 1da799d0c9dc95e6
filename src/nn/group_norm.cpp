// group_norm (listed as Composite in src/core/op_list.h): the normalisation
// written with reductions, so its gradients are theirs.
#include "core/check.h"
#include "ops/apply.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

// weight or bias (C) as (1, C, 1, ...) against x (N, C, *).
Tensor per_channel(const Tensor& t, const Tensor& x) {
  DimVector shape(size_t(x.dim()), 1);
  shape[1] = x.size(1);
  return t.view(shape);
}

void check_affine(const Tensor& t, const Tensor& x, const char* name) {
  if (!t.defined()) return;
  STRIDE_CHECK(t.dim() == 1 && t.size(0) == x.size(1), ShapeError, "[group_norm] expected ", name,
               " (", x.size(1), "), one value per channel; got ", shape_str(t.sizes()), ".");
  STRIDE_CHECK(t.dtype() == x.dtype(), DTypeError, "[group_norm] ", name, " has dtype ",
               to_string(t.dtype()), " but the input has ", to_string(x.dtype()),
               ". Hint: convert one of them so that they match.");
}

}  // namespace

Tensor group_norm(
    const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  ::stride::detail::check_dtype_rule(::stride::detail::Op::group_norm, "group_norm", &x);
  STRIDE_CHECK(x.dim() >= 2, ShapeError, "[group_norm] expected an input (N, C, *); got ",
               shape_str(x.sizes()), ".");
  STRIDE_CHECK(num_groups > 0 && x.size(1) % num_groups == 0, ValueError,
               "[group_norm] the input's ", x.size(1),
               " channels must divide into num_groups=", num_groups, ".");
  check_affine(weight, x, "weight");
  check_affine(bias, x, "bias");
  // 16-bit floats compute the statistics in float32, as PyTorch's.
  if (x.dtype() == kBFloat16 || x.dtype() == kFloat16) {
    const auto up = [](const Tensor& t) { return t.defined() ? t.to(kFloat32) : t; };
    return group_norm(up(x), num_groups, up(weight), up(bias), eps).to(x.dtype());
  }
  int64_t per_group = x.size(1) / num_groups;
  for (int64_t d = 2; d < x.dim(); ++d) per_group *= x.size(d);
  const Tensor groups = x.reshape({x.size(0), num_groups, per_group});
  const Tensor centred = groups - groups.mean({2}, true);
  const Tensor var = (centred * centred).mean({2}, true);
  Tensor y = (centred * rsqrt(var + eps)).view(x.sizes());
  if (weight.defined()) y = y * per_channel(weight, x);
  if (bias.defined()) y = y + per_channel(bias, x);
  return y;
}

}  // namespace stride::nn::functional
