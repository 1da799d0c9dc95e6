// copy_, contiguous, clone and dtype conversion: the one strided copy kernel
// (STYLE.md §3.3 rule 3), through TensorIter like every other write.
#include "autograd/node.h"
#include "backends/cpu/loops.h"
#include "core/dispatch.h"
#include "stride/ops.h"
#include "stride/profiler.h"

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
  if (autograd::check_inplace(*this, "copy_", {&src})) {
    autograd::rebase_history(*this, src.to(dtype()).expand(sizes()).clone());
    return *this;
  }
  profiler::RecordFunction record("copy_", {*this, src});
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

namespace {

// A copy of `x` with dtype `t`, recorded as one op (clone or to).
Tensor copy_as(const Tensor& x, ScalarType t, const char* op) {
  Tensor out = empty(x.sizes(), x.options().dtype(t));
  {
    NoGradGuard no_grad;
    out.copy_(x);
  }
  if (!is_floating_point(t)) return out;  // integer results carry no gradient
  if (auto node = autograd::make_node(op, {&x}, {&out})) {
    node->set_backward(
        [src = x.dtype()](const autograd::Grads& gs) { return autograd::Grads{gs[0].to(src)}; });
  }
  return out;
}

}  // namespace

Tensor Tensor::clone() const {
  return copy_as(*this, dtype(), "clone");
}

Tensor Tensor::to(ScalarType t) const {
  if (t == dtype()) return *this;
  return copy_as(*this, t, "to");
}

Tensor Tensor::to(Device d) const {
  STRIDE_CHECK(d.is_cpu(), DeviceError, "[to] cannot move a tensor to ", d.str(),
               ": stride has no CUDA backend yet.");
  return *this;
}

}  // namespace stride
