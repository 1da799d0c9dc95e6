// Weights stored in a packed format for inference (include/stride/weight_format.h,
// Note [Weight formats] in src/backends/cpu/packed_linear.cpp): packing,
// unpacking, and the linear layer over a packed weight.
#include <string>

#include "backends/kernels.h"
#include "core/check.h"
#include "ops/apply.h"
#include "stride/autograd.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using ::stride::detail::Op;

// The stored weight of `format` for `out_features` x `in_features` weights:
// its dtype and shape, else a ShapeError or DTypeError naming `op`.
void check_packed(const Tensor& packed, WeightFormat format, int64_t in_features, const char* op) {
  STRIDE_CHECK(!is_blocked(format) || in_features % kWeightBlock == 0, ShapeError, "[", op, "] ",
               to_string(format), " weights are blocks of ", kWeightBlock,
               " along a row; in_features ", in_features, " is not a multiple of ", kWeightBlock,
               ".");
  STRIDE_CHECK(packed.dtype() == storage_dtype(format), DTypeError, "[", op, "] a ",
               to_string(format), " weight is stored as ", to_string(storage_dtype(format)),
               "; got ", to_string(packed.dtype()),
               ". Hint: make it with pack_weight(weight, format).");
  const int64_t row = stored_row_size(format, in_features);
  STRIDE_CHECK(packed.dim() == 2 && packed.size(1) == row, ShapeError, "[", op, "] a ",
               to_string(format), " weight of ", in_features, " inputs is stored as (out, ", row,
               "); got ", shape_str(packed.sizes()), ".");
}

}  // namespace

Tensor pack_weight(const Tensor& weight, WeightFormat format) {
  return ::stride::detail::apply_without_grad(Op::pack_weight, {&weight}, [&] {
    STRIDE_CHECK(weight.dim() == 2, ShapeError, "[pack_weight] expected a weight (out, in); got ",
                 shape_str(weight.sizes()), ".");
    const int64_t N = weight.size(0), K = weight.size(1);
    STRIDE_CHECK(!is_blocked(format) || K % kWeightBlock == 0, ShapeError, "[pack_weight] ",
                 to_string(format), " weights are blocks of ", kWeightBlock,
                 " along a row; in_features ", K, " is not a multiple of ", kWeightBlock,
                 ". Hint: keep this layer in float32 or bf16.");
    const Tensor w = weight.to(kFloat32).contiguous();
    Tensor out =
        empty({N, stored_row_size(format, K)}, weight.options().dtype(storage_dtype(format)));
    kernels::pack_weight(weight.device(), w, format, out);
    return out;
  });
}

Tensor unpack_weight(const Tensor& packed, WeightFormat format, int64_t in_features) {
  return ::stride::detail::apply_without_grad(Op::unpack_weight, {&packed}, [&] {
    check_packed(packed, format, in_features, "unpack_weight");
    Tensor out = empty({packed.size(0), in_features}, packed.options().dtype(kFloat32));
    kernels::unpack_weight(packed.device(), packed.contiguous(), format, out);
    return out;
  });
}

Tensor linear_packed(const Tensor& x,
                     const Tensor& packed,
                     WeightFormat format,
                     int64_t in_features) {
  check_packed(packed, format, in_features, "linear_packed");
  STRIDE_CHECK(x.dim() >= 1 && x.size(-1) == in_features, ShapeError,
               "[linear_packed] expected x (..., ", in_features, "); got x ", shape_str(x.sizes()),
               ". Hint: the last dim of x is the input feature dim.");
  const int64_t N = packed.size(0);
  auto forward = [&] {
    DimVector shape = x.sizes().dims();
    shape.back() = N;
    // The kernel multiplies float32 rows; float64 (gradcheck) multiplies the
    // unpacked weight in float64, and 16-bit inputs are widened and rounded
    // back, as linear's 16-bit products are summed in float32.
    if (x.dtype() == kFloat64) {
      return matmul(x, unpack_weight(packed, format, in_features).to(kFloat64).t());
    }
    const Tensor x2 = x.to(kFloat32).reshape({-1, in_features}).contiguous();
    Tensor y = empty({x2.size(0), N}, x2.options());
    kernels::linear_packed(x.device(), x2, packed.contiguous(), format, y);
    return y.view(shape).to(x.dtype());
  };
  auto backward = [&](const Tensor&) {
    return [packed, format, in_features, dtype = x.dtype()](const autograd::Grads& gs) {
      // dx = dy @ w: the weight unpacked, in the gradient's dtype.
      const Tensor w = unpack_weight(packed, format, in_features).to(gs[0].dtype());
      return autograd::Grads{matmul(gs[0], w).to(dtype), Tensor()};
    };
  };
  return ::stride::detail::apply(Op::linear_packed, {&x, &packed}, forward, backward);
}

}  // namespace stride::nn::functional
