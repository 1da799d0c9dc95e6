// The CPU kernel of copy_ (backends/kernels.h): every dtype pair, any
// layout, with batches of 2-D transposes in tiles (Note [Transposed copy]).
#include <algorithm>
#include <complex>
#include <cstdint>
#include <type_traits>

#include "backends/cpu/capability.h"
#include "backends/cpu/loops.h"
#include "backends/cpu/transpose.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "core/tensor_iter.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

template <class T>
inline constexpr bool is_16bit_float = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <class T>
inline constexpr bool is_complex_v = false;
template <class T>
inline constexpr bool is_complex_v<std::complex<T>> = true;

// A complex value copied into a real dtype keeps its real part, as
// PyTorch's copy_ (which warns); a real one copied into a complex dtype has
// imaginary part 0.
template <class To, class From>
inline To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_16bit_float<From>) {
    return convert<To>(float(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_complex_v<From> && !is_complex_v<To>) {
    return convert<To>(v.real());
  } else if constexpr (is_complex_v<To> && is_complex_v<From>) {
    return static_cast<To>(v);
  } else if constexpr (is_complex_v<To>) {
    return To(static_cast<typename To::value_type>(v));
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
    return side >= transpose_tile_side(es) / 2 ? j : 0;
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
                   TransposeTile<U, N>::copy(src, src_st[0], dst, dst_st[j],
                                             std::min<int64_t>(N, rows - r0),
                                             std::min<int64_t>(N, cols - c0));
                 }
               });
}

template <class U>
void transposed_copy(const TensorIter& iter, int j) {
  constexpr int N = transpose_tile_side(sizeof(U));
  if (std::min(iter.shape()[0], iter.shape()[size_t(j)]) >= N)
    transposed_copy<U, N>(iter, j);
  else
    transposed_copy<U, N / 2>(iter, j);
}

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
  stride::detail::dispatch_all_and_complex(iter.dtype(0), "copy_", [&](auto to_tag) {
    using To = typename decltype(to_tag)::type;
    stride::detail::dispatch_all_and_complex(iter.dtype(1), "copy_", [&](auto from_tag) {
      using From = typename decltype(from_tag)::type;
      cpu_kernel(iter, [](From v) -> To { return convert<To, From>(v); });
    });
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::copy, copy_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
