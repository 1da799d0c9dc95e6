// The CPU kernel of matmul, mm and bmm (backends/kernels.h): BLAS for
// floating point, a plain loop for other dtypes, and the bf16 GEMM for
// autocast's mixed float32/bfloat16 operands.
#include <algorithm>

#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"
#include "backends/cpu/loops.h"
#include "backends/kernels.h"
#include "core/dispatch.h"
#include "core/tensor_iter.h"
#include "stride/factory.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

using kernels::GemmOperand;

template <class T>
void naive_gemm(int64_t batch,
                int64_t n,
                int64_t m,
                int64_t k,
                const T* a,
                int64_t sa,
                GemmOperand la,
                const T* b,
                int64_t sb,
                GemmOperand lb,
                T* c) {
  parallel_for(0, batch * n, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t bi = r / n, i = r % n;
      const T* A = a + bi * sa;
      const T* B = b + bi * sb;
      for (int64_t j = 0; j < m; ++j) {
        T acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          const T av = la.trans ? A[p * la.ld + i] : A[i * la.ld + p];
          const T bv = lb.trans ? B[j * lb.ld + p] : B[p * lb.ld + j];
          acc += av * bv;
        }
        c[r * m + j] = acc;
      }
    }
  });
}

// A bfloat16 operand of the mixed GEMM: its matrices (one when the batch is
// broadcast) in a dense buffer, oriented as the source was.
struct Bf16Operand {
  Tensor data;  // kBFloat16, kept alive for the GEMM
  GemmOperand layout;
  int64_t batch_stride;
};

// t (B, rows, cols) read through layout l with batch stride s (0: broadcast).
Bf16Operand to_bf16_operand(const Tensor& t, GemmOperand l, int64_t s) {
  const int64_t rows = t.size(1), cols = t.size(2);
  const int64_t stored_rows = l.trans ? cols : rows, row_len = l.trans ? rows : cols;
  if (t.dtype() == kBFloat16) return {t, l, s};
  const int64_t matrices = s == 0 ? 1 : t.size(0);
  const int64_t matrix = stored_rows * row_len;
  Tensor out = empty({matrices, stored_rows, row_len}, t.options().dtype(kBFloat16));
  const float* src = t.data_ptr<float>();
  BFloat16* dst = out.data_ptr<BFloat16>();
  // A pass over memory: threads pay off only for large operands.
  parallel_for(0, matrices * stored_rows,
               std::max<int64_t>(1, (1 << 16) / std::max<int64_t>(row_len, 1)),
               [&](int64_t begin, int64_t end) {
                 for (int64_t r = begin; r < end; ++r) {
                   const int64_t i = r / stored_rows, row = r % stored_rows;
                   round_to_bf16(src + i * s + row * l.ld, dst + r * row_len, row_len);
                 }
               });
  return {out, GemmOperand{l.trans, std::max<int64_t>(row_len, 1)}, s == 0 ? 0 : matrix};
}

// t, float32 or bfloat16, any layout -> its values rounded to bfloat16 and
// widened back to float32, contiguous: t.to(kBFloat16).to(kFloat32) bit for
// bit (BFloat16's rounding is the conversion's), without calling an op.
Tensor rounded_to_bf16_as_float(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.options().dtype(kFloat32));
  const TensorIter iter =
      TensorIterConfig("matmul").add_output(out).add_input(t).check_all_same_dtype(false).build();
  if (t.dtype() == kBFloat16) {
    cpu_kernel(iter, [](BFloat16 v) -> float { return float(v); });
  } else {
    cpu_kernel(iter, [](float v) -> float { return float(BFloat16(v)); });
  }
  return out;
}

// The mixed GEMM: bfloat16-rounded operands, float32 c.
void mixed_gemm(const Tensor& a,
                GemmOperand la,
                int64_t sa,
                const Tensor& b,
                GemmOperand lb,
                int64_t sb,
                Tensor& c) {
  const int64_t batch = c.size(0), n = c.size(1), m = c.size(2), k = a.size(2);
  if (!prefers_bf16_gemm(batch, la.trans, n, m, k)) {
    // bf16 x bf16 products are exact in float32: the float32 GEMM on the
    // rounded operands, widened back (row-major), gives the same numbers up
    // to summation order.
    const Tensor wa = rounded_to_bf16_as_float(a), wb = rounded_to_bf16_as_float(b);
    gemm_batched({.m = n,
                  .n = m,
                  .k = k,
                  .a = wa.data_ptr<float>(),
                  .lda = k,
                  .b = wb.data_ptr<float>(),
                  .ldb = m,
                  .c = c.data_ptr<float>(),
                  .ldc = m},
                 {.count = batch,
                  .stride_a = wa.size(0) == 1 ? 0 : n * k,
                  .stride_b = wb.size(0) == 1 ? 0 : k * m,
                  .stride_c = n * m});
    return;
  }
  const Bf16Operand A = to_bf16_operand(a, la, sa), B = to_bf16_operand(b, lb, sb);
  gemm_batched_bf16(
      {.trans_a = A.layout.trans,
       .trans_b = B.layout.trans,
       .m = n,
       .n = m,
       .k = k,
       .a = A.data.data_ptr<BFloat16>(),
       .lda = A.layout.ld,
       .b = B.data.data_ptr<BFloat16>(),
       .ldb = B.layout.ld,
       .c = c.data_ptr<float>(),
       .ldc = m},
      {.count = batch, .stride_a = A.batch_stride, .stride_b = B.batch_stride, .stride_c = n * m});
}

// The CPU GEMM of one dtype: BLAS for floating point, a plain loop else.
void gemm(const Tensor& a,
          GemmOperand la,
          int64_t sa,
          const Tensor& b,
          GemmOperand lb,
          int64_t sb,
          Tensor& c,
          const char* op) {
  const int64_t batch = c.size(0), n = c.size(1), m = c.size(2), k = a.size(2);
  // C (batch, n, m) = op(A) (batch, n, k) @ op(B) (batch, k, m), C dense.
  auto blas = [&](auto zero) {
    using T = decltype(zero);
    gemm_batched({.trans_a = la.trans,
                  .trans_b = lb.trans,
                  .m = n,
                  .n = m,
                  .k = k,
                  .a = a.data_ptr<T>(),
                  .lda = la.ld,
                  .b = b.data_ptr<T>(),
                  .ldb = lb.ld,
                  .c = c.data_ptr<T>(),
                  .ldc = m},
                 {.count = batch, .stride_a = sa, .stride_b = sb, .stride_c = n * m});
  };
  switch (a.dtype()) {
    case kFloat32:
      blas(float());
      break;
    case kFloat64:
      blas(double());
      break;
    default:
      stride::detail::dispatch_numeric(a.dtype(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        naive_gemm<T>(batch, n, m, k, a.data_ptr<T>(), sa, la, b.data_ptr<T>(), sb, lb,
                      c.data_ptr<T>());
      });
  }
}

void batched_gemm_kernel(const Tensor& a,
                         GemmOperand la,
                         int64_t sa,
                         const Tensor& b,
                         GemmOperand lb,
                         int64_t sb,
                         bool mixed,
                         const char* op,
                         Tensor& c) {
  if (mixed) {
    mixed_gemm(a, la, sa, b, lb, sb, c);
  } else {
    gemm(a, la, sa, b, lb, sb, c, op);
  }
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::batched_gemm, batched_gemm_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
