// out= forms of ops whose kernels write their own contiguous result: each
// computes out of place and copies into `out` through assign_result (shape and
// dtype checked, empty outs resized, any layout written through TensorIter),
// as every strided destination without a stride-aware kernel is written.
#include "autograd/node.h"
#include "ops/elementwise_common.h"

namespace stride {

namespace {

Tensor& copy_into(Tensor& out, const Tensor& result, const char* op) {
  return detail::assign_result(out, result, result.dtype(), op);
}

}  // namespace

Tensor& amin_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim) {
  autograd::check_no_grad_out("amin", {&x});
  return copy_into(out, amin(x, dims, keepdim), "amin");
}

Tensor& mean_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim) {
  autograd::check_no_grad_out("mean", {&x});
  return copy_into(out, mean(x, dims, keepdim), "mean");
}

Tensor& var_out(Tensor& out, const Tensor& x, IntArrayRef dims, double correction, bool keepdim) {
  autograd::check_no_grad_out("var", {&x});
  return copy_into(out, var(x, dims, correction, keepdim), "var");
}

Tensor& logsumexp_out(Tensor& out, const Tensor& x, IntArrayRef dims, bool keepdim) {
  autograd::check_no_grad_out("logsumexp", {&x});
  return copy_into(out, logsumexp(x, dims, keepdim), "logsumexp");
}

Tensor& norm_out(Tensor& out, const Tensor& x, double p, IntArrayRef dims, bool keepdim) {
  autograd::check_no_grad_out("norm", {&x});
  return copy_into(out, norm(x, p, dims, keepdim), "norm");
}

Tensor& mm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  autograd::check_no_grad_out("mm", {&a, &b});
  return copy_into(out, mm(a, b), "mm");
}

Tensor& bmm_out(Tensor& out, const Tensor& a, const Tensor& b) {
  autograd::check_no_grad_out("bmm", {&a, &b});
  return copy_into(out, bmm(a, b), "bmm");
}

Tensor& index_select_out(Tensor& out, const Tensor& x, int64_t dim, const Tensor& index) {
  autograd::check_no_grad_out("index_select", {&x});
  return copy_into(out, index_select(x, dim, index), "index_select");
}

Tensor& gather_out(Tensor& out, const Tensor& x, int64_t dim, const Tensor& index) {
  autograd::check_no_grad_out("gather", {&x});
  return copy_into(out, gather(x, dim, index), "gather");
}

Tensor& softmax_out(Tensor& out, const Tensor& x, int64_t dim) {
  autograd::check_no_grad_out("softmax", {&x});
  return copy_into(out, softmax(x, dim), "softmax");
}

Tensor& log_softmax_out(Tensor& out, const Tensor& x, int64_t dim) {
  autograd::check_no_grad_out("log_softmax", {&x});
  return copy_into(out, log_softmax(x, dim), "log_softmax");
}

namespace {

void check_no_grad_list(const char* op, const std::vector<Tensor>& tensors) {
  for (const Tensor& t : tensors) autograd::check_no_grad_out(op, {&t});
}

}  // namespace

Tensor& cat_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  check_no_grad_list("cat", tensors);
  return copy_into(out, cat(tensors, dim), "cat");
}

Tensor& stack_out(Tensor& out, const std::vector<Tensor>& tensors, int64_t dim) {
  check_no_grad_list("stack", tensors);
  return copy_into(out, stack(tensors, dim), "stack");
}

void max_out(Tensor& values, Tensor& indices, const Tensor& x, int64_t dim, bool keepdim) {
  autograd::check_no_grad_out("max", {&x});
  auto [v, i] = max(x, dim, keepdim);
  detail::assign_result(values, v, v.dtype(), "max");
  detail::assign_result(indices, i, kInt64, "max");
}

void min_out(Tensor& values, Tensor& indices, const Tensor& x, int64_t dim, bool keepdim) {
  autograd::check_no_grad_out("min", {&x});
  auto [v, i] = min(x, dim, keepdim);
  detail::assign_result(values, v, v.dtype(), "min");
  detail::assign_result(indices, i, kInt64, "min");
}

}  // namespace stride
