// copy_, contiguous, clone and dtype conversion: the one strided copy kernel
// (STYLE.md §3.3 rule 3), through TensorIter like every other write.
#include "backends/cpu/loops.h"
#include "core/dispatch.h"
#include "stride/ops.h"

namespace stride {

namespace {

template <class T>
inline constexpr bool is_16bit_float = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_16bit_float<From>) {
    return convert<To>(float(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_16bit_float<To>) {
    return To(float(v));
  } else {
    return static_cast<To>(v);
  }
}

}  // namespace

Tensor& Tensor::copy_(const Tensor& src) {
  STRIDE_CHECK(src.defined(), ValueError, "[copy_] the source tensor is undefined.");
  if (src.is_same(*this)) return *this;
  Tensor self = *this;
  TensorIter iter = TensorIterConfig("copy_")
                        .add_output(self)
                        .add_input(src)
                        .static_shape(sizes())
                        .check_all_same_dtype(false)
                        .build();
  detail::dispatch_all(dtype(), "copy_", [&](auto to_tag) {
    using To = typename decltype(to_tag)::type;
    detail::dispatch_all(src.dtype(), "copy_", [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      cpu::cpu_kernel(iter, [](From v) -> To { return convert<To, From>(v); });
    });
  });
  return *this;
}

Tensor Tensor::contiguous() const {
  if (is_contiguous()) return *this;
  return clone();
}

Tensor Tensor::clone() const {
  Tensor out = empty(sizes(), options());
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(ScalarType t) const {
  if (t == dtype()) return *this;
  Tensor out = empty(sizes(), options().dtype(t));
  out.copy_(*this);
  return out;
}

Tensor Tensor::to(Device d) const {
  STRIDE_CHECK(d.is_cpu(), DeviceError, "[to] cannot move a tensor to ", d.str(),
               ": stride has no CUDA backend yet.");
  return *this;
}

}  // namespace stride
