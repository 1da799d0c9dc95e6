// What rope's kernels (backends/kernels.h) read besides their tensors: the
// op computes or converts the tables on the host, its kernels rotate by them.
#pragma once

#include <vector>

namespace stride::kernels {

// cos and sin of each angle, (T, D/2) each, in float64.
struct AngleTables {
  std::vector<double> cosines, sines;
};

}  // namespace stride::kernels
