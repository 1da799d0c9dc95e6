// The dispatch stubs of backends/kernels.h; each backend registers its
// kernels in its own files.
#include "backends/kernels.h"

namespace stride::kernels {

constinit detail::DispatchStub<RmsNormForwardFn> rms_norm_forward("rms_norm");
constinit detail::DispatchStub<RmsNormBackwardFn> rms_norm_backward("rms_norm_backward");

}  // namespace stride::kernels

// ---- fused optimizer steps ----

namespace stride::kernels {

constinit detail::DispatchStub<AdamStepFn> adam_step("adam_step");
constinit detail::DispatchStub<SGDStepFn> sgd_step("sgd_step");

}  // namespace stride::kernels
