// The CPU elementwise loop: applies a scalar functor to every element of a
// TensorIter. Operand 0 is the output; the functor's parameters give the
// input types. Contiguous operands (outputs included, Note [Output layout])
// get a plain indexed loop the compiler vectorises, as does a binary op with
// one input broadcast along the run; anything else walks the byte strides
// TensorIter hands over.
#pragma once

#include <tuple>
#include <utility>

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

}  // namespace detail

// out[i] = f(in_0[i], in_1[i], ...) over the whole iteration, in parallel.
template <class F>
void cpu_kernel(const TensorIter& iter, const F& f, int64_t grain = 32768) {
  constexpr size_t arity = FnTraits<F>::arity;
  STRIDE_ASSERT(iter.ntensors() == int(arity) + 1, "kernel arity ", arity, " vs ", iter.ntensors(),
                " operands");
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        detail::elementwise_loop(data, strides, n, f, std::make_index_sequence<arity>{});
      },
      grain);
}

}  // namespace stride::cpu
