// copy_, contiguous, clone and dtype conversion: the one strided copy kernel
// (STYLE.md §3.3 rule 3), through TensorIter like every other write.
#include <algorithm>
#include <cstring>

#include "autograd/node.h"
#include "backends/cpu/loops.h"
#include "backends/cpu/transpose.h"
#include "core/dispatch.h"
#include "core/layout.h"
#include "ops/device_kernel.h"
#include "stride/backend.h"
#include "stride/ops.h"
#include "stride/parallel.h"
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

// A copy whose destination has unit stride along the innermost iteration dim
// (dim 0: the destination decides the order) while the source has unit
// stride along another dim j is a batch of 2-D transposes, e.g.
// x.transpose(-2, -1).contiguous(): Note [Transposed copy] in
// backends/cpu/transpose.h.
//
// The dim of `iter` (a same-dtype copy) along which the source has unit
// stride when the destination has it along dim 0 and the source does not;
// 0 when Note [Transposed copy] does not apply.
int transposed_copy_dim(const TensorIter& iter) {
  const size_t es = iter.operand(0).element_size();
  if ((es != 2 && es != 4 && es != 8) || iter.dtype(0) != iter.dtype(1) || iter.ndim() < 2)
    return 0;
  const int64_t* dst = iter.strides(0);
  const int64_t* src = iter.strides(1);
  if (dst[0] != int64_t(es) || src[0] == int64_t(es)) return 0;
  for (int j = 1; j < iter.ndim(); ++j) {
    if (src[j] != int64_t(es)) continue;
    // Without one whole small tile each way, all would be edges.
    const int64_t side = std::min(iter.shape()[0], iter.shape()[size_t(j)]);
    return side >= cpu::transpose_tile_side(es) / 2 ? j : 0;
  }
  return 0;
}

template <class U, int N>
void transposed_copy(const TensorIter& iter, int j) {
  const IntArrayRef shape = iter.shape();
  const int64_t* dst_st = iter.strides(0);
  const int64_t* src_st = iter.strides(1);
  char* dst0 = static_cast<char*>(iter.operand(0).data_ptr());
  const char* src0 = static_cast<const char*>(iter.operand(1).data_ptr());
  const int64_t rows = shape[0], cols = shape[size_t(j)];
  const int64_t row_tiles = (rows + N - 1) / N, col_tiles = (cols + N - 1) / N;
  const int64_t per_batch = row_tiles * col_tiles;
  const int64_t batches = iter.numel() / (rows * cols);
  // Tiles along a source row come one after another, so each task streams
  // through N source rows.
  parallel_for(0, batches * per_batch, std::max<int64_t>(1, 32768 / (N * N)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t t = begin; t < end; ++t) {
                   int64_t b = t / per_batch;
                   const int64_t r0 = t % per_batch / col_tiles * N;
                   const int64_t c0 = t % col_tiles * N;
                   char* dst = dst0 + r0 * dst_st[0] + c0 * dst_st[j];
                   const char* src = src0 + r0 * src_st[0] + c0 * src_st[j];
                   for (int d = 1; d < iter.ndim(); ++d) {  // the batch dims
                     if (d == j) continue;
                     const int64_t i = b % shape[size_t(d)];
                     b /= shape[size_t(d)];
                     dst += i * dst_st[d];
                     src += i * src_st[d];
                   }
                   cpu::TransposeTile<U, N>::copy(src, src_st[0], dst, dst_st[j],
                                                  std::min<int64_t>(N, rows - r0),
                                                  std::min<int64_t>(N, cols - c0));
                 }
               });
}

template <class U>
void transposed_copy(const TensorIter& iter, int j) {
  constexpr int N = cpu::transpose_tile_side(sizeof(U));
  if (std::min(iter.shape()[0], iter.shape()[size_t(j)]) >= N)
    transposed_copy<U, N>(iter, j);
  else
    transposed_copy<U, N / 2>(iter, j);
}

// The CPU kernel of copy_: every dtype pair, any layout.
void copy_kernel(const TensorIter& iter) {
  if (const int j = transposed_copy_dim(iter)) {  // Note [Transposed copy]
    switch (iter.operand(0).element_size()) {
      case 2:
        transposed_copy<uint16_t>(iter, j);
        break;
      case 4:
        transposed_copy<uint32_t>(iter, j);
        break;
      default:
        transposed_copy<uint64_t>(iter, j);
    }
    return;
  }
  detail::dispatch_all(iter.dtype(0), "copy_", [&](auto to_tag) {
    using To = typename decltype(to_tag)::type;
    detail::dispatch_all(iter.dtype(1), "copy_", [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      cpu::cpu_kernel(iter, [](From v) -> To { return convert<To, From>(v); });
    });
  });
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
  detail::run_kernel("copy_", device(), [&] { copy_kernel(iter); });
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

namespace {

// x's bytes on `device`: one copy of its dense memory block, in x's own
// layout when it is dense (else made contiguous first), through the backend
// of the device that is not the CPU.
Tensor copy_to_device(const Tensor& x, Device device) {
  STRIDE_CHECK(device_backend(x.device()).has_data(), DeviceError, "[to] cannot copy a ",
               x.device().str(), " tensor to ", device.str(),
               ": it has no data. Hint: make the tensor on ", device.str(),
               " instead (a module built on meta: Module::to_empty(", device.str(),
               ") and its initialiser).");
  const Tensor src = detail::is_non_overlapping_and_dense(x) ? x : x.contiguous();
  Tensor out = empty_strided(src.sizes(), src.strides(), src.options().device(device));
  if (device_backend(device).has_data()) {
    DeviceBackend& backend = device_backend(device.is_cpu() ? x.device() : device);
    backend.copy_bytes(out.data_ptr(), device, src.data_ptr(), x.device(), src.nbytes());
  }
  return out;
}

}  // namespace

Tensor Tensor::to(Device d) const {
  if (d == device()) return *this;
  Tensor out;
  {
    NoGradGuard no_grad;
    out = copy_to_device(*this, d);
  }
  if (!is_floating_point()) return out;
  if (auto node = autograd::make_node("to", {this}, {&out})) {
    node->set_backward(
        [from = device()](const autograd::Grads& gs) { return autograd::Grads{gs[0].to(from)}; });
  }
  return out;
}

}  // namespace stride
