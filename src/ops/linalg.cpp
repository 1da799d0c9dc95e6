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
#include "ops/autocast_internal.h"
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
        // Rounded float32 factors multiply as float32 ones (Note [Autocast on
        // the float32 GEMM]).
        return batched_matmul(f[0], f[1], detail::op_name(op),
                              f.lowered() && !f.rounded_in_float32());
      },
      [&](const Tensor&, const AutocastOperands& f) {
        using autograd::SavedTensor;
        const bool need_a = autograd::requires_grad(a), need_b = autograd::requires_grad(b);
        return [sa = need_b ? SavedTensor::input(f[0]) : SavedTensor(),
                sb = need_a ? SavedTensor::input(f[1]) : SavedTensor(), da = a.dtype(),
                db = b.dtype(), op, mixed = f.lowered(),
                in_float32 = f.rounded_in_float32()](const autograd::Grads& gs) {
          // Rounded float32 factors: the gradient's rounding, once, is all
          // that is left to do, unless the backward is recorded.
          const bool round_here = in_float32 && !GradMode::is_enabled();
          AutocastGuard precision(mixed && !round_here);
          const Tensor g = round_here ? detail::autocast_round(gs[0], kFloat32) : gs[0];
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

// A coefficient in the result's dtype, as PyTorch converts it: truncated
// for an integer result (0.6 is 0), as is for a floating one.
static Scalar coefficient_in(const Scalar& c, ScalarType result) {
  return is_floating_point(result) || c.is_integral() ? c : Scalar(int64_t(c.to_double()));
}

// beta * input + alpha * product, where beta = 0 ignores input (NaN in it
// included), as PyTorch's; for a bool result, (beta and input) or (alpha
// and product).
static Tensor scaled_sum(const Tensor& input,
                         const Tensor& product,
                         const Scalar& beta_in,
                         const Scalar& alpha_in) {
  const ScalarType rt = promote_types(input.dtype(), product.dtype());
  if (rt == kBool) {
    const Tensor scaled = alpha_in.to_double() != 0.0 ? product : zeros_like(product);
    return beta_in.to_double() != 0.0 ? logical_or(input, scaled)
                                      : logical_or(scaled, zeros_like(input));
  }
  const Scalar beta = coefficient_in(beta_in, rt), alpha = coefficient_in(alpha_in, rt);
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

Tensor addmv(const Tensor& input,
             const Tensor& m,
             const Tensor& v,
             const Scalar& beta,
             const Scalar& alpha) {
  detail::check_dtype_rule(Op::addmv, input);
  return scaled_sum(input, mv(m, v), beta, alpha);
}

Tensor addr(const Tensor& input,
            const Tensor& v1,
            const Tensor& v2,
            const Scalar& beta,
            const Scalar& alpha) {
  detail::check_dtype_rule(Op::addr, input);
  return scaled_sum(input, outer(v1, v2), beta, alpha);
}

Tensor addbmm(const Tensor& input,
              const Tensor& b1,
              const Tensor& b2,
              const Scalar& beta,
              const Scalar& alpha) {
  detail::check_dtype_rule(Op::addbmm, input);
  return scaled_sum(input, bmm(b1, b2).sum({0}), beta, alpha);
}

Tensor chain_matmul(const std::vector<Tensor>& matrices) {
  STRIDE_CHECK(!matrices.empty(), ValueError, "[chain_matmul] needs at least one matrix.");
  detail::check_dtype_rule(Op::chain_matmul, matrices[0]);
  Tensor r = matrices[0];
  for (size_t i = 1; i < matrices.size(); ++i) r = mm(r, matrices[i]);
  return matrices.size() == 1 ? r.clone() : r;
}

Tensor cdist(const Tensor& x1, const Tensor& x2, double p) {
  detail::check_dtype_rule(Op::cdist, x1);
  STRIDE_CHECK(x1.dim() >= 2 && x2.dim() >= 2 && x1.size(-1) == x2.size(-1), ShapeError,
               "[cdist] expects (..., P, M) and (..., R, M) with one M; got ",
               shape_str(x1.sizes()), " and ", shape_str(x2.sizes()), ".");
  STRIDE_CHECK(p >= 0, ValueError, "[cdist] takes p >= 0; got ", p, ".");
  return norm(x1.unsqueeze(-2) - x2.unsqueeze(-3), p, {-1});
}

Tensor dist(const Tensor& a, const Tensor& b, double p) {
  detail::check_dtype_rule(Op::dist, a);
  return norm(a - b, p);
}

Tensor dot(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::dot, a);
  STRIDE_CHECK(a.dim() == 1 && b.dim() == 1 && a.numel() == b.numel(), ShapeError,
               "[dot] expects two 1-d tensors of one size; got ", shape_str(a.sizes()), " and ",
               shape_str(b.sizes()), ".");
  STRIDE_CHECK(a.dtype() == b.dtype(), DTypeError, "[dot] expects two tensors of one dtype; got ",
               to_string(a.dtype()), " and ", to_string(b.dtype()), ". Convert one with .to().");
  return matmul(a, b);
}

Tensor mv(const Tensor& m, const Tensor& v) {
  detail::check_dtype_rule(Op::mv, m);
  STRIDE_CHECK(m.dim() == 2 && v.dim() == 1 && m.size(1) == v.numel(), ShapeError,
               "[mv] expects a matrix (n, k) and a vector (k); got ", shape_str(m.sizes()), " and ",
               shape_str(v.sizes()), ".");
  return matmul(m, v);
}

Tensor inner(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::inner, a);
  if (a.dim() == 0 || b.dim() == 0) return a * b;
  STRIDE_CHECK(a.size(-1) == b.size(-1), ShapeError,
               "[inner] expects the last dims to match; got shapes ", shape_str(a.sizes()), " and ",
               shape_str(b.sizes()), ".");
  return tensordot(a, b, {a.dim() - 1}, {b.dim() - 1});
}

Tensor tensordot(const Tensor& a_in, const Tensor& b_in, IntArrayRef dims_a, IntArrayRef dims_b) {
  detail::check_dtype_rule(Op::tensordot, a_in);
  STRIDE_CHECK(dims_a.size() == dims_b.size(), ValueError, "[tensordot] got ", dims_a.size(),
               " dims of a and ", dims_b.size(), " of b; pass as many of each.");
  // A contracted dim of size 1 against one of size n, as PyTorch allows:
  // the other side summed over that dim first.
  Tensor a = a_in, b = b_in;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t da = wrap_dim(dims_a[i], a.dim(), "tensordot");
    const int64_t db = wrap_dim(dims_b[i], b.dim(), "tensordot");
    if (a.size(da) == 1 && b.size(db) != 1) b = b.sum({db}, true);
    if (b.size(db) == 1 && a.size(da) != 1) a = a.sum({da}, true);
  }
  std::vector<bool> contracted_a(size_t(a.dim()), false);
  std::vector<bool> contracted_b(size_t(b.dim()), false);
  std::vector<int64_t> order_a;  // a's free dims, then its contracted ones
  std::vector<int64_t> order_b;  // b's contracted dims, then its free ones
  int64_t inner_size = 1;
  for (size_t i = 0; i < dims_a.size(); ++i) {
    const int64_t da = wrap_dim(dims_a[i], a.dim(), "tensordot");
    const int64_t db = wrap_dim(dims_b[i], b.dim(), "tensordot");
    STRIDE_CHECK(a.size(da) == b.size(db), ShapeError, "[tensordot] contracts dim ", da,
                 " of a (size ", a.size(da), ") with dim ", db, " of b (size ", b.size(db),
                 "); the sizes must match.");
    contracted_a[size_t(da)] = true;
    contracted_b[size_t(db)] = true;
    order_b.push_back(db);
    inner_size *= a.size(da);
  }
  std::vector<int64_t> out_shape;
  int64_t rows = 1;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (contracted_a[size_t(d)]) continue;
    order_a.push_back(d);
    out_shape.push_back(a.size(d));
    rows *= a.size(d);
  }
  for (size_t i = 0; i < dims_a.size(); ++i)
    order_a.push_back(wrap_dim(dims_a[i], a.dim(), "tensordot"));
  int64_t cols = 1;
  for (int64_t d = 0; d < b.dim(); ++d) {
    if (contracted_b[size_t(d)]) continue;
    order_b.push_back(d);
    out_shape.push_back(b.size(d));
    cols *= b.size(d);
  }
  const Tensor lhs = a.permute(order_a).reshape({rows, inner_size});
  const Tensor rhs = b.permute(order_b).reshape({inner_size, cols});
  return mm(lhs, rhs).view(out_shape);
}

Tensor tensordot(const Tensor& a, const Tensor& b, int64_t dims) {
  detail::check_dtype_rule(Op::tensordot, a);
  STRIDE_CHECK(dims >= 0 && dims <= a.dim() && dims <= b.dim(), ValueError,
               "[tensordot] cannot contract ", dims, " dims of tensors of ", a.dim(), " and ",
               b.dim(), " dims.");
  std::vector<int64_t> dims_a;
  std::vector<int64_t> dims_b;
  for (int64_t i = 0; i < dims; ++i) {
    dims_a.push_back(a.dim() - dims + i);
    dims_b.push_back(i);
  }
  return tensordot(a, b, dims_a, dims_b);
}

Tensor kron(const Tensor& a, const Tensor& b) {
  detail::check_dtype_rule(Op::kron, a);
  const int64_t n = std::max(a.dim(), b.dim());
  // a viewed as (a0, 1, a1, 1, ...) times b as (1, b0, 1, b1, ...): element
  // (i, j) of each pair of dims lands at i * b_k + j once they are merged.
  std::vector<int64_t> spread_a;
  std::vector<int64_t> spread_b;
  std::vector<int64_t> merged;
  for (int64_t k = 0; k < n; ++k) {
    const int64_t sa = k < n - a.dim() ? 1 : a.size(k - (n - a.dim()));
    const int64_t sb = k < n - b.dim() ? 1 : b.size(k - (n - b.dim()));
    spread_a.insert(spread_a.end(), {sa, 1});
    spread_b.insert(spread_b.end(), {1, sb});
    merged.push_back(sa * sb);
  }
  return (a.reshape(spread_a) * b.reshape(spread_b)).reshape(merged);
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
