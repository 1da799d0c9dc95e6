// matmul, mm, bmm. GEMM needs each matrix with one unit stride, so operands
// are passed as they are when a row or column stride is 1 (a transposed
// weight costs no copy) and made contiguous explicitly otherwise. Results are
// computed into a contiguous buffer; a strided out= receives them by copy_
// (STYLE.md §3.3 rule 3).
#include "autograd/node.h"
#include "backends/cpu/blas.h"
#include "core/check.h"
#include "core/dispatch.h"
#include "ops/elementwise_common.h"
#include "stride/parallel.h"
#include "stride/profiler.h"

namespace stride {

namespace {

// How a (rows, cols) matrix with strides (s0, s1) is handed to a row-major
// GEMM: transposed or not, with its leading dimension.
struct GemmOperand {
  bool trans = false;
  int64_t ld = 1;
};

std::optional<GemmOperand> gemm_layout(int64_t rows, int64_t cols, int64_t s0, int64_t s1) {
  if (cols == 1) s1 = 1;  // a unit dim's stride is arbitrary
  if (rows == 1) s0 = std::max<int64_t>(cols, 1);
  if (s1 == 1 && s0 >= std::max<int64_t>(cols, 1)) return GemmOperand{false, s0};
  if (rows == 1 && cols > 1 && s1 != 1) return std::nullopt;
  if (s0 == 1 && s1 >= std::max<int64_t>(rows, 1)) return GemmOperand{true, s1};
  return std::nullopt;
}

template <class T>
void naive_gemm(int64_t batch,
                int64_t n,
                int64_t m,
                int64_t k,
                const T* a,
                int64_t sa,
                GemmOperand la,
                const T* b,
                int64_t sb,
                GemmOperand lb,
                T* c) {
  parallel_for(0, batch * n, 16, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      const int64_t bi = r / n, i = r % n;
      const T* A = a + bi * sa;
      const T* B = b + bi * sb;
      for (int64_t j = 0; j < m; ++j) {
        T acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          const T av = la.trans ? A[p * la.ld + i] : A[i * la.ld + p];
          const T bv = lb.trans ? B[j * lb.ld + p] : B[p * lb.ld + j];
          acc += av * bv;
        }
        c[r * m + j] = acc;
      }
    }
  });
}

// (B, n, k) @ (B, k, m) -> new contiguous (B, n, m); a or b may have batch
// stride 0 (broadcast).
Tensor batched_matmul(Tensor a, Tensor b, const char* op) {
  profiler::RecordFunction record(op, {a, b});
  const int64_t batch = a.size(0), n = a.size(1), k = a.size(2), m = b.size(2);
  auto layout = [](Tensor& t) {
    auto l = gemm_layout(t.size(1), t.size(2), t.stride(1), t.stride(2));
    if (!l) {
      t = t.contiguous();
      l = gemm_layout(t.size(1), t.size(2), t.stride(1), t.stride(2));
    }
    return *l;
  };
  const GemmOperand la = layout(a), lb = layout(b);
  Tensor c = empty({batch, n, m}, a.dtype());
  if (c.numel() == 0) return c;
  const int64_t sa = a.size(0) == 1 ? 0 : a.stride(0), sb = b.size(0) == 1 ? 0 : b.stride(0);
  switch (a.dtype()) {
    case kFloat32:
      cpu::gemm_batched(batch, la.trans, lb.trans, n, m, k, 1.0f, a.data_ptr<float>(), la.ld, sa,
                        b.data_ptr<float>(), lb.ld, sb, 0.0f, c.data_ptr<float>(), m, n * m);
      break;
    case kFloat64:
      cpu::gemm_batched(batch, la.trans, lb.trans, n, m, k, 1.0, a.data_ptr<double>(), la.ld, sa,
                        b.data_ptr<double>(), lb.ld, sb, 0.0, c.data_ptr<double>(), m, n * m);
      break;
    default:
      detail::dispatch_numeric(a.dtype(), op, [&](auto tag) {
        using T = typename decltype(tag)::type;
        naive_gemm<T>(batch, n, m, k, a.data_ptr<T>(), sa, la, b.data_ptr<T>(), sb, lb,
                      c.data_ptr<T>());
      });
  }
  return c;
}

// batched_matmul with autograd: dA = dC @ B^T, dB = A^T @ dC (themselves
// recorded, so double backward works).
Tensor batched_matmul_op(const Tensor& a, const Tensor& b, const char* op) {
  Tensor c;
  {
    NoGradGuard no_grad;
    c = batched_matmul(a, b, op);
  }
  if (auto node = autograd::make_node(op, {&a, &b}, {&c})) {
    const bool need_a = autograd::requires_grad(a), need_b = autograd::requires_grad(b);
    node->set_backward([sa = need_b ? autograd::SavedTensor::input(a) : autograd::SavedTensor(),
                        sb = need_a ? autograd::SavedTensor::input(b) : autograd::SavedTensor(),
                        op](const autograd::Grads& gs) {
      const Tensor& g = gs[0];
      return autograd::Grads{
          sb.defined() ? batched_matmul_op(g, sb.get().transpose(1, 2), op) : Tensor(),
          sa.defined() ? batched_matmul_op(sa.get().transpose(1, 2), g, op) : Tensor()};
    });
  }
  return c;
}

void check_operands(const Tensor& a, const Tensor& b, const char* op) {
  STRIDE_CHECK(a.defined() && b.defined(), ValueError, "[", op, "] an operand is undefined.");
  STRIDE_CHECK(a.dim() >= 1 && b.dim() >= 1, ShapeError, "[", op,
               "] both operands need at least 1 dim; got ", shape_str(a.sizes()), " and ",
               shape_str(b.sizes()), ".");
  STRIDE_CHECK(a.dtype() == b.dtype(), DTypeError, "[", op, "] operands must share a dtype; got ",
               to_string(a.dtype()), " and ", to_string(b.dtype()),
               ". Hint: convert one with .to(dtype).");
  STRIDE_CHECK(a.device().is_cpu() && b.device().is_cpu(), DeviceError, "[", op,
               "] stride has no CUDA kernels yet.");
}

Tensor matmul_impl(const Tensor& a_in, const Tensor& b_in, const char* op) {
  check_operands(a_in, b_in, op);
  if (detail::is_16bit(a_in.dtype())) {
    return matmul_impl(a_in.to(kFloat32), b_in.to(kFloat32), op).to(a_in.dtype());
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
    c = batched_matmul_op(a2.unsqueeze(0), b.unsqueeze(0), op);
  } else {
    DimVector ashape = batch, bshape = batch;
    ashape.push_back(n);
    ashape.push_back(k);
    bshape.push_back(k);
    bshape.push_back(m);
    Tensor a3 = a.expand(ashape).reshape({nbatch, n, k});
    Tensor b3 = b.dim() == 2 ? b.unsqueeze(0) : b.expand(bshape).reshape({nbatch, k, m});
    if (b3.size(0) == 1 && nbatch != 1) b3 = b3.expand({nbatch, k, m});
    c = batched_matmul_op(a3, b3, op);
  }
  DimVector out_shape = batch;
  if (!a_vec) out_shape.push_back(n);
  if (!b_vec) out_shape.push_back(m);
  return c.sizes() == IntArrayRef(out_shape) ? c : c.view(out_shape);
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  return matmul_impl(a, b, "matmul");
}

Tensor& matmul_out(Tensor& out, const Tensor& a, const Tensor& b) {
  autograd::check_no_grad_out("matmul", {&a, &b});
  Tensor r = matmul(a, b);
  return detail::assign_result(out, r, r.dtype(), "matmul");
}

Tensor mm(const Tensor& a, const Tensor& b) {
  STRIDE_CHECK(a.dim() == 2 && b.dim() == 2, ShapeError, "[mm] expects two 2-d tensors; got ",
               shape_str(a.sizes()), " and ", shape_str(b.sizes()), ". Hint: use matmul.");
  return matmul_impl(a, b, "mm");
}

Tensor bmm(const Tensor& a, const Tensor& b) {
  STRIDE_CHECK(a.dim() == 3 && b.dim() == 3 && a.size(0) == b.size(0), ShapeError,
               "[bmm] expects (B, n, k) and (B, k, m) with one B; got ", shape_str(a.sizes()),
               " and ", shape_str(b.sizes()), ".");
  return matmul_impl(a, b, "bmm");
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
