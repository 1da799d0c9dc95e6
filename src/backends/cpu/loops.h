// The CPU elementwise loop: applies a scalar functor to every element of a
// TensorIter. Operand 0 is the output; the functor's parameters give the
// input types. Contiguous operands (outputs included, Note [Output layout])
// get a plain indexed loop the compiler vectorises, as does a binary op with
// one input broadcast along the run; anything else walks the byte strides
// TensorIter hands over. vec_kernel does the same for a float32 functor on
// 16-lane vectors (Note [Vector kernels]).
#pragma once

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "backends/cpu/vec_math.h"
#include "core/check.h"
#include "core/tensor_iter.h"

namespace stride::cpu {

template <class F>
struct FnTraits : FnTraits<decltype(&F::operator())> {};
template <class C, class R, class... A>
struct FnTraits<R (C::*)(A...) const> {
  using result = R;
  using args = std::tuple<A...>;
  static constexpr size_t arity = sizeof...(A);
};

namespace detail {

template <class F, size_t... I>
inline void elementwise_loop(
    char** data, const int64_t* s, int64_t n, const F& f, std::index_sequence<I...>) {
  using Traits = FnTraits<F>;
  using R = typename Traits::result;
  using Args = typename Traits::args;
  const bool contiguous =
      s[0] == sizeof(R) && ((s[I + 1] == sizeof(std::tuple_element_t<I, Args>)) && ...);
  if (contiguous) {
    R* __restrict out = reinterpret_cast<R*>(data[0]);
    std::tuple<const std::tuple_element_t<I, Args>*...> in{
        reinterpret_cast<const std::tuple_element_t<I, Args>*>(data[I + 1])...};
    for (int64_t i = 0; i < n; ++i) out[i] = f(std::get<I>(in)[i]...);
    return;
  }
  if constexpr (sizeof...(I) == 2) {
    using A = std::tuple_element_t<0, Args>;
    using B = std::tuple_element_t<1, Args>;
    // One input is a single value along this run (x * 2, or x * rstd with
    // rstd (rows, 1)): hoist it so that the loop vectorises like the dense
    // one. It cannot alias out: out would partially overlap it (TensorIter).
    if (s[0] == sizeof(R) && s[1] == sizeof(A) && s[2] == 0) {
      R* __restrict out = reinterpret_cast<R*>(data[0]);
      const A* a = reinterpret_cast<const A*>(data[1]);
      const B b = *reinterpret_cast<const B*>(data[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b);
      return;
    }
    if (s[0] == sizeof(R) && s[1] == 0 && s[2] == sizeof(B)) {
      R* __restrict out = reinterpret_cast<R*>(data[0]);
      const A a = *reinterpret_cast<const A*>(data[1]);
      const B* b = reinterpret_cast<const B*>(data[2]);
      for (int64_t i = 0; i < n; ++i) out[i] = f(a, b[i]);
      return;
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    *reinterpret_cast<R*>(data[0] + i * s[0]) =
        f(*reinterpret_cast<const std::tuple_element_t<I, Args>*>(data[I + 1] + i * s[I + 1])...);
  }
}

// A kernel of `arity` inputs writes one output: the iterator holds both.
inline void check_arity(const TensorIter& iter, size_t arity) {
  STRIDE_ASSERT(iter.ntensors() == int(arity) + 1, "kernel arity ", arity, " vs ", iter.ntensors(),
                " operands");
}

}  // namespace detail

// out[i] = f(in_0[i], in_1[i], ...) over the whole iteration, in parallel.
template <class F>
void cpu_kernel(const TensorIter& iter, const F& f, int64_t grain = 32768) {
  constexpr size_t arity = FnTraits<F>::arity;
  detail::check_arity(iter, arity);
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        detail::elementwise_loop(data, strides, n, f, std::make_index_sequence<arity>{});
      },
      grain);
}

// Note [Vector kernels]
// ~~~~~~~~~~~~~~~~~~~~~
// vec_kernel runs a functor of Vec16f (vec_math.h) over a float32 TensorIter.
// A contiguous run goes to vec_run whole; a strided run (transposed, sliced,
// broadcast operands, strided out= or in-place) is gathered into buffers,
// passed to the same vec_run and scattered back. vec_run is kept out of line,
// so every element goes through one compiled body: full 16-lane blocks or a
// zero-padded last block, which compute each lane alike (vec_math.h's top
// note). An element's bits therefore depend neither on its layout nor on
// where a thread split cuts its run (bit-identical for every thread count).
namespace detail {

template <class F, size_t... I>
[[gnu::noinline]] void vec_run(float* out,
                               const std::array<const float*, sizeof...(I)>& in,
                               int64_t n,
                               const F& f,
                               std::index_sequence<I...>) {
  vec::for_each_block(0, n, [&](int64_t i, int64_t m) {
    vec::store_n(out + i, f(vec::load_n(in[I] + i, m)...), m);
  });
}

}  // namespace detail

// out[i] = f(in_0[i], in_1[i], ...) 16 lanes at a time, in parallel; every
// operand float32.
template <class F>
void vec_kernel(const TensorIter& iter, const F& f, int64_t grain = 32768) {
  constexpr size_t arity = FnTraits<F>::arity;
  detail::check_arity(iter, arity);
  for (int k = 0; k < iter.ntensors(); ++k)
    STRIDE_ASSERT(iter.dtype(k) == kFloat32, "vec_kernel needs float32 operands");
  constexpr auto seq = std::make_index_sequence<arity>{};
  iter.for_each(
      [&](char** data, const int64_t* s, int64_t n) {
        bool contiguous = true;
        for (size_t k = 0; k <= arity; ++k) contiguous = contiguous && s[k] == sizeof(float);
        if (contiguous) {
          std::array<const float*, arity> in;
          for (size_t k = 0; k < arity; ++k) in[k] = reinterpret_cast<const float*>(data[k + 1]);
          detail::vec_run(reinterpret_cast<float*>(data[0]), in, n, f, seq);
          return;
        }
        // Inputs are all read before out is written, so in-place is safe.
        constexpr int64_t kBuf = 256;
        alignas(64) float buf[arity + 1][kBuf];
        std::array<const float*, arity> in;
        for (size_t k = 0; k < arity; ++k) in[k] = buf[k + 1];
        for (int64_t i = 0; i < n; i += kBuf) {
          const int64_t m = std::min(kBuf, n - i);
          for (size_t k = 1; k <= arity; ++k) {
            const char* p = data[k] + i * s[k];
            for (int64_t j = 0; j < m; ++j)
              buf[k][j] = *reinterpret_cast<const float*>(p + j * s[k]);
          }
          detail::vec_run(buf[0], in, m, f, seq);
          char* q = data[0] + i * s[0];
          for (int64_t j = 0; j < m; ++j) *reinterpret_cast<float*>(q + j * s[0]) = buf[0][j];
        }
      },
      grain);
}

}  // namespace stride::cpu
