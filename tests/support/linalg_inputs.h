// Matrices the linear algebra tests draw from random inputs (any layout):
// invertible, symmetric positive-definite or symmetric, so that every
// factorization is defined and its gradient finite.
#pragma once

#include <vector>

#include "stride/linalg.h"
#include "stride/ops.h"

namespace stride::testing {

// x + n I: diagonally dominant for entries in (-1, 1), so well conditioned.
inline Tensor well_conditioned(const Tensor& x) {
  const int64_t n = x.size(-1);
  return x + eye(n, n, x.options()) * double(n);
}

// x x^T + I: symmetric positive-definite.
inline Tensor positive_definite(const Tensor& x) {
  const int64_t n = x.size(-1);
  return x.matmul(x.transpose(-2, -1)) + eye(n, n, x.options());
}

inline Tensor symmetric(const Tensor& x) {
  return x + x.transpose(-2, -1);
}

// Several outputs as one flat tensor, for tables of one-output cases.
inline Tensor flat(const std::vector<Tensor>& outputs) {
  std::vector<Tensor> parts;
  for (const Tensor& t : outputs) parts.push_back(t.reshape({-1}).to(kFloat64));
  return cat(parts);
}

}  // namespace stride::testing
