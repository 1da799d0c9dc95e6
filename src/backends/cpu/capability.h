// What every file of the CPU backend includes first: the instruction-set
// level it is being compiled for.
//
// Note [CPU capabilities]
// ~~~~~~~~~~~~~~~~~~~~~~~
// One build of stride runs fast on every CPU of its architecture. The CPU
// backend's files (src/backends/cpu/*.cpp) are compiled once per level that
// cmake/cpu_capabilities.cmake lists: on x86-64 at the baseline
// (-march=x86-64: SSE2), at x86-64-v3 (AVX2, FMA, F16C) and at x86-64-v4
// (AVX-512); on arm64 once, with NEON. The rest of the library is compiled
// for the baseline. Each compilation
//   - defines STRIDE_CPU_CAPABILITY_NS (capability_default, capability_avx2,
//     capability_avx512) and opens its code in STRIDE_CPU_NAMESPACE, the
//     inline namespace stride::cpu::STRIDE_CPU_CAPABILITY_NS, so the levels'
//     functions are distinct symbols while the code still calls them
//     cpu::gemm, cpu::vec::exp. A function that took a vector register by value in one
//     level and found another level's copy at link time would otherwise
//     read the wrong registers;
//   - registers its kernels with STRIDE_REGISTER_CPU_KERNEL, tagged with its
//     level (STRIDE_CPU_CAPABILITY_LEVEL); the stub keeps the best level at or
//     below cpu_capability(), chosen once at load from cpuid and
//     STRIDE_CPU_CAPABILITY (include/stride/cpu_capability.h).
// The code inside keeps choosing its paths with the compiler's macros
// (__AVX512F__, __AVX2__, __ARM_NEON): each compilation sees its own level's.
//
// What the levels still share are the inline functions and templates of the
// headers outside the backend (the standard library, stride's public
// headers), which the linker keeps once: the first copy in link order. The
// higher levels' objects are linked after all of libstride's others, lowest
// first (cmake/cpu_capabilities.cmake), so the copy kept is the lowest
// level's that emits it, which every caller can run.
//
// A few kernels use instructions beyond their level's -march (the bf16 dot
// product, vdpbf16ps, which not every AVX-512 CPU has): they are compiled
// with a target attribute and called only when cpu_has_avx512_bf16() says
// the CPU has them.
#pragma once

#include "core/dispatch_stub.h"
#include "stride/cpu_capability.h"

#if !defined(STRIDE_CPU_CAPABILITY_NS) || !defined(STRIDE_CPU_CAPABILITY_LEVEL)
// cmake/cpu_capabilities.cmake's stride_cpu_capability_flags defines them.
#error "src/backends/cpu/ compiles once per CPU level, which defines STRIDE_CPU_CAPABILITY_NS"
#endif

// The namespace of this compilation's level (a macro rather than spelled out
// where it opens: clang-format cannot yet name `inline` nested namespaces).
#define STRIDE_CPU_NAMESPACE stride::cpu::inline STRIDE_CPU_CAPABILITY_NS

namespace STRIDE_CPU_NAMESPACE {

inline constexpr CpuCapability kCompiledLevel = CpuCapability(STRIDE_CPU_CAPABILITY_LEVEL);

// Whether the CPU has AVX-512's bf16 dot product (vdpbf16ps), which is
// beyond the avx512 level's -march.
inline bool cpu_has_avx512_bf16() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("avx512bf16") != 0;
  return has;
#else
  return false;
#endif
}

}  // namespace STRIDE_CPU_NAMESPACE

// STRIDE_REGISTER_KERNEL(stub, CPU, kernel) for this compilation's level.
#define STRIDE_REGISTER_CPU_KERNEL(stub, kernel)                                  \
  [[maybe_unused]] static const bool STRIDE_CONCAT(stride_cpu_kernel_registered_, \
                                                   __COUNTER__) = [] {            \
    stub.register_cpu_kernel(::stride::cpu::kCompiledLevel, kernel);              \
    return true;                                                                  \
  }()
