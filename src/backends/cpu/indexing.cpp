// The CPU kernels of index_select, gather, embedding and scatter_add
// (backends/kernels.h), over the restrided operands of Note [Restrided
// indexing] in src/ops/indexing.cpp, a whole run at a time where Note
// [Indexed runs] there applies.
#include <cstring>

#include "backends/kernels.h"
#include "core/dispatch.h"
#include "core/tensor_iter.h"

namespace stride::cpu {

namespace {

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

// The CPU kernel of scatter_add: serial, as several index entries may hit one
// element.
void scatter_add_cpu(const TensorIter& iter,
                     ScalarType dtype,
                     ScalarType index_dtype,
                     int64_t d0,
                     int64_t size_d,
                     int64_t dim_bytes) {
  detail::dispatch_numeric(dtype, "scatter_add", [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto run = [&](auto index_tag) {
      using I = typename decltype(index_tag)::type;
      iter.serial_for_each(
          [&](char** data, const int64_t* s, int64_t n) {
            const int64_t es = int64_t(sizeof(T));
            if (s[2] == 0 && s[0] == es && s[1] == es) {  // Note [Indexed runs]
              const int64_t idx = load_index<I>(data[2]);
              if (idx < 0 || idx >= size_d) index_out_of_range("scatter_add", idx, d0, size_d);
              T* to = reinterpret_cast<T*>(data[0] + idx * dim_bytes);
              const T* from = reinterpret_cast<const T*>(data[1]);
              for (int64_t i = 0; i < n; ++i) to[i] += from[i];
              return;
            }
            for (int64_t i = 0; i < n; ++i) {
              const int64_t idx = load_index<I>(data[2] + i * s[2]);
              if (idx < 0 || idx >= size_d) index_out_of_range("scatter_add", idx, d0, size_d);
              *reinterpret_cast<T*>(data[0] + i * s[0] + idx * dim_bytes) +=
                  *reinterpret_cast<const T*>(data[1] + i * s[1]);
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

}  // namespace

STRIDE_REGISTER_KERNEL(kernels::gather, CPU, gather_kernel);
STRIDE_REGISTER_KERNEL(kernels::scatter_add, CPU, scatter_add_cpu);

}  // namespace stride::cpu
