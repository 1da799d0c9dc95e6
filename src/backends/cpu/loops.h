// The CPU elementwise loop: applies a scalar functor to every element of a
// TensorIter. Operand 0 is the output; the functor's parameters give the
// input types. Contiguous operands (outputs included, Note [Output layout])
// get a plain indexed loop the compiler vectorises, as does a binary op with
// one input broadcast along the run; anything else walks the byte strides
// TensorIter hands over. vec_kernel does the same for a float32 functor on
// 16-lane vectors (Note [Vector kernels]). Both run ops on 16-bit floats in
// float32 without copies (Note [16-bit elementwise]).
#pragma once

#include <algorithm>
#include <array>
#include <tuple>
#include <type_traits>
#include <utility>

#include "backends/cpu/capability.h"
#include "backends/cpu/vec_math.h"
#include "core/check.h"
#include "core/tensor_iter.h"

namespace STRIDE_CPU_NAMESPACE {

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

// Note [16-bit elementwise]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Ops on float16 and bfloat16 compute in float32, as PyTorch's do, without a
// float32 copy of any operand: `widened<S>(f)` runs a functor of float on
// operands stored as S (Half or BFloat16), converting each element as the
// loop reads it and rounding each result as it writes it, and vec_kernel<S>
// converts blocks of 256 elements into buffers that stay in L1. An element's
// bits are those of the float32 op on its widened inputs, rounded once.
template <class S, class T>
using stored_t = std::conditional_t<std::is_same_v<T, float>, S, T>;

namespace detail {

template <class S, class F, class R, class Args>
struct Widened;
template <class S, class F, class R, class... A>
struct Widened<S, F, R, std::tuple<A...>> {
  F f;
  stored_t<S, R> operator()(stored_t<S, A>... a) const { return stored_t<S, R>(f(A(a)...)); }
};

}  // namespace detail

// f itself for S = float (or any type that is not a 16-bit float); else f
// over operands stored as S (Note [16-bit elementwise]).
template <class S, class F>
auto widened(const F& f) {
  if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>) {
    using Traits = FnTraits<F>;
    return detail::Widened<S, F, typename Traits::result, typename Traits::args>{f};
  } else {
    return f;
  }
}

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

namespace detail {

// n elements of operand k, stored as S at byte stride `stride`, widened into
// buf; and back, rounded.
template <class S>
inline void widen_into(float* buf, const char* p, int64_t stride, int64_t n) {
  if (stride == int64_t(sizeof(S))) {
    const S* q = reinterpret_cast<const S*>(p);
    for (int64_t j = 0; j < n; ++j) buf[j] = float(q[j]);
    return;
  }
  for (int64_t j = 0; j < n; ++j) buf[j] = float(*reinterpret_cast<const S*>(p + j * stride));
}
template <class S>
inline void store_from(char* p, int64_t stride, const float* buf, int64_t n) {
  if (stride == int64_t(sizeof(S))) {
    S* q = reinterpret_cast<S*>(p);
    for (int64_t j = 0; j < n; ++j) q[j] = S(buf[j]);
    return;
  }
  for (int64_t j = 0; j < n; ++j) *reinterpret_cast<S*>(p + j * stride) = S(buf[j]);
}

}  // namespace detail

// out[i] = f(in_0[i], in_1[i], ...) 16 lanes at a time, in parallel; every
// operand stored as S: float32, or a 16-bit float widened on the way in and
// rounded on the way out (Note [16-bit elementwise]).
template <class S = float, class F>
void vec_kernel(const TensorIter& iter, const F& f, int64_t grain = 32768) {
  constexpr size_t arity = FnTraits<F>::arity;
  detail::check_arity(iter, arity);
  for (int k = 0; k < iter.ntensors(); ++k)
    STRIDE_ASSERT(iter.dtype(k) == CppTypeToScalarType<S>::value,
                  "vec_kernel's operands must all be of its storage type");
  constexpr auto seq = std::make_index_sequence<arity>{};
  iter.for_each(
      [&](char** data, const int64_t* s, int64_t n) {
        if constexpr (std::is_same_v<S, float>) {
          bool contiguous = true;
          for (size_t k = 0; k <= arity; ++k) contiguous = contiguous && s[k] == sizeof(float);
          if (contiguous) {
            std::array<const float*, arity> in;
            for (size_t k = 0; k < arity; ++k) in[k] = reinterpret_cast<const float*>(data[k + 1]);
            detail::vec_run(reinterpret_cast<float*>(data[0]), in, n, f, seq);
            return;
          }
        }
        // Inputs are all read before out is written, so in-place is safe.
        constexpr int64_t kBuf = 256;
        alignas(64) float buf[arity + 1][kBuf];
        std::array<const float*, arity> in;
        for (size_t k = 0; k < arity; ++k) in[k] = buf[k + 1];
        for (int64_t i = 0; i < n; i += kBuf) {
          const int64_t m = std::min(kBuf, n - i);
          for (size_t k = 1; k <= arity; ++k)
            detail::widen_into<S>(buf[k], data[k] + i * s[k], s[k], m);
          detail::vec_run(buf[0], in, m, f, seq);
          detail::store_from<S>(data[0] + i * s[0], s[0], buf[0], m);
        }
      },
      grain);
}

}  // namespace STRIDE_CPU_NAMESPACE
