#include "stride/cpu_capability.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

// STRIDE_CPU_CAPABILITIES_COMPILED: a bit per level whose kernels this build
// compiled (cmake/cpu_capabilities.cmake).
#ifndef STRIDE_CPU_CAPABILITIES_COMPILED
#error "cmake/cpu_capabilities.cmake defines STRIDE_CPU_CAPABILITIES_COMPILED for this file"
#endif

namespace stride {
namespace {

constexpr CpuCapability kLevels[] = {CpuCapability::Default, CpuCapability::AVX2,
                                     CpuCapability::AVX512};

CpuCapability detect_supported() {
#if defined(__x86_64__)
  // The same levels as the compilers' -march=x86-64-v3/-v4, checked with the
  // operating system's support for the wider registers (libgcc reads XCR0).
  __builtin_cpu_init();
  if (__builtin_cpu_supports("x86-64-v4")) return CpuCapability::AVX512;
  if (__builtin_cpu_supports("x86-64-v3")) return CpuCapability::AVX2;
#endif
  return CpuCapability::Default;
}

// The level STRIDE_CPU_CAPABILITY names, or `fallback` (with a line on
// stderr) when it names none. Read during the library's static
// initialisation, before a warning handler could be installed, so it writes
// to stderr itself.
CpuCapability requested_level(CpuCapability fallback) {
  const char* env = std::getenv("STRIDE_CPU_CAPABILITY");
  if (env == nullptr || *env == '\0') return fallback;
  for (CpuCapability level : kLevels) {
    if (std::strcmp(env, cpu_capability_name(level)) == 0) return level;
  }
  std::fprintf(stderr,
               "stride: warning: STRIDE_CPU_CAPABILITY=%s names no CPU level; "
               "use default, avx2 or avx512. Running %s.\n",
               env, cpu_capability_name(fallback));
  return fallback;
}

CpuCapability choose_level() {
  const CpuCapability supported = cpu_capability_supported();
  CpuCapability wanted = requested_level(supported);
  if (wanted > supported) {
    std::fprintf(stderr,
                 "stride: warning: STRIDE_CPU_CAPABILITY=%s asks for more than this CPU "
                 "supports (%s); running %s.\n",
                 cpu_capability_name(wanted), cpu_capability_name(supported),
                 cpu_capability_name(supported));
    wanted = supported;
  }
  // The best compiled level at or below it; default is always compiled.
  for (int i = int(wanted); i > 0; --i) {
    if (cpu_capability_compiled(CpuCapability(i))) return CpuCapability(i);
  }
  return CpuCapability::Default;
}

}  // namespace

CpuCapability cpu_capability_supported() {
  static const CpuCapability supported = detect_supported();
  return supported;
}

bool cpu_capability_compiled(CpuCapability level) {
  return ((STRIDE_CPU_CAPABILITIES_COMPILED >> int(level)) & 1) != 0;
}

CpuCapability cpu_capability() {
  static const CpuCapability level = choose_level();
  return level;
}

bool cpu_has_bf16_dot_product() {
#if defined(__x86_64__)
  static const bool has =
      cpu_capability() == CpuCapability::AVX512 && __builtin_cpu_supports("avx512bf16") != 0;
  return has;
#else
  return false;
#endif
}

const char* cpu_capability_name(CpuCapability level) {
  switch (level) {
    case CpuCapability::AVX2:
      return "avx2";
    case CpuCapability::AVX512:
      return "avx512";
    case CpuCapability::Default:
      break;
  }
  return "default";
}

std::string cpu_capability_summary() {
  const CpuCapability level = cpu_capability();
  const CpuCapability supported = cpu_capability_supported();
  std::string line = cpu_capability_name(level);
  if (supported == level) return line;
  line += std::string(" (CPU supports ") + cpu_capability_name(supported);
  const char* env = std::getenv("STRIDE_CPU_CAPABILITY");
  if (env != nullptr && *env != '\0') {
    line += std::string("; STRIDE_CPU_CAPABILITY=") + env;
  } else {
    line += "; this build has no kernels for it";
  }
  return line + ")";
}

}  // namespace stride
