// stride::nn::init — in-place parameter initialisation (torch.nn.init).
//
// Every function fills its tensor in place under NoGradGuard (so it works on
// parameters that require grad), for any memory layout, and returns it. The
// random ones draw from `gen`, or from the default generator when null.
//
// Fans follow PyTorch's _calculate_fan_in_and_fan_out for a weight of shape
// (out, in, *kernel): fan_in = in * prod(kernel), fan_out = out *
// prod(kernel); fewer than 2 dims is a ValueError.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "stride/generator.h"
#include "stride/scalar.h"
#include "stride/tensor.h"

namespace stride::nn::init {

enum class FanMode { FanIn, FanOut };

enum class Nonlinearity { Linear, Conv1d, Conv2d, Conv3d, Sigmoid, Tanh, ReLU, LeakyReLU, SELU };

// (fan_in, fan_out) of a weight tensor, as described above.
std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

// torch.nn.init.calculate_gain: 1 for linear, conv and sigmoid; 5/3 for
// tanh; sqrt(2) for relu; sqrt(2 / (1 + slope^2)) for leaky_relu (slope =
// `param`, default 0.01); 3/4 for selu.
double calculate_gain(Nonlinearity nonlinearity, std::optional<double> param = std::nullopt);

// U(a, b).
Tensor uniform_(Tensor tensor, double a = 0.0, double b = 1.0, Generator* gen = nullptr);
// N(mean, std^2).
Tensor normal_(Tensor tensor, double mean = 0.0, double std = 1.0, Generator* gen = nullptr);
Tensor constant_(Tensor tensor, const Scalar& value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);

// U(-b, b) with b = gain * sqrt(6 / (fan_in + fan_out)) (Glorot).
Tensor xavier_uniform_(Tensor tensor, double gain = 1.0, Generator* gen = nullptr);
// N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).
Tensor xavier_normal_(Tensor tensor, double gain = 1.0, Generator* gen = nullptr);

// U(-b, b) with b = sqrt(3) * gain / sqrt(fan), gain = calculate_gain(
// nonlinearity, a) and fan chosen by `mode` (He). `a` is the negative slope
// for LeakyReLU. nn::Linear uses a = sqrt(5), which gives b = 1/sqrt(fan_in).
// A tensor with no elements is left as it is (PyTorch warns and returns).
Tensor kaiming_uniform_(Tensor tensor,
                        double a = 0.0,
                        FanMode mode = FanMode::FanIn,
                        Nonlinearity nonlinearity = Nonlinearity::LeakyReLU,
                        Generator* gen = nullptr);
// N(0, std^2) with std = gain / sqrt(fan).
Tensor kaiming_normal_(Tensor tensor,
                       double a = 0.0,
                       FanMode mode = FanMode::FanIn,
                       Nonlinearity nonlinearity = Nonlinearity::LeakyReLU,
                       Generator* gen = nullptr);

}  // namespace stride::nn::init
