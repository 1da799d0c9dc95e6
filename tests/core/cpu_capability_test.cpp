// The CPU level in use (include/stride/cpu_capability.h) and how the dispatch
// stubs pick a kernel per level (Note [CPU capabilities] in
// src/backends/cpu/capability.h). ctest runs this file again under
// STRIDE_CPU_CAPABILITY forcing each level below the machine's best
// (cpu_level.<level>), where FollowsTheEnvironment checks the forcing.
#include "stride/cpu_capability.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "core/dispatch_stub.h"

namespace stride {
namespace {

constexpr CpuCapability kAll[] = {CpuCapability::Default, CpuCapability::AVX2,
                                  CpuCapability::AVX512};

TEST(CpuCapability, RunsACompiledLevelTheCpuSupports) {
  EXPECT_TRUE(cpu_capability_compiled(CpuCapability::Default));
  EXPECT_TRUE(cpu_capability_compiled(cpu_capability()));
  EXPECT_LE(cpu_capability(), cpu_capability_supported());
#if defined(__x86_64__)
  // Every x86-64 build compiles all three (cmake/cpu_capabilities.cmake).
  for (CpuCapability level : kAll) EXPECT_TRUE(cpu_capability_compiled(level));
#endif
}

TEST(CpuCapability, NamesAreTheEnvironmentsSpellings) {
  EXPECT_STREQ(cpu_capability_name(CpuCapability::Default), "default");
  EXPECT_STREQ(cpu_capability_name(CpuCapability::AVX2), "avx2");
  EXPECT_STREQ(cpu_capability_name(CpuCapability::AVX512), "avx512");
  const std::string summary = cpu_capability_summary();
  EXPECT_EQ(summary.rfind(cpu_capability_name(cpu_capability()), 0), 0u) << summary;
}

TEST(CpuCapability, FollowsTheEnvironment) {
  const char* env = std::getenv("STRIDE_CPU_CAPABILITY");
  if (env == nullptr || *env == '\0') {
    // Unforced: the best level the CPU has and the build compiled.
    for (CpuCapability level : kAll) {
      if (level <= cpu_capability_supported() && cpu_capability_compiled(level)) {
        EXPECT_GE(cpu_capability(), level);
      }
    }
    return;
  }
  for (CpuCapability level : kAll) {
    if (std::strcmp(env, cpu_capability_name(level)) == 0 && level <= cpu_capability_supported() &&
        cpu_capability_compiled(level)) {
      EXPECT_EQ(cpu_capability(), level);
      // The summary says the level was forced when it is below the CPU's.
      const std::string summary = cpu_capability_summary();
      const bool says_forced = summary.find("STRIDE_CPU_CAPABILITY=") != std::string::npos;
      EXPECT_EQ(says_forced, level < cpu_capability_supported()) << summary;
      return;
    }
  }
  ADD_FAILURE() << "STRIDE_CPU_CAPABILITY=" << env << " is not a level this machine runs";
}

int kernel_default() {
  return 0;
}
int kernel_avx2() {
  return 1;
}
int kernel_avx512() {
  return 2;
}

// The best level at or below the one in use, whatever the order in which the
// library's files register (static initialisation has none).
TEST(CpuCapability, StubKeepsTheBestLevelInUse) {
  const int expected = int(cpu_capability());
  detail::DispatchStub<int (*)()> highest_first("test_stub");
  highest_first.register_cpu_kernel(CpuCapability::AVX512, kernel_avx512);
  highest_first.register_cpu_kernel(CpuCapability::AVX2, kernel_avx2);
  highest_first.register_cpu_kernel(CpuCapability::Default, kernel_default);
  EXPECT_EQ(highest_first(Device(kCPU)), expected);

  detail::DispatchStub<int (*)()> lowest_first("test_stub");
  lowest_first.register_cpu_kernel(CpuCapability::Default, kernel_default);
  lowest_first.register_cpu_kernel(CpuCapability::AVX2, kernel_avx2);
  lowest_first.register_cpu_kernel(CpuCapability::AVX512, kernel_avx512);
  EXPECT_EQ(lowest_first(Device(kCPU)), expected);

  // A level above the one in use never runs, even when it is the only one
  // beside the baseline.
  detail::DispatchStub<int (*)()> sparse("test_stub");
  sparse.register_cpu_kernel(CpuCapability::AVX512, kernel_avx512);
  sparse.register_cpu_kernel(CpuCapability::Default, kernel_default);
  EXPECT_EQ(sparse(Device(kCPU)), cpu_capability() == CpuCapability::AVX512 ? 2 : 0);
}

}  // namespace
}  // namespace stride
