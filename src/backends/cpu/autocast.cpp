// The CPU kernels of autocast (backends/kernels.h): the float32 -> bfloat16
// rounding, and which products the mixed GEMM multiplies in bfloat16.
#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"
#include "backends/cpu/gemv.h"
#include "backends/kernels.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

// Splits a pass over memory (a gradient of the large Llama is 4M floats)
// only when large, as linalg's operand conversion.
template <class Round>
void round_in_chunks(int64_t n, const Round& round) {
  parallel_for(0, n, int64_t(1) << 16, round);
}

void round_to_bfloat16_kernel(const Tensor& src, Tensor& out) {
  const float* from = src.data_ptr<float>();
  if (out.dtype() == kBFloat16) {
    BFloat16* to = out.data_ptr<BFloat16>();
    round_in_chunks(src.numel(), [&](int64_t begin, int64_t end) {
      round_to_bf16(from + begin, to + begin, end - begin);
    });
    return;
  }
  float* to = out.data_ptr<float>();
  round_in_chunks(src.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) to[i] = float(BFloat16(from[i]));
  });
}

// Decoding rows take the bf16 decode GEMV on any CPU: it reads half the
// bytes of float32 weights (cpu::prefers_bf16_gemm). Other products run in
// bf16 only with oneDNN's bf16 kernels.
bool autocast_multiplies_bf16_kernel(int64_t rows) {
  return rows <= kDecodeRows || has_bf16_gemm();
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::round_to_bfloat16, round_to_bfloat16_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::autocast_multiplies_bf16, autocast_multiplies_bf16_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
