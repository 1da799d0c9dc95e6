// The dispatch stubs of backends/kernels.h, each defined from its one line
// in STRIDE_KERNEL_STUBS; each backend registers its kernels in its own
// files.
#include "backends/kernels.h"

namespace stride::kernels {

#define STRIDE_DEFINE_STUB(stub, Fn, op) constinit detail::DispatchStub<Fn> stub(op);
#define STRIDE_DEFINE_LISTED_STUB(name, ...) STRIDE_DEFINE_STUB(name, ElementwiseFn, #name)
STRIDE_KERNEL_STUBS(STRIDE_DEFINE_STUB)
STRIDE_LISTED_ELEMENTWISE_OPS(STRIDE_DEFINE_LISTED_STUB)
STRIDE_SPECIAL_ELEMENTWISE_OPS(STRIDE_DEFINE_LISTED_STUB)
#undef STRIDE_DEFINE_LISTED_STUB
#undef STRIDE_DEFINE_STUB

}  // namespace stride::kernels
