// The instruction-set level of the CPU kernels in use.
//
// One build of stride carries its CPU kernels compiled for several levels
// (Note [CPU capabilities] in src/backends/cpu/capability.h) and runs the
// best one this CPU supports, chosen once when the library loads. The
// environment variable STRIDE_CPU_CAPABILITY=default|avx2|avx512 forces a
// lower level (as PyTorch's ATEN_CPU_CAPABILITY does), for tests and for
// comparing the levels on one machine.
#pragma once

#include <cstdint>
#include <string>

namespace stride {

// default: x86-64's baseline (SSE2), or NEON on arm64, where it is the only
// level. avx2: x86-64-v3 (AVX2, FMA, F16C). avx512: x86-64-v4 (AVX-512 F, BW,
// CD, DQ, VL); its kernels use the bf16 dot-product instructions where the
// CPU also has them.
enum class CpuCapability : uint8_t { Default = 0, AVX2 = 1, AVX512 = 2 };

// The level whose kernels run in this process: the best one that this build
// compiled, this CPU supports and STRIDE_CPU_CAPABILITY allows. Fixed at
// load.
CpuCapability cpu_capability();

// The best level this CPU supports, whatever the build or the environment.
CpuCapability cpu_capability_supported();

// Whether this build compiled kernels for `level`.
bool cpu_capability_compiled(CpuCapability level);

// "default", "avx2" or "avx512": the spelling STRIDE_CPU_CAPABILITY takes.
const char* cpu_capability_name(CpuCapability level);

// Whether the kernels in use multiply bfloat16 pairs with the CPU's bf16
// dot-product instructions (AVX512-BF16, at the avx512 level). Without them
// bf16 autocast computes the same products in float32: decoding widens the
// bf16 weights inside its kernel (reading half float32's bytes), and larger
// products run the float32 GEMM on the widened bf16-rounded operands.
bool cpu_has_bf16_dot_product();

// One line for `stride --version` and stride.show_config(): the level in
// use, and the CPU's best when that is higher, e.g. "avx2 (CPU supports
// avx512; STRIDE_CPU_CAPABILITY=avx2)".
std::string cpu_capability_summary();

}  // namespace stride
