// The CPU kernels of the fused optimizer steps (backends/kernels.h): Adam,
// AdamW and SGD over a range of one parameter's elements, in one TensorIter
// pass that reads the gradient and updates the parameter and its state
// buffers together. src/optim/fused.cpp queues a step's updates and splits
// their elements among threads (Note [Multi-tensor steps] there).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__SSE2__)
#include <immintrin.h>
#elif defined(__aarch64__)
#include <arm_neon.h>
#endif

#include "backends/cpu/capability.h"
#include "backends/kernels.h"
#include "core/tensor_iter.h"

namespace STRIDE_CPU_NAMESPACE {

// Note [Fused steps round like the ops]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The op-by-op path rounds after every op, and inside one op the compiler
// contracts `x + a * y` into a fused multiply-add when the CPU has FMA
// (-march=native with GCC's default -ffp-contract=fast): add_(y, alpha) gives
// fma(alpha, y, x), addcmul_(a, b, value) gives fma(value * a, b, self), and
// addcdiv_, mul_, div, sqrt have nothing to contract. This file turns
// contraction off and writes those fmas explicitly (madd), so every
// intermediate is rounded exactly where the ops round it and the fused step is
// bit-identical to the reference path.
#if defined(__clang__)
#pragma clang fp contract(off)
#else
#pragma GCC push_options
#pragma GCC optimize("fp-contract=off")
#endif

namespace {

// a * b + c, rounded as the elementwise kernels round `c + a * b`.
template <class T>
inline T madd(T a, T b, T c) {
#if defined(__FMA__) || defined(__ARM_FEATURE_FMA)
  if constexpr (std::is_same_v<T, float>) {
    return __builtin_fmaf(a, b, c);  // not std::fma: inlined under this file's options
  } else {
    return __builtin_fma(a, b, c);
  }
#else
  return a * b + c;
#endif
}

// Square roots of x[0, n) in place, correctly rounded as std::sqrt. GCC does
// not vectorise std::sqrt (its errno path is a call), so the SIMD forms are
// written out (256-bit at most: GCC 12's 512-bit sqrt intrinsics trip
// -Wmaybe-uninitialized); every form rounds identically.
template <class T>
inline void sqrt_n(T* x, int64_t n) {
  int64_t i = 0;
  if constexpr (std::is_same_v<T, float>) {
#if defined(__AVX__)
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_sqrt_ps(_mm256_loadu_ps(x + i)));
#elif defined(__SSE2__)
    for (; i + 4 <= n; i += 4) _mm_storeu_ps(x + i, _mm_sqrt_ps(_mm_loadu_ps(x + i)));
#elif defined(__aarch64__)
    for (; i + 4 <= n; i += 4) vst1q_f32(x + i, vsqrtq_f32(vld1q_f32(x + i)));
#endif
  } else {
#if defined(__AVX__)
    for (; i + 4 <= n; i += 4) _mm256_storeu_pd(x + i, _mm256_sqrt_pd(_mm256_loadu_pd(x + i)));
#elif defined(__SSE2__)
    for (; i + 2 <= n; i += 2) _mm_storeu_pd(x + i, _mm_sqrt_pd(_mm_loadu_pd(x + i)));
#elif defined(__aarch64__)
    for (; i + 2 <= n; i += 2) vst1q_f64(x + i, vsqrtq_f64(vld1q_f64(x + i)));
#endif
  }
  for (; i < n; ++i) x[i] = std::sqrt(x[i]);
}

// stride::maximum's kernel: NaN-propagating.
template <class T>
inline T maximum_of(T x, T y) {
  return (x != x) ? x : (y != y) ? y : (x > y ? x : y);
}

template <class F>
void dispatch_bool(bool b, F&& f) {
  if (b)
    f(std::true_type{});
  else
    f(std::false_type{});
}

template <class F>
void dispatch_float(ScalarType t, F&& f) {
  if (t == kFloat32)
    f(float{});
  else
    f(double{});
}

// True when every operand's byte stride is sizeof(T): the loop may index
// plainly (and vectorise); otherwise it walks the strides.
template <class T, int kOperands>
inline bool all_dense(const int64_t* s) {
  for (int k = 0; k < kOperands; ++k) {
    if (s[k] != int64_t(sizeof(T))) return false;
  }
  return true;
}

template <class T>
inline T* as(char* p) {
  return reinterpret_cast<T*>(p);
}

// ---- Adam / AdamW ----

template <class T>
struct AdamConsts {
  T beta1, beta2, c1, c2, weight_decay, decay, bc2_sqrt, eps, neg_step_size;
  bool maximize;
};

// One element, in the order of Adam's op-by-op path (src/optim/adam.cpp), in two
// halves around the square root: the moments (returning the v that is
// normalised by), then the parameter.
template <class T, bool kL2, bool kAmsgrad>
inline T adam_moments(T p, T& m, T& v, T* vmax, T g, const AdamConsts<T>& c) {
  g = c.maximize ? T(-g) : g;
  if constexpr (kL2) g = madd(c.weight_decay, p, g);  // grad.add(param, alpha=wd)
  m = madd(c.c1, g, T(m * c.beta1));                  // exp_avg.mul_(b1).add_(g, 1 - b1)
  v = madd(T(c.c2 * g), g, T(v * c.beta2));           // exp_avg_sq.mul_(b2).addcmul_(g, g, 1 - b2)
  if constexpr (kAmsgrad) {
    *vmax = maximum_of(*vmax, v);  // torch.maximum(max_exp_avg_sq, exp_avg_sq, out=...)
    return *vmax;
  }
  return v;
}

template <class T>
inline T adam_param(T p, T m, T sqrt_v, const AdamConsts<T>& c) {
  const T pd = p * c.decay;                        // AdamW: param.mul_(1 - lr * wd)
  const T denom = T(sqrt_v / c.bc2_sqrt) + c.eps;  // (v.sqrt() / bc2_sqrt).add_(eps)
  return pd + T(c.neg_step_size * m) / denom;      // param.addcdiv_(m, denom, -step_size)
}

// Operands: 0 param, 1 exp_avg, 2 exp_avg_sq, [3 max_exp_avg_sq], last grad.
// Dense operands run in chunks of three vectorised passes (moments, square
// roots, parameters); they are distinct tensors (TensorIter refuses partial
// overlaps), so the pointers may be __restrict. `c` is taken by value so that
// the compiler sees it as loop-invariant.
template <class T, bool kL2, bool kAmsgrad>
void adam_loop(char** data, const int64_t* s, int64_t n, const AdamConsts<T> c) {
  constexpr int kOps = kAmsgrad ? 5 : 4;
  if (all_dense<T, kOps>(s)) {
    T* __restrict p = as<T>(data[0]);
    T* __restrict m = as<T>(data[1]);
    T* __restrict v = as<T>(data[2]);
    T* __restrict vmax = as<T>(data[kAmsgrad ? 3 : 0]);
    const T* __restrict g = as<T>(data[kOps - 1]);
    constexpr int64_t kChunk = 512;
    alignas(64) T root[kChunk];
    for (int64_t start = 0; start < n; start += kChunk) {
      const int64_t len = std::min(kChunk, n - start);
      T* __restrict pc = p + start;
      T* __restrict mc = m + start;
      T* __restrict vc = v + start;
      T* __restrict vmaxc = vmax + start;
      const T* __restrict gc = g + start;
      for (int64_t j = 0; j < len; ++j) {
        root[j] = adam_moments<T, kL2, kAmsgrad>(pc[j], mc[j], vc[j],
                                                 kAmsgrad ? vmaxc + j : nullptr, gc[j], c);
      }
      sqrt_n(root, len);
      for (int64_t j = 0; j < len; ++j) pc[j] = adam_param(pc[j], mc[j], root[j], c);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    T& p = *as<T>(data[0] + i * s[0]);
    T& m = *as<T>(data[1] + i * s[1]);
    T* vmax = kAmsgrad ? as<T>(data[3] + i * s[3]) : nullptr;
    const T vv = adam_moments<T, kL2, kAmsgrad>(p, m, *as<T>(data[2] + i * s[2]), vmax,
                                                *as<T>(data[kOps - 1] + i * s[kOps - 1]), c);
    p = adam_param(p, m, T(std::sqrt(vv)), c);
  }
}

// ---- SGD ----

using Momentum = kernels::SGDMomentum;

template <class T>
struct SGDConsts {
  T weight_decay, momentum, one_minus_dampening, neg_lr;
  bool maximize;
};

// One element, in the order of SGD's op-by-op path (src/optim/sgd.cpp).
template <class T, bool kL2, Momentum kMomentum, bool kNesterov>
inline void sgd_element(T& p, T* buf, T g, const SGDConsts<T>& c) {
  T d = c.maximize ? T(-g) : g;
  if constexpr (kL2) d = madd(c.weight_decay, p, d);  // d_p.add(param, alpha=wd)
  if constexpr (kMomentum != Momentum::None) {
    if constexpr (kMomentum == Momentum::First) {
      *buf = d;  // buf = clone(d_p)
    } else {
      *buf = madd(c.one_minus_dampening, d, T(*buf * c.momentum));  // buf.mul_(m).add_(d_p, 1-damp)
    }
    if constexpr (kNesterov) {
      d = madd(c.momentum, *buf, d);  // d_p.add(buf, alpha=momentum)
    } else {
      d = *buf;
    }
  }
  p = madd(c.neg_lr, d, p);  // param.add_(d_p, alpha=-lr)
}

// Operands: 0 param, [1 momentum_buffer], last grad. As adam_loop.
template <class T, bool kL2, Momentum kMomentum, bool kNesterov>
void sgd_loop(char** data, const int64_t* s, int64_t n, const SGDConsts<T> c) {
  constexpr bool kBuf = kMomentum != Momentum::None;
  constexpr int kOps = kBuf ? 3 : 2;
  if (all_dense<T, kOps>(s)) {
    T* __restrict p = as<T>(data[0]);
    T* __restrict buf = as<T>(data[kBuf ? 1 : 0]);
    const T* __restrict g = as<T>(data[kOps - 1]);
    for (int64_t i = 0; i < n; ++i) {
      sgd_element<T, kL2, kMomentum, kNesterov>(p[i], kBuf ? buf + i : nullptr, g[i], c);
    }
    return;
  }
  for (int64_t i = 0; i < n; ++i) {
    T* buf = kBuf ? as<T>(data[1] + i * s[1]) : nullptr;
    sgd_element<T, kL2, kMomentum, kNesterov>(*as<T>(data[0] + i * s[0]), buf,
                                              *as<T>(data[kOps - 1] + i * s[kOps - 1]), c);
  }
}

void adam_step_kernel(const TensorIter& iter,
                      const kernels::AdamStepScalars& s,
                      int64_t begin,
                      int64_t end) {
  dispatch_float(iter.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const AdamConsts<T> c{
        T(s.beta1),         T(s.beta2), T(s.one_minus_beta1),       T(s.one_minus_beta2),
        T(s.weight_decay),  T(s.decay), T(s.bias_correction2_sqrt), T(s.eps),
        T(s.neg_step_size), s.maximize};
    dispatch_bool(s.l2, [&](auto l2) {
      dispatch_bool(s.amsgrad, [&](auto ams) {
        iter.serial_for_each(
            [&](char** data, const int64_t* strides, int64_t n) {
              adam_loop<T, decltype(l2)::value, decltype(ams)::value>(data, strides, n, c);
            },
            begin, end);
      });
    });
  });
}

void sgd_step_kernel(const TensorIter& iter,
                     const kernels::SGDStepScalars& s,
                     Momentum mode,
                     int64_t begin,
                     int64_t end) {
  dispatch_float(iter.dtype(), [&](auto zero) {
    using T = decltype(zero);
    const SGDConsts<T> c{T(s.weight_decay), T(s.momentum), T(1 - s.dampening), T(-s.lr),
                         s.maximize};
    auto run = [&](auto l2, auto mom, auto nesterov) {
      iter.serial_for_each(
          [&](char** data, const int64_t* strides, int64_t n) {
            sgd_loop<T, decltype(l2)::value, decltype(mom)::value, decltype(nesterov)::value>(
                data, strides, n, c);
          },
          begin, end);
    };
    dispatch_bool(s.weight_decay != 0, [&](auto l2) {
      dispatch_bool(s.nesterov, [&](auto nesterov) {
        switch (mode) {
          case Momentum::None:
            run(l2, std::integral_constant<Momentum, Momentum::None>{}, std::false_type{});
            break;
          case Momentum::First:
            run(l2, std::integral_constant<Momentum, Momentum::First>{}, nesterov);
            break;
          case Momentum::Update:
            run(l2, std::integral_constant<Momentum, Momentum::Update>{}, nesterov);
            break;
        }
      });
    });
  });
}

}  // namespace

STRIDE_REGISTER_CPU_KERNEL(kernels::adam_step, adam_step_kernel);
STRIDE_REGISTER_CPU_KERNEL(kernels::sgd_step, sgd_step_kernel);

#if !defined(__clang__)
#pragma GCC pop_options
#endif

}  // namespace STRIDE_CPU_NAMESPACE
