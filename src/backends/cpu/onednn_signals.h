// Note [Signals and oneDNN's kernels]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// oneDNN's generated float32 GEMM kernels (AVX2 and AVX-512, in the releases
// before 3.11.2, Debian 12's included) point the stack pointer into a heap
// buffer while they run. A signal handled on that thread then pushes its
// frame into the heap, which glibc later finds corrupted (oneDNN 3.11.2
// keeps rsp instead). Handlers are common: `stride train`
// stops on Ctrl-C, SIGTERM and SIGHUP; Python raises KeyboardInterrupt; a
// sampling profiler interrupts on a timer. So each call into oneDNN's
// kernels runs with the calling thread's signals blocked: a signal for the
// process goes to a thread outside oneDNN, or waits until the call returns.
// oneDNN runs on the calling thread only (Note [Deterministic GEMM]), so no
// other thread is inside its kernels meanwhile. The cost is two system
// calls (about 0.3 us) per call, which only GEMMs past stride's own small
// kernels reach. tests/ops/matmul_signals_test.cpp multiplies under a
// 50-microsecond timer.
#pragma once

#include <pthread.h>
#include <signal.h>

#include "backends/cpu/capability.h"

namespace STRIDE_CPU_NAMESPACE {

class SignalsDeferred {
 public:
  SignalsDeferred() {
    sigset_t all;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved_);
  }
  ~SignalsDeferred() { pthread_sigmask(SIG_SETMASK, &saved_, nullptr); }
  SignalsDeferred(const SignalsDeferred&) = delete;
  SignalsDeferred& operator=(const SignalsDeferred&) = delete;

 private:
  sigset_t saved_;
};

}  // namespace STRIDE_CPU_NAMESPACE
