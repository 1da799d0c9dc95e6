// The kernels ops call through their device's backend: one dispatch stub a
// kernel (Note [Dispatch stubs] in core/dispatch_stub.h). This header is the
// whole contract between the ops above and the backends below it: a stub's
// signature says what the op hands over, and each backend (src/backends/cpu,
// later cuda) registers a function of that signature.
//
// A kernel reads its inputs and writes its outputs, which the op has
// allocated on the kernel's device with the shapes, dtypes and layouts given
// beside each stub; it allocates no outputs, records no autograd and calls no
// op, so it does the same on every device.
#pragma once

#include "backends/attention_args.h"
#include "core/dispatch_stub.h"
#include "stride/tensor.h"

namespace stride::kernels {

// ---- rms_norm (Note [RMSNorm backward] in src/backends/cpu/rms_norm.cpp) ----
// x (R, D) contiguous, weight (D) contiguous or undefined -> y (R, D),
// rstd (R): y = x * rstd * w, rstd = 1 / sqrt(mean(x^2) + eps) per row.
using RmsNormForwardFn =
    void (*)(const Tensor& x, const Tensor& weight, double eps, Tensor& y, Tensor& rstd);
extern detail::DispatchStub<RmsNormForwardFn> rms_norm_forward;
// g, x (R, D) contiguous, weight (D) or undefined, rstd (R) from the forward
// -> grad_x (R, D) and grad_w (D), each written when defined.
using RmsNormBackwardFn = void (*)(const Tensor& g,
                                   const Tensor& x,
                                   const Tensor& weight,
                                   const Tensor& rstd,
                                   Tensor& grad_x,
                                   Tensor& grad_w);
extern detail::DispatchStub<RmsNormBackwardFn> rms_norm_backward;

// ---- scaled_dot_product_attention, rotary_attention (Note [Fused attention]
// in src/backends/cpu/attention.cpp) ----
// With N = the product of the leading (batch) dims, all of one floating
// dtype: q (..., L, E), k (..., S, E), v (..., S, Ev) with a row layout
// (Note [Row layout] in backends/row_layout.h) -> out (..., L, Ev) with a row
// layout, lse (N, L) contiguous, and when defined (the forward keeps them
// for the backward) the probabilities probs (N, L, S) and, with dropout,
// keep (N, L, S) uint8, contiguous.
using AttentionForwardFn = void (*)(const AttentionShape& a,
                                    const Tensor& q,
                                    const Tensor& k,
                                    const Tensor& v,
                                    Tensor& out,
                                    Tensor& lse,
                                    Tensor& probs,
                                    Tensor& keep);
extern detail::DispatchStub<AttentionForwardFn> attention_forward;
// q, k, v and the forward's lse, probs and keep (read when defined), dout
// (..., L, Ev) with a row layout -> dq, dk, dv of q's, k's, v's shapes, with
// a row layout.
using AttentionBackwardFn = void (*)(const AttentionShape& a,
                                     const Tensor& q,
                                     const Tensor& k,
                                     const Tensor& v,
                                     const Tensor& lse,
                                     const Tensor& probs,
                                     const Tensor& keep,
                                     const Tensor& dout,
                                     Tensor& dq,
                                     Tensor& dk,
                                     Tensor& dv);
extern detail::DispatchStub<AttentionBackwardFn> attention_backward;
// -> mask (..., L, S) contiguous, floating: the dropout multipliers M of
// Note [Fused attention] for a.dropout_p, a.key and a.base.
using AttentionDropoutMaskFn = void (*)(const AttentionShape& a, Tensor& mask);
extern detail::DispatchStub<AttentionDropoutMaskFn> attention_dropout_mask;

}  // namespace stride::kernels
