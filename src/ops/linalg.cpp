// matmul, mm, bmm. GEMM needs each matrix with one unit stride, so operands
// are passed as they are when a row or column stride is 1 (a transposed
// weight costs no copy) and made contiguous explicitly otherwise. Results are
// computed into a contiguous buffer; a strided out= receives them by copy_,
// the one strided copy kernel.
//
// Under autocast (include/stride/autocast.h) the apply path rounds the
// float32 factors to bfloat16 (Note [Autocast casts] in ops/apply.h) and the
// "mixed" GEMM multiplies bfloat16 operands into a float32 result.
#include "backends/kernels.h"
#include "core/check.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"
#include "stride/autocast.h"

namespace stride {

using detail::Op;

namespace {

// How a (rows, cols) matrix with strides (s0, s1) can go to the GEMM as it
// is; none when no orientation has a unit stride and non-overlapping rows,
// and the caller then makes it contiguous.
std::optional<kernels::GemmOperand> gemm_layout(int64_t rows,
                                                int64_t cols,
                                                int64_t s0,
                                                int64_t s1) {
  if (cols == 1) s1 = 1;  // a unit dim's stride is arbitrary
  if (rows == 1) s0 = std::max<int64_t>(cols, 1);
  if (s1 == 1 && s0 >= std::max<int64_t>(cols, 1)) return kernels::GemmOperand{false, s0};
  if (rows == 1 && cols > 1 && s1 != 1) return std::nullopt;
  if (s0 == 1 && s1 >= std::max<int64_t>(rows, 1)) return kernels::GemmOperand{true, s1};
  return std::nullopt;
}

// (B, n, k) @ (B, k, m) -> new contiguous (B, n, m); a or b may have batch
// stride 0 (broadcast). mixed: float32/bfloat16 operands, float32 result
// computed by the bf16 GEMM (autocast).
Tensor batched_matmul(Tensor a, Tensor b, const char* op, bool mixed) {
  const int64_t batch = a.size(0), n = a.size(1), m = b.size(2);
  auto layout = [](Tensor& t) {
    auto l = gemm_layout(t.size(1), t.size(2), t.stride(1), t.stride(2));
    if (!l) {
      t = t.contiguous();
      l = gemm_layout(t.size(1), t.size(2), t.stride(1), t.stride(2));
    }
    return *l;
  };
  const kernels::GemmOperand la = layout(a), lb = layout(b);
  Tensor c = empty({batch, n, m}, a.options().dtype(mixed ? kFloat32 : a.dtype()));
  if (c.numel() == 0) return c;
  const int64_t sa = a.size(0) == 1 ? 0 : a.stride(0), sb = b.size(0) == 1 ? 0 : b.stride(0);
  kernels::batched_gemm(c.device(), a, la, sa, b, lb, sb, mixed, op, c);
  return c;
}

// batched_matmul with autograd: dA = dC @ B^T, dB = A^T @ dC (themselves
// recorded, so double backward works). Under autocast the product is
// lowered (Note [Autocast casts]): it multiplies and saves its factors'
// bfloat16 casts, and its gradients come out float32; a bfloat16 operand's
// gradient is returned in its own dtype.
Tensor batched_matmul_op(const Tensor& a, const Tensor& b, Op op) {
  using detail::AutocastOperands;
  return detail::apply(
      op, {&a, &b},
      [&](const AutocastOperands& f) {
        return batched_matmul(f[0], f[1], detail::op_name(op), f.lowered());
      },
      [&](const Tensor&, const AutocastOperands& f) {
        using autograd::SavedTensor;
        const bool need_a = autograd::requires_grad(a), need_b = autograd::requires_grad(b);
        return [sa = need_b ? SavedTensor::input(f[0]) : SavedTensor(),
                sb = need_a ? SavedTensor::input(f[1]) : SavedTensor(), da = a.dtype(),
                db = b.dtype(), op, mixed = f.lowered()](const autograd::Grads& gs) {
          AutocastGuard precision(mixed);
          const Tensor& g = gs[0];
          Tensor ga, gb;
          if (sb.defined()) ga = batched_matmul_op(g, sb.get().transpose(1, 2), op).to(da);
          if (sa.defined()) gb = batched_matmul_op(sa.get().transpose(1, 2), g, op).to(db);
          return autograd::Grads{ga, gb};
        };
      });
}

void check_operands(const Tensor& a, const Tensor& b, const char* op, bool mixed) {
  STRIDE_CHECK(a.defined() && b.defined(), ValueError, "[", op, "] an operand is undefined.");
  STRIDE_CHECK(a.dim() >= 1 && b.dim() >= 1, ShapeError, "[", op,
               "] both operands need at least 1 dim; got ", shape_str(a.sizes()), " and ",
               shape_str(b.sizes()), ".");
  STRIDE_CHECK(a.dtype() == b.dtype() || mixed, DTypeError, "[", op,
               "] operands must share a dtype; got ", to_string(a.dtype()), " and ",
               to_string(b.dtype()), ". Hint: convert one with .to(dtype).");
  detail::common_device(op, {&a, &b});
}

Tensor matmul_impl(const Tensor& a_in, const Tensor& b_in, Op id) {
  const char* op = detail::op_name(id);
  const bool mixed = detail::autocast_lowers(id, &a_in, &b_in);
  check_operands(a_in, b_in, op, mixed);
  if (!mixed && detail::is_16bit(a_in.dtype())) {
    return matmul_impl(a_in.to(kFloat32), b_in.to(kFloat32), id).to(a_in.dtype());
  }
  const bool a_vec = a_in.dim() == 1, b_vec = b_in.dim() == 1;
  Tensor a = a_vec ? a_in.unsqueeze(0) : a_in;
  Tensor b = b_vec ? b_in.unsqueeze(-1) : b_in;
  const int64_t k = a.size(-1);
  STRIDE_CHECK(k == b.size(-2), ShapeError, "[", op, "] cannot multiply ", shape_str(a_in.sizes()),
               " by ", shape_str(b_in.sizes()), ": inner dimensions ", k, " and ", b.size(-2),
               " differ.");
  const int64_t n = a.size(-2), m = b.size(-1);
  IntArrayRef abatch(a.sizes().data(), size_t(a.dim() - 2));
  IntArrayRef bbatch(b.sizes().data(), size_t(b.dim() - 2));
  DimVector batch = broadcast_shapes(abatch, bbatch, op);
  const int64_t nbatch = numel_of(batch);

  Tensor c;
  if (b.dim() == 2 && a.dim() > 2) {
    // (..., n, k) @ (k, m): fold the batch into rows when a allows it.
    Tensor a2 = a.reshape({nbatch * n, k});
    c = batched_matmul_op(a2.unsqueeze(0), b.unsqueeze(0), id);
  } else {
    DimVector ashape = batch, bshape = batch;
    ashape.push_back(n);
    ashape.push_back(k);
    bshape.push_back(k);
    bshape.push_back(m);
    Tensor a3 = a.expand(ashape).reshape({nbatch, n, k});
    Tensor b3 = b.dim() == 2 ? b.unsqueeze(0) : b.expand(bshape).reshape({nbatch, k, m});
    if (b3.size(0) == 1 && nbatch != 1) b3 = b3.expand({nbatch, k, m});
    c = batched_matmul_op(a3, b3, id);
  }
  DimVector out_shape = batch;
  if (!a_vec) out_shape.push_back(n);
  if (!b_vec) out_shape.push_back(m);
  return c.sizes() == IntArrayRef(out_shape) ? c : c.view(out_shape);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  return matmul_impl(a, b, Op::matmul);
}

Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  autograd::check_no_grad_out("matmul", {&a, &b});
  Tensor r = matmul(a, b);
  return detail::assign_result(out, r, r.dtype(), "matmul");
}

Tensor mm(const Tensor& a, const Tensor& b) {
  STRIDE_CHECK(a.dim() == 2 && b.dim() == 2, ShapeError, "[mm] expects two 2-d tensors; got ",
               shape_str(a.sizes()), " and ", shape_str(b.sizes()), ". Hint: use matmul.");
  return matmul_impl(a, b, Op::mm);
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  STRIDE_CHECK(a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0), ShapeError,
               "[bmm] expects (B, n, k) and (B, k, m) with one B; got ", shape_str(a.sizes()),
               " and ", shape_str(b.sizes()), ".");
  return matmul_impl(a, b, Op::bmm);
}

Tensor outer(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::outer, a);
  STRIDE_CHECK(a.dim() == 1 && b.dim() == 1, ShapeError, "[outer] expects two 1-d tensors; got ",
               shape_str(a.sizes()), " and ", shape_str(b.sizes()), ".");
  return a.unsqueeze(1) * b.unsqueeze(0);
}

// beta * input + alpha * product, where beta = 0 ignores input (NaN in it
// included), as PyTorch's.
static Tensor scaled_sum(const Tensor& input,
                         const Tensor& product,
                         const Scalar& beta,
                         const Scalar& alpha) {
  const Tensor scaled = alpha.to_double() == 1.0 ? product : product * alpha;
  if (beta.to_double() == 0.0) return scaled + zeros_like(input);
  return (beta.to_double() == 1.0 ? input : input * beta) + scaled;
}

Tensor addmm(const Tensor& input,
             const Tensor& m1,
             const Tensor& m2,
             const Scalar& beta,
             const Scalar& alpha) {
  detail::check_dtype_rule(Op::addmm, input);
  return scaled_sum(input, mm(m1, m2), beta, alpha);
}

Tensor baddbmm(const Tensor& input,
               const Tensor& b1,
               const Tensor& b2,
               const Scalar& beta,
               const Scalar& alpha) {
  detail::check_dtype_rule(Op::baddbmm, input);
  return scaled_sum(input, bmm(b1, b2), beta, alpha);
}

Tensor Tensor::outer(const Tensor& other) const {
  return stride::outer(*this, other);
}
Tensor Tensor::matmul(const Tensor& other) const {
  return stride::matmul(*this, other);
}
Tensor Tensor::mm(const Tensor& other) const {
  return stride::mm(*this, other);
}
Tensor Tensor::bmm(const Tensor& other) const {
  return stride::bmm(*this, other);
}

}  // namespace stride
