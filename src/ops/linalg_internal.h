// Helpers shared by the linear algebra ops (linalg_factorizations.cpp,
// linalg_solvers.cpp, linalg_norms.cpp).
#pragma once

#include <utility>

#include "stride/linalg.h"
#include "stride/ops.h"

namespace stride::linalg::detail {

// The last two dims swapped (PyTorch's mT).
Tensor mT(const Tensor& x);
// (..., n) -> (..., n, n) with v on the diagonal.
Tensor diag_matrix(const Tensor& v);
// The dims before the last two.
DimVector batch_shape(const Tensor& a);
int64_t batch_count(const Tensor& a);
// a is a batch of matrices (dim >= 2) of float32 or float64; else a
// ShapeError or DTypeError naming op and arg.
void check_matrix(const Tensor& a, const char* op, const char* arg);
// ...and each matrix square.
void check_square(const Tensor& a, const char* op, const char* arg);
// Whether a kernel reported a failing matrix in info (never on meta).
bool any_failed(const Tensor& info);
// a and b expanded to their broadcast batch dims (a differentiable view).
std::pair<Tensor, Tensor> broadcast_batches(const Tensor& a, const Tensor& b, const char* op);

}  // namespace stride::linalg::detail
