// The dispatch stubs of backends/kernels.h; each backend registers its
// kernels in its own files.
#include "backends/kernels.h"

namespace stride::kernels {

constinit detail::DispatchStub<RmsNormForwardFn> rms_norm_forward("rms_norm");
constinit detail::DispatchStub<RmsNormBackwardFn> rms_norm_backward("rms_norm_backward");

constinit detail::DispatchStub<SwigluForwardFn> swiglu_forward("swiglu");
constinit detail::DispatchStub<SwigluBackwardFn> swiglu_backward("swiglu_backward");

constinit detail::DispatchStub<CrossEntropyForwardFn> cross_entropy_forward("cross_entropy");
constinit detail::DispatchStub<CrossEntropyBackwardFn> cross_entropy_backward(
    "cross_entropy_backward");

constinit detail::DispatchStub<LinearGroupsForwardFn> linear_groups_forward("linear_groups");
constinit detail::DispatchStub<LinearGroupsBackwardFn> linear_groups_backward(
    "linear_groups_backward");

constinit detail::DispatchStub<AttentionForwardFn> attention_forward(
    "scaled_dot_product_attention");
constinit detail::DispatchStub<AttentionBackwardFn> attention_backward(
    "scaled_dot_product_attention_backward");
constinit detail::DispatchStub<AttentionDropoutMaskFn> attention_dropout_mask(
    "scaled_dot_product_attention");

constinit detail::DispatchStub<RotaryEmbeddingFn> rotary_embedding("rotary_embedding");

}  // namespace stride::kernels

// ---- fused optimizer steps ----

namespace stride::kernels {

constinit detail::DispatchStub<AdamStepFn> adam_step("adam_step");
constinit detail::DispatchStub<SGDStepFn> sgd_step("sgd_step");

constinit detail::DispatchStub<SoftmaxRowsFn> softmax_rows("softmax");

constinit detail::DispatchStub<RoundToBfloat16Fn> round_to_bfloat16("autocast_bf16");

constinit detail::DispatchStub<UniformFillFn> uniform_fill("uniform_");
constinit detail::DispatchStub<NormalFillFn> normal_fill("normal_");
constinit detail::DispatchStub<RandintFillFn> randint_fill("random_");

constinit detail::DispatchStub<FillFn> fill("fill_");

constinit detail::DispatchStub<BatchedGemmFn> batched_gemm("matmul");

constinit detail::DispatchStub<ReduceSumFn> reduce_sum("sum");
constinit detail::DispatchStub<ReduceExtremeFn> reduce_extreme("amax/amin");
constinit detail::DispatchStub<ReduceExtremeIndexFn> reduce_extreme_index("max/min");

constinit detail::DispatchStub<CopyFn> copy("copy_");

constinit detail::DispatchStub<GatherFn> gather("gather");
constinit detail::DispatchStub<ScatterAddFn> scatter_add("scatter_add");

}  // namespace stride::kernels
