// The CPU level the tests run at (Note [CPU capabilities] in
// src/backends/cpu/capability.h): ctest runs the suite once per level the
// machine has.
#pragma once

#include "stride/cpu_capability.h"

namespace stride::testing {

// Whether the CPU kernels in use contract multiply-adds into FMAs: every
// level but x86-64's baseline, which has no FMA instruction.
inline bool kernels_use_fma() {
#if defined(__x86_64__)
  return cpu_capability() != CpuCapability::Default;
#else
  return true;
#endif
}

// How much wider a float32 error bound measured with FMA is without it
// (each multiply-add rounds twice): 1 with FMA, else `slack`.
inline double fma_slack(double slack) {
  return kernels_use_fma() ? 1.0 : slack;
}

}  // namespace stride::testing
