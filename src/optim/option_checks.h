// The argument checks the newer optimizers share (RMSprop, Adagrad, Adamax,
// NAdam, RAdam): each names the optimizer, the param group and the
// hyperparameter, as torch.optim's "Invalid ... value" checks do, with the
// allowed range.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "core/check.h"

namespace stride::optim::detail {

// Throws ValueError unless value >= 0.
inline void check_non_negative(const std::string& optimizer,
                               size_t group,
                               const char* name,
                               double value) {
  STRIDE_CHECK(value >= 0, ValueError, "[", optimizer, "] param group ", group, ": ", name,
               " must be >= 0; got ", value, ".");
}

// Throws ValueError unless both betas are in [0, 1).
inline void check_betas(const std::string& optimizer,
                        size_t group,
                        const std::pair<double, double>& betas) {
  const auto [b1, b2] = betas;
  STRIDE_CHECK(b1 >= 0 && b1 < 1, ValueError, "[", optimizer, "] param group ", group,
               ": betas[0] must be in [0, 1); got ", b1, ".");
  STRIDE_CHECK(b2 >= 0 && b2 < 1, ValueError, "[", optimizer, "] param group ", group,
               ": betas[1] must be in [0, 1); got ", b2, ".");
}

}  // namespace stride::optim::detail
