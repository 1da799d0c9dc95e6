// The CPU kernel of autocast's float32 -> bfloat16 rounding
// (backends/kernels.h).
#include "backends/cpu/blas.h"
#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "stride/parallel.h"

namespace STRIDE_CPU_NAMESPACE {

namespace {

void round_to_bfloat16_kernel(const Tensor& src, Tensor& out) {
  const float* from = src.data_ptr<float>();
  BFloat16* to = out.data_ptr<BFloat16>();
  // A pass over memory (a gradient of the large Llama is 4M floats): split
  // only when large, as linalg's operand conversion.
  parallel_for(0, src.numel(), int64_t(1) << 16, [&](int64_t begin, int64_t end) {
    round_to_bf16(from + begin, to + begin, end - begin);
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::round_to_bfloat16, round_to_bfloat16_kernel);

}  // namespace STRIDE_CPU_NAMESPACE
