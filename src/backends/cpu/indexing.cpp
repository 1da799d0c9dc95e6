// The CPU kernels of index_select, gather, embedding and the scatters
// (backends/kernels.h), over the restrided operands of Note [Restrided
// indexing] in src/ops/indexing.cpp, a whole run at a time where Note
// [Indexed runs] there applies; and those of advanced indexing (index,
// index_put), over the byte offsets of Note [Advanced indexing] in
// src/ops/advanced_indexing.cpp.
#include <cstring>
#include <type_traits>

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "core/tensor_iter.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

using kernels::ScatterReduce;

template <class I>
inline int64_t load_index(const char* p) {
  return int64_t(*reinterpret_cast<const I*>(p));
}

[[noreturn]] void index_out_of_range(const char* op, int64_t idx, int64_t dim, int64_t size) {
  if (std::strcmp(op, "embedding") == 0) {
    throw IndexError(detail::str_cat("[embedding] id ", idx,
                                     " is out of range for a vocabulary of ", size,
                                     " (ids must be in [0, ", size,
                                     ")). Hint: check the tokenizer and the model's vocab_size."));
  }
  throw IndexError(detail::str_cat("[", op, "] index ", idx, " is out of range for dim ", dim,
                                   " of size ", size, "."));
}

// out[...] = src[... with dim replaced by index[...]].
void gather_kernel(const TensorIter& iter,
                   ScalarType index_dtype,
                   int64_t dim,
                   int64_t src_dim_size,
                   int64_t dim_bytes,
                   const char* op) {
  const int64_t elsize = int64_t(iter.operand(0).element_size());
  auto run = [&](auto index_tag) {
    using I = typename decltype(index_tag)::type;
    iter.for_each([&](char** data, const int64_t* s, int64_t n) {
      if (s[2] == 0 && s[0] == elsize && s[1] == elsize) {  // Note [Indexed runs]
        const int64_t idx = load_index<I>(data[2]);
        if (idx < 0 || idx >= src_dim_size) index_out_of_range(op, idx, dim, src_dim_size);
        std::memcpy(data[0], data[1] + idx * dim_bytes, size_t(n * elsize));
        return;
      }
      for (int64_t i = 0; i < n; ++i) {
        const int64_t idx = load_index<I>(data[2] + i * s[2]);
        if (idx < 0 || idx >= src_dim_size) index_out_of_range(op, idx, dim, src_dim_size);
        std::memcpy(data[0] + i * s[0], data[1] + i * s[1] + idx * dim_bytes, size_t(elsize));
      }
    });
  };
  if (index_dtype == kInt64)
    run(detail::TypeTag<int64_t>{});
  else
    run(detail::TypeTag<int32_t>{});
}

// The value `reduce` makes of an element `a` and an incoming `b`; 16-bit
// floats compute in float, bool in int (sum: or, prod: and). amax and amin
// propagate NaN, as PyTorch's scatter_reduce.
template <class T>
inline T combine(ScatterReduce reduce, T a, T b) {
  using C = std::conditional_t<
      std::is_same_v<T, bool>, int,
      std::conditional_t<std::is_floating_point_v<T> || std::is_integral_v<T>, T, float>>;
  const C x = C(a), y = C(b);
  switch (reduce) {
    case ScatterReduce::None:
      return b;
    case ScatterReduce::Sum:
      return T(x + y);
    case ScatterReduce::Prod:
      return T(x * y);
    case ScatterReduce::Max:
      return (x != x || y != y) ? T(x != x ? x : y) : T(x < y ? y : x);
    case ScatterReduce::Min:
      return (x != x || y != y) ? T(x != x ? x : y) : T(y < x ? y : x);
  }
  return b;
}

// The CPU kernel of scatter, scatter_add and scatter_reduce: serial, as
// several index entries may hit one element.
void scatter_cpu(const TensorIter& iter,
                 ScalarType dtype,
                 ScalarType index_dtype,
                 ScatterReduce reduce,
                 int64_t d0,
                 int64_t size_d,
                 int64_t dim_bytes,
                 const char* op) {
  detail::dispatch_all(dtype, op, [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto run = [&](auto index_tag) {
      using I = typename decltype(index_tag)::type;
      iter.serial_for_each(
          [&](char** data, const int64_t* s, int64_t n) {
            const int64_t es = int64_t(sizeof(T));
            if (s[2] == 0 && s[0] == es && s[1] == es) {  // Note [Indexed runs]
              const int64_t idx = load_index<I>(data[2]);
              if (idx < 0 || idx >= size_d) index_out_of_range(op, idx, d0, size_d);
              T* to = reinterpret_cast<T*>(data[0] + idx * dim_bytes);
              const T* from = reinterpret_cast<const T*>(data[1]);
              for (int64_t i = 0; i < n; ++i) to[i] = combine(reduce, to[i], from[i]);
              return;
            }
            for (int64_t i = 0; i < n; ++i) {
              const int64_t idx = load_index<I>(data[2] + i * s[2]);
              if (idx < 0 || idx >= size_d) index_out_of_range(op, idx, d0, size_d);
              T* to = reinterpret_cast<T*>(data[0] + i * s[0] + idx * dim_bytes);
              *to = combine(reduce, *to, *reinterpret_cast<const T*>(data[1] + i * s[1]));
            }
          },
          0, iter.numel());
    };
    if (index_dtype == kInt64)
      run(detail::TypeTag<int64_t>{});
    else
      run(detail::TypeTag<int32_t>{});
  });
}

// offsets += index * dim_bytes, negative indices wrapped (Python's rule).
void index_offsets_cpu(
    const TensorIter& iter, ScalarType index_dtype, int64_t dim, int64_t size, int64_t dim_bytes) {
  auto run = [&](auto index_tag) {
    using I = typename decltype(index_tag)::type;
    iter.for_each([&](char** data, const int64_t* s, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        int64_t idx = load_index<I>(data[2] + i * s[2]);
        if (idx < -size || idx >= size) {
          throw IndexError(detail::str_cat("[index] index ", idx,
                                           " is out of bounds for dimension ", dim, " with size ",
                                           size, "."));
        }
        if (idx < 0) idx += size;
        *reinterpret_cast<int64_t*>(data[0] + i * s[0]) =
            *reinterpret_cast<const int64_t*>(data[1] + i * s[1]) + idx * dim_bytes;
      }
    });
  };
  if (index_dtype == kInt64)
    run(detail::TypeTag<int64_t>{});
  else
    run(detail::TypeTag<int32_t>{});
}

// out[...] = *(src[...] + offset[...]): a byte copy, so any dtype.
void index_gather_cpu(const TensorIter& iter) {
  const size_t elsize = iter.operand(0).element_size();
  iter.for_each([&](char** data, const int64_t* s, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t offset = *reinterpret_cast<const int64_t*>(data[2] + i * s[2]);
      std::memcpy(data[0] + i * s[0], data[1] + i * s[1] + offset, elsize);
    }
  });
}

// *(dst[...] + offset[...]) = values[...] (or +=), serially: several
// entries may name one element, and the last write (or every addition)
// must count.
void index_put_cpu(const TensorIter& iter, ScalarType dtype, bool accumulate) {
  if (!accumulate) {
    const size_t elsize = iter.operand(0).element_size();
    iter.serial_for_each(
        [&](char** data, const int64_t* s, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t offset = *reinterpret_cast<const int64_t*>(data[2] + i * s[2]);
            std::memcpy(data[0] + i * s[0] + offset, data[1] + i * s[1], elsize);
          }
        },
        0, iter.numel());
    return;
  }
  detail::dispatch_all(dtype, "index_put_", [&](auto tag) {
    using T = typename decltype(tag)::type;
    iter.serial_for_each(
        [&](char** data, const int64_t* s, int64_t n) {
          for (int64_t i = 0; i < n; ++i) {
            const int64_t offset = *reinterpret_cast<const int64_t*>(data[2] + i * s[2]);
            T* to = reinterpret_cast<T*>(data[0] + i * s[0] + offset);
            *to = combine(ScatterReduce::Sum, *to, *reinterpret_cast<const T*>(data[1] + i * s[1]));
          }
        },
        0, iter.numel());
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::gather, gather_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::scatter, scatter_cpu);
STRIDE_REGISTER_CPU_KERNEL(kernels::index_offsets, index_offsets_cpu);
STRIDE_REGISTER_CPU_KERNEL(kernels::index_gather, index_gather_cpu);
STRIDE_REGISTER_CPU_KERNEL(kernels::index_put, index_put_cpu);

}  // namespace STRIDE_CPU_NAMESPACE
