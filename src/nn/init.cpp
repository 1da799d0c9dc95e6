#include "stride/nn/init.h"

#include <cmath>

#include "core/check.h"
#include "stride/autograd.h"

namespace stride::nn::init {

namespace {

void check_defined(const Tensor& t, const char* op) {
  STRIDE_CHECK(t.defined(), ValueError, "[nn::init::", op, "] the tensor is undefined.");
}

int64_t fan(const Tensor& t, FanMode mode) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  return mode == FanMode::FanIn ? fan_in : fan_out;
}

}  // namespace

std::pair<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  check_defined(tensor, "calculate_fan_in_and_fan_out");
  STRIDE_CHECK(tensor.dim() >= 2, ValueError,
               "[nn::init] fan in and fan out need a tensor of at least 2 dims (out, in, ...); "
               "got shape ",
               shape_str(tensor.sizes()),
               ". Hint: initialise 1-d tensors such as biases with uniform_ or normal_.");
  int64_t receptive_field = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive_field *= tensor.size(d);
  return {tensor.size(1) * receptive_field, tensor.size(0) * receptive_field};
}

double calculate_gain(Nonlinearity nonlinearity, std::optional<double> param) {
  switch (nonlinearity) {
    case Nonlinearity::Linear:
    case Nonlinearity::Conv1d:
    case Nonlinearity::Conv2d:
    case Nonlinearity::Conv3d:
    case Nonlinearity::Sigmoid:
      return 1.0;
    case Nonlinearity::Tanh:
      return 5.0 / 3.0;
    case Nonlinearity::ReLU:
      return std::sqrt(2.0);
    case Nonlinearity::LeakyReLU: {
      const double slope = param.value_or(0.01);
      return std::sqrt(2.0 / (1.0 + slope * slope));
    }
    case Nonlinearity::SELU:
      return 3.0 / 4.0;
  }
  STRIDE_ASSERT(false, "unknown Nonlinearity ", int(nonlinearity));
  return 1.0;
}

Tensor uniform_(Tensor tensor, double a, double b, Generator* gen) {
  check_defined(tensor, "uniform_");
  NoGradGuard no_grad;
  tensor.uniform_(a, b, gen);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std, Generator* gen) {
  check_defined(tensor, "normal_");
  NoGradGuard no_grad;
  tensor.normal_(mean, std, gen);
  return tensor;
}

Tensor constant_(Tensor tensor, const Scalar& value) {
  check_defined(tensor, "constant_");
  NoGradGuard no_grad;
  tensor.fill_(value);
  return tensor;
}

Tensor zeros_(Tensor tensor) {
  return constant_(std::move(tensor), 0);
}

Tensor ones_(Tensor tensor) {
  return constant_(std::move(tensor), 1);
}

Tensor xavier_uniform_(Tensor tensor, double gain, Generator* gen) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / double(fan_in + fan_out));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound, gen);
}

Tensor xavier_normal_(Tensor tensor, double gain, Generator* gen) {
  const auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  const double std = gain * std::sqrt(2.0 / double(fan_in + fan_out));
  return normal_(std::move(tensor), 0.0, std, gen);
}

Tensor kaiming_uniform_(
    Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity, Generator* gen) {
  check_defined(tensor, "kaiming_uniform_");
  if (tensor.numel() == 0) return tensor;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(double(fan(tensor, mode)));
  const double bound = std::sqrt(3.0) * std;
  return uniform_(std::move(tensor), -bound, bound, gen);
}

Tensor kaiming_normal_(
    Tensor tensor, double a, FanMode mode, Nonlinearity nonlinearity, Generator* gen) {
  check_defined(tensor, "kaiming_normal_");
  if (tensor.numel() == 0) return tensor;
  const double std = calculate_gain(nonlinearity, a) / std::sqrt(double(fan(tensor, mode)));
  return normal_(std::move(tensor), 0.0, std, gen);
}

}  // namespace stride::nn::init
