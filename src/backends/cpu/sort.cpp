// The CPU kernels of sort, topk, mode, kthvalue and multinomial (backends/kernels.h): one
// row at a time, rows split across threads. Every row's result depends on
// that row alone, so results do not depend on the thread count.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

using kernels::RowOrder;

// PyTorch's order: NaN above every number, so last ascending and first
// descending; equal keys keep their index order (a stable sort).
template <class T>
bool ascends(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// A value as an unsigned key whose order is PyTorch's sort order: integers
// with the sign bit flipped; floats with their sign-magnitude bits made
// two's-complement-like, -0 as +0 (equal keys, so ties) and every NaN as the
// largest key (NaN last ascending, first descending).
template <class T>
auto radix_key(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return uint8_t(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    using U = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    constexpr U kSign = U(1) << (8 * sizeof(U) - 1);
    if (std::isnan(v)) return std::numeric_limits<U>::max();
    const U bits = std::bit_cast<U>(v == T(0) ? T(0) : v);
    return (bits & kSign) ? U(~bits) : U(bits | kSign);
  } else {
    using U = std::make_unsigned_t<T>;
    if constexpr (std::is_signed_v<T>) return U(U(v) ^ (U(1) << (8 * sizeof(U) - 1)));
    return U(v);
  }
}

// Rows at least this long sort by radix: below it, the 256-bucket counts
// of each pass cost more than the comparisons they save.
constexpr int64_t kRadixMinLength = 256;

// The positions of a row in PyTorch's (stable) order, by a least
// significant digit first radix sort of (key, position) pairs, one byte a
// pass: every pass is stable, so equal keys keep their index order. The
// counts of every byte are taken in one read, and a byte that all keys
// share skips its pass. Descending sorts the complemented keys, which keeps
// ties in index order too (as PyTorch's stable descending sort). Returns
// whether every key differs from the others: then the order is the only
// one, whichever algorithm sorts.
template <class T>
bool radix_order_row(const T* row, int64_t n, bool descending, std::vector<int64_t>& order) {
  using U = decltype(radix_key(T{}));
  constexpr int kBytes = int(sizeof(U));
  const auto length = static_cast<size_t>(n);
  std::vector<U> keys(length), keys_tmp(length);
  std::vector<int64_t> order_tmp(length);
  order.resize(length);
  std::vector<std::array<int64_t, 256>> counts(kBytes, std::array<int64_t, 256>{});
  for (int64_t i = 0; i < n; ++i) {
    const U key = descending ? U(~radix_key(row[i])) : radix_key(row[i]);
    keys[size_t(i)] = key;
    order[size_t(i)] = i;
    for (int b = 0; b < kBytes; ++b) ++counts[size_t(b)][(key >> (8 * b)) & 0xFF];
  }
  for (int b = 0; b < kBytes; ++b) {
    auto& count = counts[size_t(b)];
    if (count[(keys[0] >> (8 * b)) & 0xFF] == n) continue;  // one digit: order unchanged
    int64_t start = 0;
    for (int64_t& c : count) start += std::exchange(c, start);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t to = count[(keys[size_t(i)] >> (8 * b)) & 0xFF]++;
      keys_tmp[size_t(to)] = keys[size_t(i)];
      order_tmp[size_t(to)] = order[size_t(i)];
    }
    keys.swap(keys_tmp);
    order.swap(order_tmp);
  }
  return std::adjacent_find(keys.begin(), keys.end()) == keys.end();
}

// Whether n values of T are likely all to differ, so that trying the radix
// order for an unstable sort pays: by the birthday bound, n 32-bit keys
// collide about n^2 / 2^33 times, and real data (normal draws, rounded
// values) far more often, so long float32 rows mostly hold ties and take
// std::sort anyway; 64-bit keys rarely tie, 8- and 16-bit ones always do
// past their range.
template <class T>
bool likely_distinct(int64_t n) {
  if constexpr (sizeof(T) >= 8) {
    return true;
  } else if constexpr (sizeof(T) == 4) {
    return n <= (int64_t(1) << 14);
  } else {
    return false;
  }
}

// The first k positions of a row of n values in order: all of them sorted
// when k == n (by radix for long rows), else the k smallest (largest when
// descending) found by a partial sort.
template <class T>
void order_row(const T* row, int64_t n, int64_t k, bool descending, std::vector<int64_t>& order) {
  if (k == n && n >= kRadixMinLength) {
    radix_order_row(row, n, descending, order);
    return;
  }
  order.resize(size_t(n));
  std::iota(order.begin(), order.end(), int64_t(0));
  auto before = [row, descending](int64_t i, int64_t j) {
    const bool less = descending ? ascends(row[j], row[i]) : ascends(row[i], row[j]);
    if (less) return true;
    const bool greater = descending ? ascends(row[i], row[j]) : ascends(row[j], row[i]);
    return !greater && i < j;  // ties (NaN with NaN too) in index order
  };
  if (k == n) {
    std::sort(order.begin(), order.end(), before);
  } else {
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
  }
}

// PyTorch's comparisons of (value, position) pairs: by value only, NaN
// above every number.
template <class T>
struct ValueAscends {
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    return ascends(a.first, b.first);
  }
};
template <class T>
struct ValueDescends {
  bool operator()(const std::pair<T, int64_t>& a, const std::pair<T, int64_t>& b) const {
    return ascends(b.first, a.first);
  }
};

// PyTorch's CPU sort (stable=False) and topk, step for step on the same
// pairs: which of equal elements comes first is their algorithms' choice,
// not index order. topk sorts its first k pairs by partial_sort when k is
// small beside n, else puts the k-th in place by nth_element and (sorted)
// sorts the k - 1 before it.
template <class T, class Before>
void order_pairs(std::vector<std::pair<T, int64_t>>& pairs,
                 int64_t k,
                 RowOrder order,
                 Before before) {
  const auto first = pairs.begin(), kth = pairs.begin() + k;
  if (order == RowOrder::Sort) {
    std::sort(first, pairs.end(), before);
  } else if (k * 64 <= int64_t(pairs.size())) {
    std::partial_sort(first, kth, pairs.end(), before);
  } else if (k > 0) {
    std::nth_element(first, kth - 1, pairs.end(), before);
    if (order == RowOrder::Topk) std::sort(first, kth - 1, before);
  }
}

// The first k of a row in PyTorch's order, into out and idx.
template <class T>
void order_row_as_pytorch(const T* row,
                          int64_t n,
                          int64_t k,
                          RowOrder order,
                          bool descending,
                          std::vector<std::pair<T, int64_t>>& pairs,
                          T* out,
                          int64_t* idx) {
  pairs.resize(size_t(n));
  for (int64_t j = 0; j < n; ++j) pairs[size_t(j)] = {row[j], j};
  if (descending) {
    order_pairs(pairs, k, order, ValueDescends<T>{});
  } else {
    order_pairs(pairs, k, order, ValueAscends<T>{});
  }
  for (int64_t j = 0; j < k; ++j) std::tie(out[j], idx[j]) = pairs[size_t(j)];
}

void sort_rows_kernel(
    const Tensor& x, RowOrder how, bool descending, Tensor& values, Tensor& indices) {
  const int64_t rows = values.size(0), k = values.size(1), n = x.size(1);
  detail::dispatch_numeric_and_bool(x.dtype(), "sort", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data_ptr<T>();
    T* out = values.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> order;
      std::vector<std::pair<T, int64_t>> pairs;
      for (int64_t r = begin; r < end; ++r) {
        const T* row = src + r * n;
        // An unstable sort of a long row whose values all differ has one
        // order, which the radix sort finds; ties take std::sort's choice.
        const bool unique_by_radix = how == RowOrder::Sort && n >= kRadixMinLength &&
                                     likely_distinct<T>(n) &&
                                     radix_order_row(row, n, descending, order);
        if (how != RowOrder::Stable && !unique_by_radix) {
          order_row_as_pytorch(row, n, k, how, descending, pairs, out + r * k, idx + r * k);
          continue;
        }
        if (!unique_by_radix) order_row(row, n, k, descending, order);
        for (int64_t j = 0; j < k; ++j) {
          out[r * k + j] = row[order[size_t(j)]];
          idx[r * k + j] = order[size_t(j)];
        }
      }
    });
  });
}

// PyTorch's CPU mode orders each row with std::sort, not stable, so which
// position of the mode it returns is std::sort's; the same sort on the same
// pairs makes the same choice.
void mode_rows_kernel(const Tensor& x, Tensor& indices) {
  const int64_t rows = x.size(0), n = x.size(1);
  detail::dispatch_numeric_and_bool(x.dtype(), "mode", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* src = x.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
      std::vector<std::pair<T, int64_t>> pairs(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        for (int64_t j = 0; j < n; ++j) pairs[size_t(j)] = {src[r * n + j], j};
        std::sort(pairs.begin(), pairs.end(),
                  [](const auto& a, const auto& b) { return a.first < b.first; });
        int64_t best = 0, run = 0, at = 0;
        for (int64_t j = 0; j < n; ++j) {
          ++run;
          if (j == n - 1 || pairs[size_t(j)].first != pairs[size_t(j + 1)].first) {
            if (run > best) {
              best = run;
              at = pairs[size_t(j)].second;
            }
            run = 0;
          }
        }
        idx[r] = at;
      }
    });
  });
}

// a > b, or a NaN and b not: the order of PyTorch's quickselect.
template <class T>
inline bool greater_or_nan(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (a != a) return b == b;
  }
  return a > b;
}

// Moves the (k+1)-th smallest of values[0, n) to position k, moving the
// positions alongside: PyTorch's quick_select_template, step for step, so
// that ties end where its kthvalue puts them.
template <class T>
void quick_select(std::vector<T>& v, std::vector<int64_t>& at, int64_t k) {
  auto swap = [&](int64_t i, int64_t j) {
    std::swap(v[size_t(i)], v[size_t(j)]);
    std::swap(at[size_t(i)], at[size_t(j)]);
  };
  auto gt = [&](int64_t i, int64_t j) { return greater_or_nan(v[size_t(i)], v[size_t(j)]); };
  int64_t lo = 0, hi = int64_t(v.size()) - 1;
  while (hi > lo) {
    if (hi == lo + 1) {
      if (gt(lo, hi)) swap(lo, hi);
      return;
    }
    swap(lo + (hi - lo) / 2, lo + 1);  // the median of three as pivot, at lo
    if (gt(lo + 1, hi)) swap(lo + 1, hi);
    if (gt(lo, hi)) swap(lo, hi);
    if (gt(lo + 1, lo)) swap(lo + 1, lo);
    int64_t i = lo + 1, j = hi;
    const T pivot = v[size_t(lo)];
    while (true) {
      do ++i;
      while (greater_or_nan(pivot, v[size_t(i)]));
      do --j;
      while (greater_or_nan(v[size_t(j)], pivot));
      if (j < i) break;
      swap(i, j);
    }
    swap(lo, j);
    if (j <= k) lo = i;
    if (j >= k) hi = j - 1;
  }
}

void kth_rows_kernel(const Tensor& x, int64_t k, Tensor& indices) {
  const int64_t rows = x.size(0), n = x.size(1);
  detail::dispatch_numeric_and_bool(x.dtype(), "kthvalue", [&](auto tag) {
    using T = typename decltype(tag)::type;
    // bool as uint8_t (same order): std::vector<bool> has no element references.
    using S = std::conditional_t<std::is_same_v<T, bool>, uint8_t, T>;
    const T* src = x.data_ptr<T>();
    int64_t* idx = indices.data_ptr<int64_t>();
    parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
      std::vector<S> v(static_cast<size_t>(n));
      std::vector<int64_t> at(static_cast<size_t>(n));
      for (int64_t r = begin; r < end; ++r) {
        std::copy(src + r * n, src + (r + 1) * n, v.begin());
        std::iota(at.begin(), at.end(), int64_t(0));
        quick_select(v, at, k);
        idx[r] = at[size_t(k)];
      }
    });
  });
}

// With replacement: each uniform u picks the first category whose running
// probability sum exceeds u times the row's sum (a binary search).
template <class T>
void sample_with_replacement(
    const T* p, int64_t n, const double* u, int64_t s, int64_t* out, std::vector<double>& cdf) {
  cdf.resize(size_t(n));
  double total = 0;
  for (int64_t i = 0; i < n; ++i) cdf[size_t(i)] = total += double(p[i]);
  for (int64_t j = 0; j < s; ++j) {
    const double target = u[j] * total;
    auto it = std::upper_bound(cdf.begin(), cdf.end(), target);
    int64_t pick = std::min<int64_t>(it - cdf.begin(), n - 1);
    while (p[pick] == T(0) && pick > 0) --pick;  // never a zero-probability category
    out[j] = pick;
  }
}

// Without replacement: the s categories with the largest keys log(1 - u) / p
// (Efraimidis and Spirakis; 1 - u is in (0, 1]), which draws them with the
// probabilities, and in the order, of sequential sampling.
template <class T>
void sample_without_replacement(const T* p,
                                int64_t n,
                                const double* u,
                                int64_t s,
                                int64_t* out,
                                std::vector<double>& keys,
                                std::vector<int64_t>& order) {
  keys.resize(size_t(n));
  for (int64_t i = 0; i < n; ++i) {
    keys[size_t(i)] =
        p[i] > T(0) ? std::log1p(-u[i]) / double(p[i]) : -std::numeric_limits<double>::infinity();
  }
  order_row(keys.data(), n, s, true, order);
  std::copy_n(order.begin(), s, out);
}

void multinomial_kernel(const Tensor& probs,
                        const Tensor& uniforms,
                        bool replacement,
                        Tensor& samples) {
  const int64_t rows = probs.size(0), n = probs.size(1), s = samples.size(1);
  const int64_t draws = uniforms.size(1);
  detail::dispatch_floating(probs.dtype(), "multinomial", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = probs.data_ptr<T>();
    const double* u = uniforms.data_ptr<double>();
    int64_t* out = samples.data_ptr<int64_t>();
    parallel_for(0, rows, 1, [&](int64_t begin, int64_t end) {
      std::vector<double> scratch;
      std::vector<int64_t> order;
      for (int64_t r = begin; r < end; ++r) {
        if (replacement) {
          sample_with_replacement(p + r * n, n, u + r * draws, s, out + r * s, scratch);
        } else {
          sample_without_replacement(p + r * n, n, u + r * draws, s, out + r * s, scratch, order);
        }
      }
    });
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::sort_rows, sort_rows_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::mode_rows, mode_rows_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::kth_rows, kth_rows_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::multinomial, multinomial_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
