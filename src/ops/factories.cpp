// Factories: tensors made from nothing, from values, or at random.
#include <cmath>

#include <type_traits>

#include "backends/kernels.h"
#include "core/check.h"
#include "core/dispatch.h"
#include "core/tensor_impl_utils.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"
#include "stride/backend.h"
#include "stride/generator.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

namespace {

// The device's default generator (backend.h) when none is given.
Generator& gen_or_default(Generator* gen, Device device) {
  return gen ? *gen : default_generator(device);
}

}  // namespace

Tensor full(IntArrayRef shape, const Scalar& value, TensorOptions options) {
  Tensor t = empty(shape, options);
  t.fill_(value);
  return t;
}

Tensor zeros(IntArrayRef shape, TensorOptions options) {
  return full(shape, 0, options);
}
Tensor ones(IntArrayRef shape, TensorOptions options) {
  return full(shape, 1, options);
}
Tensor zeros_like(const Tensor& t) {
  return zeros(t.sizes(), t.options());
}
Tensor ones_like(const Tensor& t) {
  return ones(t.sizes(), t.options());
}
Tensor full_like(const Tensor& t, const Scalar& value) {
  return full(t.sizes(), value, t.options());
}
Tensor rand_like(const Tensor& t, Generator* gen) {
  return rand(t.sizes(), t.options(), gen);
}
Tensor randn_like(const Tensor& t, Generator* gen) {
  return randn(t.sizes(), t.options(), gen);
}

Tensor scalar_tensor(const Scalar& value, TensorOptions options) {
  return full({}, value, options);
}

Tensor arange(const Scalar& end, std::optional<ScalarType> dtype) {
  return arange(0, end, 1, dtype);
}

Tensor arange(const Scalar& start,
              const Scalar& end,
              const Scalar& step,
              std::optional<ScalarType> dtype) {
  const bool all_integral =
      !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  // Values are computed here, on the CPU, then moved to the default device.
  const TensorOptions options =
      TensorOptions(dtype.value_or(all_integral ? kInt64 : kFloat32)).device(Device(kCPU));
  const double s = start.to_double(), e = end.to_double(), st = step.to_double();
  STRIDE_CHECK(st != 0, ValueError, "[arange] step must be nonzero.");
  STRIDE_CHECK((st > 0 && e >= s) || (st < 0 && e <= s), ValueError, "[arange] the range [", s,
               ", ", e, ") is empty or reversed for step ", st, ".");
  const int64_t n = int64_t(std::ceil((e - s) / st));
  // 16-bit floats count in float, PyTorch's accumulate type, then round.
  if (detail::is_16bit(options.dtype())) {
    return arange(start, end, step, kFloat32).to(options.dtype());
  }
  // On meta (a memory estimate) the values are not needed, and computing
  // them would take time and host memory in proportion to n.
  if (default_device().is_meta()) return empty({n}, options.device(default_device()));
  Tensor t = empty({n}, options);
  detail::dispatch_numeric(options.dtype(), "arange", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // PyTorch's accumulate type: start and step converted to it first (an
    // integer dtype truncates a fractional step), then start + step * i.
    using Acc = std::conditional_t<std::is_integral_v<T>, int64_t,
                                   std::conditional_t<std::is_same_v<T, double>, double, float>>;
    const auto to_acc = [](const Scalar& v) {
      return v.is_integral() ? Acc(v.to_int64()) : Acc(v.to_double());
    };
    const Acc first = to_acc(start), by = to_acc(step);
    T* p = t.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = T(first + by * Acc(i));
  });
  return t.to(default_device());
}

Tensor eye(int64_t n, std::optional<int64_t> m_opt, TensorOptions options) {
  const int64_t m = m_opt.value_or(n);
  Tensor t = zeros({n, m}, options);
  t.diagonal().fill_(1);
  return t;
}

Tensor from_blob(const void* data, IntArrayRef shape, ScalarType dtype) {
  Tensor t = empty(shape, TensorOptions(dtype).device(Device(kCPU)));
  if (t.nbytes() > 0) std::memcpy(t.data_ptr(), data, t.nbytes());
  return t.to(default_device());
}

template <class T>
Tensor tensor(const std::vector<T>& values, IntArrayRef shape) {
  DimVector s = shape.empty() ? DimVector{int64_t(values.size())} : shape.dims();
  STRIDE_CHECK(numel_of(s) == int64_t(values.size()), ShapeError, "[tensor] ", values.size(),
               " values cannot fill shape ", shape_str(s), ".");
  Tensor t = empty(s, TensorOptions(scalar_type_of<T>).device(Device(kCPU)));
  T* p = static_cast<T*>(t.data_ptr());
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t.to(default_device());
}

template Tensor tensor<bool>(const std::vector<bool>&, IntArrayRef);
template Tensor tensor<uint8_t>(const std::vector<uint8_t>&, IntArrayRef);
template Tensor tensor<int32_t>(const std::vector<int32_t>&, IntArrayRef);
template Tensor tensor<int64_t>(const std::vector<int64_t>&, IntArrayRef);
template Tensor tensor<float>(const std::vector<float>&, IntArrayRef);
template Tensor tensor<double>(const std::vector<double>&, IntArrayRef);
template Tensor tensor<Half>(const std::vector<Half>&, IntArrayRef);
template Tensor tensor<BFloat16>(const std::vector<BFloat16>&, IntArrayRef);

// ---- fills ----

Tensor& Tensor::fill_(const Scalar& value) {
  return detail::apply_inplace(
      Op::fill, *this, {}, [&] { return full(sizes(), value, options()); },
      [&] {
        Tensor self = *this;
        TensorIter iter = TensorIterConfig("fill_").add_output(self).build();
        kernels::fill(device(), iter, value);
      });
}

Tensor& Tensor::zero_() {
  return fill_(0);
}

namespace {

// Random values are generated in row-major order into a contiguous float32 or
// float64 buffer by `fill(buf)` and copied into `self` (any layout, any
// floating dtype), so the numbers depend on the seed and the logical index
// only.
template <class Fill>
void fill_random_floating(Tensor& self, Fill fill) {
  const ScalarType work = self.dtype() == kFloat64 ? kFloat64 : kFloat32;
  Tensor buf = self.is_contiguous() && self.dtype() == work
                   ? self
                   : empty(self.sizes(), self.options().dtype(work));
  fill(buf);
  if (!buf.is_same(self))
    self.copy_(buf);
  else
    self.storage()->bump_version();
}

template <class Fill>
Tensor& random_floating(Tensor& self, Op op, Fill fill) {
  return detail::apply_inplace(
      op, self, {},
      [&] {
        Tensor fresh = empty(self.sizes(), self.options());
        fill_random_floating(fresh, fill);
        return fresh;
      },
      [&] { fill_random_floating(self, fill); });
}

}  // namespace

Tensor& Tensor::uniform_(double from, double to, Generator* gen) {
  STRIDE_CHECK(from <= to, ValueError, "[uniform_] expected from <= to; got from=", from,
               ", to=", to, ".");
  Generator& g = gen_or_default(gen, device());
  return random_floating(*this, Op::uniform, [&](Tensor& buf) {
    kernels::uniform_fill(buf.device(), buf, from, to, g);
  });
}

Tensor& Tensor::normal_(double mean, double std, Generator* gen) {
  STRIDE_CHECK(std >= 0, ValueError, "[normal_] expected std >= 0; got ", std, ".");
  Generator& g = gen_or_default(gen, device());
  return random_floating(*this, Op::normal, [&](Tensor& buf) {
    kernels::normal_fill(buf.device(), buf, mean, std, g);
  });
}

Tensor& Tensor::random_(int64_t from, int64_t to, Generator* gen) {
  STRIDE_CHECK(dtype() != kBool || (from >= 0 && to <= 2), ValueError,
               "[random_] a bool tensor needs a range within [0, 2); got [", from, ", ", to, ").");
  Tensor buf = empty(sizes(), options().dtype(kInt64));
  kernels::randint_fill(device(), buf, from, to, gen_or_default(gen, device()));
  return detail::apply_inplace(
      Op::random, *this, {}, [&] { return buf.to(dtype()); }, [&] { copy_(buf); });
}

Tensor& Tensor::bernoulli_(double p, Generator* gen) {
  STRIDE_CHECK(p >= 0 && p <= 1, ValueError, "[bernoulli_] expected 0 <= p <= 1; got ", p, ".");
  Tensor u = empty(sizes(), options().dtype(kFloat64));
  kernels::uniform_fill(device(), u, 0.0, 1.0, gen_or_default(gen, device()));
  const Tensor draws = stride::lt(u, scalar_tensor(p, u.options()));
  return detail::apply_inplace(
      Op::bernoulli, *this, {}, [&] { return draws.to(dtype()); }, [&] { copy_(draws); });
}

Tensor rand(IntArrayRef shape, TensorOptions options, Generator* gen) {
  Tensor t = empty(shape, options);
  return t.uniform_(0, 1, gen);
}

Tensor randn(IntArrayRef shape, TensorOptions options, Generator* gen) {
  Tensor t = empty(shape, options);
  return t.normal_(0, 1, gen);
}

Tensor randint(
    int64_t low, int64_t high, IntArrayRef shape, TensorOptions options, Generator* gen) {
  Tensor t = empty(shape, options);
  return t.random_(low, high, gen);
}

}  // namespace stride
