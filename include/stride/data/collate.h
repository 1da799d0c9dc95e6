// collate: turns the examples of one batch into the batch.
//
// Collate<T> is the customization point: a specialization defines
//   using Output = ...;                                 // the batch type
//   static Output apply(std::vector<T>&& examples);     // examples is non-empty
// Provided:
//   Tensor                 -> stack(examples, 0): (B, ...); shapes must match
//   arithmetic (int, float, double, bool)
//                          -> 1-d tensor (B): int64 for integers, float32 for
//                             float, float64 for double, bool for bool
//   std::pair<A, B>        -> std::pair<Collate<A>::Output, Collate<B>::Output>
//   std::tuple<Ts...>      -> std::tuple<Collate<Ts>::Output...>
//   std::vector<T>         -> std::vector<Collate<T>::Output> (element-wise;
//                             every example must have the same length)
//   std::map<std::string, T> -> same keys, each value collated
// For a struct, specialize Collate and collate each member with
// collate_member():
//   struct Sample { Tensor image; int64_t label; };
//   struct SampleBatch { Tensor images; Tensor labels; };
//   template <> struct stride::data::Collate<Sample> {
//     using Output = SampleBatch;
//     static Output apply(std::vector<Sample>&& xs) {
//       return {collate_member(xs, &Sample::image), collate_member(xs, &Sample::label)};
//     }
//   };
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "stride/tensor.h"

namespace stride::data {

// Left undefined: an example type without a specialization is an incomplete
// type (and `collatable<T>` is false).
template <class T>
struct Collate;

template <class T>
concept collatable = requires {
  typename Collate<T>::Output;
};

template <class T>
using collate_t = typename Collate<T>::Output;

// Collates a batch of examples with Collate<T>.
template <class T>
auto collate(std::vector<T>&& examples) {
  static_assert(collatable<T>,
                "stride::data::Collate<T> has no specialization for this example type: "
                "specialize it (see collate.h) or pass a collate function to the DataLoader");
  return Collate<T>::apply(std::move(examples));
}

namespace detail {
[[noreturn]] void throw_empty_collate();
[[noreturn]] void throw_collate_size_mismatch(const char* what,
                                              size_t item,
                                              size_t got,
                                              size_t expected);
[[noreturn]] void throw_collate_key_mismatch(size_t item, const std::string& key);
// Stacks tensors into (B, ...), naming the mismatching item on error.
Tensor stack_examples(const std::vector<Tensor>& tensors);
// A 1-d tensor from B numbers of the given dtype.
Tensor numbers_tensor(const void* data, int64_t n, ScalarType dtype);
}  // namespace detail

// Gathers `member` of every example (moving it out) and collates it.
template <class T, class M>
collate_t<M> collate_member(std::vector<T>& examples, M T::*member) {
  std::vector<M> values;
  values.reserve(examples.size());
  for (T& e : examples) values.push_back(std::move(e.*member));
  return collate(std::move(values));
}

template <>
struct Collate<Tensor> {
  using Output = Tensor;
  static Tensor apply(std::vector<Tensor>&& examples) { return detail::stack_examples(examples); }
};

template <class T>
requires std::is_arithmetic_v<T>
struct Collate<T> {
  using Output = Tensor;
  static Tensor apply(std::vector<T>&& examples) {
    if (examples.empty()) detail::throw_empty_collate();
    if constexpr (std::is_same_v<T, bool>) {
      std::vector<uint8_t> v(examples.begin(), examples.end());
      return detail::numbers_tensor(v.data(), int64_t(v.size()), kBool);
    } else if constexpr (std::is_integral_v<T>) {
      std::vector<int64_t> v(examples.begin(), examples.end());
      return detail::numbers_tensor(v.data(), int64_t(v.size()), kInt64);
    } else if constexpr (std::is_same_v<T, float>) {
      return detail::numbers_tensor(examples.data(), int64_t(examples.size()), kFloat32);
    } else {
      std::vector<double> v(examples.begin(), examples.end());
      return detail::numbers_tensor(v.data(), int64_t(v.size()), kFloat64);
    }
  }
};

template <class A, class B>
struct Collate<std::pair<A, B>> {
  using Output = std::pair<collate_t<A>, collate_t<B>>;
  static Output apply(std::vector<std::pair<A, B>>&& examples) {
    if (examples.empty()) detail::throw_empty_collate();
    return Output(collate_member(examples, &std::pair<A, B>::first),
                  collate_member(examples, &std::pair<A, B>::second));
  }
};

template <class... Ts>
struct Collate<std::tuple<Ts...>> {
  using Output = std::tuple<collate_t<Ts>...>;
  static Output apply(std::vector<std::tuple<Ts...>>&& examples) {
    if (examples.empty()) detail::throw_empty_collate();
    return apply_impl(examples, std::index_sequence_for<Ts...>{});
  }

 private:
  template <size_t I>
  static auto field(std::vector<std::tuple<Ts...>>& examples) {
    using F = std::tuple_element_t<I, std::tuple<Ts...>>;
    std::vector<F> values;
    values.reserve(examples.size());
    for (auto& e : examples) values.push_back(std::move(std::get<I>(e)));
    return collate(std::move(values));
  }
  template <size_t... I>
  static Output apply_impl(std::vector<std::tuple<Ts...>>& examples, std::index_sequence<I...>) {
    return Output(field<I>(examples)...);
  }
};

template <class T>
struct Collate<std::vector<T>> {
  using Output = std::vector<collate_t<T>>;
  static Output apply(std::vector<std::vector<T>>&& examples) {
    if (examples.empty()) detail::throw_empty_collate();
    const size_t n = examples[0].size();
    for (size_t i = 1; i < examples.size(); ++i) {
      if (examples[i].size() != n)
        detail::throw_collate_size_mismatch("vector", i, examples[i].size(), n);
    }
    Output out;
    out.reserve(n);
    for (size_t j = 0; j < n; ++j) {
      std::vector<T> column;
      column.reserve(examples.size());
      for (auto& e : examples) column.push_back(std::move(e[j]));
      out.push_back(collate(std::move(column)));
    }
    return out;
  }
};

template <class T>
struct Collate<std::map<std::string, T>> {
  using Output = std::map<std::string, collate_t<T>>;
  static Output apply(std::vector<std::map<std::string, T>>&& examples) {
    if (examples.empty()) detail::throw_empty_collate();
    for (size_t i = 1; i < examples.size(); ++i) {
      if (examples[i].size() != examples[0].size())
        detail::throw_collate_size_mismatch("map", i, examples[i].size(), examples[0].size());
    }
    Output out;
    for (const auto& entry : examples[0]) {
      const std::string& key = entry.first;
      std::vector<T> column;
      column.reserve(examples.size());
      for (size_t i = 0; i < examples.size(); ++i) {
        auto it = examples[i].find(key);
        if (it == examples[i].end()) detail::throw_collate_key_mismatch(i, key);
        column.push_back(std::move(it->second));
      }
      out.emplace(key, collate(std::move(column)));
    }
    return out;
  }
};

}  // namespace stride::data
