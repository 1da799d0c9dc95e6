// Complex arithmetic written with real ops on the parts (src/ops/complex.cpp):
// the elementwise ops, sum and mean route complex operands here, so their
// gradients follow from the real ops' and from view_as_real and
// view_as_complex, which give PyTorch's convention (the gradient of z is
// dL/d re(z) + i dL/d im(z)), on every device, without complex kernels.
#pragma once

#include "ops/apply.h"
#include "stride/ops.h"

namespace stride::detail {

Tensor complex_add(const Tensor& a, const Tensor& b, const Scalar& alpha);
Tensor complex_mul(const Tensor& a, const Tensor& b);
Tensor complex_div(const Tensor& a, const Tensor& b);
// neg, exp, reciprocal and abs of a complex tensor; any other unary op is a
// DTypeError naming it.
Tensor complex_unary(Op op, const Tensor& z);
Tensor complex_sum(const Tensor& z, IntArrayRef dims, bool keepdim);
// a += alpha * b in place, for a complex `a` (gradient accumulation).
Tensor& complex_add_(Tensor& a, const Tensor& b, const Scalar& alpha);

}  // namespace stride::detail
