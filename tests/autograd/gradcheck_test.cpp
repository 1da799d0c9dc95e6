// gradcheck over every differentiable op, with its inputs in every layout
// of the layout matrix (contiguous, transposed, step-2 slice, offset,
// expanded), plus second derivatives through elementwise ops and matmul.
#include <functional>

#include "stride/masked.h"
#include "stride/nn/functional.h"
#include "stride/nn/rnn.h"

#include "core/op_list.h"
#include "support/layouts.h"
#include "support/linalg_inputs.h"
#include "support/op_coverage.h"
#include "support/options.h"

namespace stride::testing {
namespace {

namespace F = nn::functional;

using Inputs = std::vector<Tensor>;
using Fn = std::function<Tensor(const Inputs&)>;

struct GradCase {
  std::string name;
  std::vector<DimVector> shapes;
  Fn fn;
  Domain domain = Domain::Any;
  double eps = 1e-6;  // the finite-difference step
};

Tensor idx(std::vector<int64_t> v, IntArrayRef shape = {}) {
  return tensor<int64_t>(v, shape);
}

std::vector<GradCase> grad_table() {
  const DimVector m{3, 4};
  std::vector<GradCase> t = {
  // Every unary op of the list (src/core/op_list.h).
#define STRIDE_UNARY_GRAD_CASE(name, domain) \
  {#name, {m}, [](const Inputs& x) { return name(x[0]); }, Domain::domain},
#define STRIDE_FLOAT_UNARY_GRAD_CASE(name, which, backward, domain) \
  STRIDE_UNARY_GRAD_CASE(name, domain)
#define STRIDE_SAME_UNARY_GRAD_CASE(name, which, backward, domain) \
  STRIDE_UNARY_GRAD_CASE(name, domain)
      STRIDE_FLOAT_UNARY_OPS(STRIDE_FLOAT_UNARY_GRAD_CASE)
          STRIDE_SAME_UNARY_OPS(STRIDE_SAME_UNARY_GRAD_CASE)
#undef STRIDE_SAME_UNARY_GRAD_CASE
#undef STRIDE_FLOAT_UNARY_GRAD_CASE
#undef STRIDE_UNARY_GRAD_CASE
  // Every binary op of the list.
#define STRIDE_BINARY_GRAD_CASE(name, dispatch) \
  {#name, {m, m}, [](const Inputs& x) { return name(x[0], x[1]); }},
              STRIDE_BINARY_OPS(STRIDE_BINARY_GRAD_CASE)
#undef STRIDE_BINARY_GRAD_CASE
#define STRIDE_FLOAT_BINARY_GRAD_CASE(name, grad_a, grad_b, domain) \
  {#name, {m, m}, [](const Inputs& x) { return name(x[0], x[1]); }, Domain::domain},
                  STRIDE_FLOAT_BINARY_OPS(STRIDE_FLOAT_BINARY_GRAD_CASE)
#undef STRIDE_FLOAT_BINARY_GRAD_CASE
  // Every special function with a gradient; zeta, igamma and igammac have
  // one for their second operand only.
#define STRIDE_SPECIAL_UNARY_GRAD_CASE(name, which, backward, domain) \
  {#name, {m}, [](const Inputs& x) { return name(x[0]); }, Domain::domain},
                      STRIDE_SPECIAL_UNARY_OPS(STRIDE_SPECIAL_UNARY_GRAD_CASE)
#undef STRIDE_SPECIAL_UNARY_GRAD_CASE
                          {"special_xlog1py",
                           {m, m},
                           [](const Inputs& x) { return special_xlog1py(x[0], x[1]); },
                           Domain::Positive},
      {"special_zeta_other",
       {m},
       [](const Inputs& x) {
         return special_zeta(full({3, 4}, 2.5, kFloat64), x[0]);
       },
       Domain::AboveOne},
      {"igamma_other",
       {m},
       [](const Inputs& x) {
         return igamma(full({3, 4}, 1.5, kFloat64), x[0]);
       },
       Domain::Positive},
      {"igammac_other",
       {m},
       [](const Inputs& x) {
         return igammac(full({3, 4}, 1.5, kFloat64), x[0]);
       },
       Domain::Positive},
      {"nextafter", {m, m}, [](const Inputs& x) { return nextafter(x[0], x[1]); }},
      {"polygamma", {m}, [](const Inputs& x) { return polygamma(2, x[0]); }, Domain::Positive},
      {"mvlgamma", {m}, [](const Inputs& x) { return mvlgamma(x[0], 3); }, Domain::AboveOne},
      {"deg2rad", {m}, [](const Inputs& x) { return deg2rad(x[0]); }},
      {"rad2deg", {m}, [](const Inputs& x) { return rad2deg(x[0]); }},
      {"nan_to_num", {m}, [](const Inputs& x) { return nan_to_num(log(x[0]), 0.5, 2.0, -2.0); }},
      {"ldexp", {m, m}, [](const Inputs& x) { return ldexp(x[0], x[1]); }},
      {"float_power",
       {m, m},
       [](const Inputs& x) { return float_power(x[0], x[1]); },
       Domain::Positive},
      {"logit", {m}, [](const Inputs& x) { return logit(x[0]); }, Domain::Probability},
      {"logit_eps", {m}, [](const Inputs& x) { return logit(x[0], 0.25); }, Domain::Probability},
      {"operator-", {m}, [](const Inputs& x) { return -x[0]; }},
      {"add_alpha", {m, m}, [](const Inputs& x) { return add(x[0], x[1], 0.5); }},
      {"add_broadcast", {m, {4}}, [](const Inputs& x) { return x[0] + x[1]; }},
      {"sub_broadcast", {{3, 1}, m}, [](const Inputs& x) { return x[0] - x[1]; }},
      {"mul_scalar", {m}, [](const Inputs& x) { return x[0] * 3.0 + 1.0; }},
      {"div", {m, m}, [](const Inputs& x) { return x[0] / x[1]; }, Domain::Positive},
      {"rdiv_scalar", {m}, [](const Inputs& x) { return 2.0 / x[0]; }, Domain::Positive},
      // Positive operands keep the quotients small, away from the jumps;
      // remainder's divisor negated for its other sign.
      {"fmod", {m, m}, [](const Inputs& x) { return fmod(x[0], x[1]); }, Domain::Positive},
      {"remainder",
       {m, m},
       [](const Inputs& x) { return remainder(x[0], -x[1]); },
       Domain::Positive},
      {"frexp", {m}, [](const Inputs& x) { return frexp(x[0]).first; }},
      {"pow", {m, m}, [](const Inputs& x) { return pow(x[0], x[1]); }, Domain::Positive},
      {"pow_scalar", {m}, [](const Inputs& x) { return x[0].pow(2.5); }, Domain::Positive},
      {"minimum_broadcast", {m, {4}}, [](const Inputs& x) { return minimum(x[0], x[1]); }},
      {"clamp", {m}, [](const Inputs& x) { return clamp(x[0], -0.5, 0.5); }},
      {"where", {m, m}, [](const Inputs& x) { return where(x[0].gt(0), x[0], x[1] * 2.0); }},
      {"masked_fill", {m}, [](const Inputs& x) { return masked_fill(x[0], x[0].lt(0), 3.0); }},
      {"tril", {{2, 3, 4}}, [](const Inputs& x) { return tril(x[0], 1); }},
      {"triu", {m}, [](const Inputs& x) { return triu(x[0]); }},
      {"lerp", {m, m}, [](const Inputs& x) { return lerp(x[0], x[1], 0.3); }},
      {"sum_all", {m}, [](const Inputs& x) { return x[0].sum(); }},
      {"sum_dims",
       {{2, 3, 4}},
       [](const Inputs& x) {
         return x[0].sum({0, 2});
       }},
      {"sum_keepdim", {m}, [](const Inputs& x) { return x[0].sum({1}, true); }},
      {"mean", {m}, [](const Inputs& x) { return x[0].mean({0}); }},
      {"var", {m}, [](const Inputs& x) { return x[0].var({1}); }},
      {"amax", {m}, [](const Inputs& x) { return x[0].amax({1}); }},
      {"amin_all", {m}, [](const Inputs& x) { return x[0].amin({}); }},
      {"max_dim", {m}, [](const Inputs& x) { return max(x[0], 0).first; }},
      {"min_dim_keep", {m}, [](const Inputs& x) { return min(x[0], 1, true).first; }},
      {"logsumexp", {m}, [](const Inputs& x) { return x[0].logsumexp({1}); }},
      {"cumsum", {{2, 3, 4}}, [](const Inputs& x) { return x[0].cumsum(1); }},
      {"cumprod", {m}, [](const Inputs& x) { return x[0].cumprod(1); }},
      // Zeros at the start, in the middle and twice in a line.
      {"cumprod_zeros",
       {m},
       [](const Inputs& x) {
         const Tensor zero_at = tensor<bool>({1, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0}, {3, 4});
         return where(zero_at, zeros_like(x[0]), x[0]).cumprod(1);
       }},
      {"sort", {m}, [](const Inputs& x) { return x[0].sort(1, true).first; }},
      {"topk", {{2, 3, 4}}, [](const Inputs& x) { return x[0].topk(2, 1).first; }},
      {"flip",
       {m},
       [](const Inputs& x) {
         return x[0].flip({0, 1});
       }},
      {"roll",
       {m},
       [](const Inputs& x) {
         return x[0].roll({1, 5}, {0, 1});
       }},
      {"outer", {{3}, {4}}, [](const Inputs& x) { return outer(x[0], x[1]); }},
      // Shape ops and products (src/ops/shape_ops.cpp, linalg.cpp): composites,
      // their gradients those of the ops they are written with.
      {"einsum",
       {{2, 3, 4}, {4, 3}, {3, 3}},
       [](const Inputs& x) { return einsum("bij,jk,kk->bik", {x[0], x[1], x[2]}); }},
      {"cdist", {{2, 3, 4}, {5, 4}}, [](const Inputs& x) { return cdist(x[0], x[1]); }},
      {"addbmm",
       {{3, 4}, {2, 3, 5}, {2, 5, 4}},
       [](const Inputs& x) { return addbmm(x[0], x[1], x[2], 0.5, 2.0); }},
      {"fmax", {m, m}, [](const Inputs& x) { return fmax(x[0], x[1]); }},
      {"addcdiv",
       {m, {4}, m},
       [](const Inputs& x) { return addcdiv(x[0], x[1], x[2], -0.5); },
       Domain::Positive},
      {"diag_embed", {{2, 3}}, [](const Inputs& x) { return diag_embed(x[0], -1, 0, 2); }},
      {"block_diag", {{2, 3}, {4}}, [](const Inputs& x) { return block_diag({x[0], x[1]}); }},
      {"repeat", {{2, 3}}, [](const Inputs& x) { return repeat(x[0], {2, 1, 2}); }},
      {"repeat_interleave",
       {{2, 3}},
       [](const Inputs& x) { return repeat_interleave(x[0], idx({2, 0, 1}), 1); }},
      {"combinations", {{4}}, [](const Inputs& x) { return combinations(x[0], 2, true); }},
      {"rot90_movedim",
       {{2, 3, 4}},
       [](const Inputs& x) { return movedim(rot90(x[0], 1, {0, 2}), {0}, {2}); }},
      {"sum_to_size", {{2, 3, 4}}, [](const Inputs& x) { return sum_to_size(x[0], {3, 1}); }},
      // shape compositions (src/ops/shape_ops.cpp); a split's pieces come back flat()
      {"atleast_1d", {{3}}, [](const Inputs& x) { return atleast_1d(x[0].select(0, 1)); }},
      {"atleast_2d", {{3}}, [](const Inputs& x) { return atleast_2d(x[0]); }},
      {"atleast_3d", {m}, [](const Inputs& x) { return atleast_3d(x[0]); }},
      {"broadcast_to", {{3, 1}}, [](const Inputs& x) { return broadcast_to(x[0], {2, 3, 4}); }},
      {"broadcast_tensors",
       {{3, 1}, {4}},
       [](const Inputs& x) { return stack(broadcast_tensors({x[0], x[1]})); }},
      {"hstack", {m, {3, 2}}, [](const Inputs& x) { return hstack({x[0], x[1]}); }},
      {"vstack", {m, {4}}, [](const Inputs& x) { return vstack({x[0], x[1]}); }},
      {"dstack", {m, m}, [](const Inputs& x) { return dstack({x[0], x[1]}); }},
      {"column_stack", {{3}, m}, [](const Inputs& x) { return column_stack({x[0], x[1]}); }},
      {"tensor_split", {{3, 5}}, [](const Inputs& x) { return flat(tensor_split(x[0], 2, 1)); }},
      {"split_with_sizes",
       {{3, 5}},
       [](const Inputs& x) { return flat(split_with_sizes(x[0], {2, 0, 3}, 1)); }},
      {"hsplit", {m}, [](const Inputs& x) { return flat(hsplit(x[0], 2)); }},
      {"vsplit", {{4, 3}}, [](const Inputs& x) { return flat(vsplit_at(x[0], {1, 3})); }},
      {"dsplit", {{2, 3, 4}}, [](const Inputs& x) { return flat(dsplit(x[0], 2)); }},
      {"movedim", {{2, 3, 4}}, [](const Inputs& x) { return movedim(x[0], {0, 1}, {2, 0}); }},
      {"ravel", {m}, [](const Inputs& x) { return ravel(x[0].t()); }},
      {"fliplr", {m}, [](const Inputs& x) { return fliplr(x[0]); }},
      {"flipud", {m}, [](const Inputs& x) { return flipud(x[0]); }},
      {"diag", {{3}}, [](const Inputs& x) { return diag(x[0], -1); }},
      {"diag_of_matrix", {m}, [](const Inputs& x) { return diag(x[0], 1); }},
      {"diagflat", {{2, 3}}, [](const Inputs& x) { return diagflat(x[0], 1); }},
      {"meshgrid",
       {{3}, {4}},
       [](const Inputs& x) { return stack(meshgrid({x[0], x[1]}, "ij")); }},
      {"cartesian_prod", {{3}, {2}}, [](const Inputs& x) { return cartesian_prod({x[0], x[1]}); }},
      {"tile", {{2, 3}}, [](const Inputs& x) { return tile(x[0], {2, 1, 2}); }},
      {"unflatten", {{2, 6}}, [](const Inputs& x) { return unflatten(x[0], 1, {3, 2}); }},
      // Numeric composites (src/ops/numeric_composites.cpp).
      {"trace", {{3, 4}}, [](const Inputs& x) { return trace(x[0]); }},
      {"diff_prepend",
       {{3, 5}, {3, 1}},
       [](const Inputs& x) { return diff(x[0], 2, 1, x[1], std::nullopt); }},
      {"trapezoid", {{2, 5}, {5}}, [](const Inputs& x) { return trapezoid(x[0], x[1]); }},
      {"cumulative_trapezoid",
       {{2, 5}, {2, 5}},
       [](const Inputs& x) { return cumulative_trapezoid(x[0], x[1], 1); }},
      {"cov_weighted",
       {{3, 5}, {5}},
       [](const Inputs& x) { return cov(x[0], 1, std::nullopt, x[1]); },
       Domain::Positive},
      {"corrcoef", {{3, 5}}, [](const Inputs& x) { return corrcoef(x[0]); }},
      {"renorm", {{3, 4}}, [](const Inputs& x) { return renorm(x[0], 2, 0, 0.5); }},
      {"gradient_edge_order_2",
       {{4, 5}},
       [](const Inputs& x) {
         return stack(gradient(x[0], std::vector<double>{0.5, 2.0}, {0, 1}, 2));
       }},
      {"kron", {{2, 3}, {3, 2}}, [](const Inputs& x) { return kron(x[0], x[1]); }},
      {"tensordot",
       {{2, 3, 4}, {4, 3}},
       [](const Inputs& x) { return tensordot(x[0], x[1], {1, 2}, {1, 0}); }},
      {"addmv",
       {{3}, {3, 4}, {4}},
       [](const Inputs& x) { return addmv(x[0], x[1], x[2], 0.5, 2.0); }},
      {"addr",
       {{3, 4}, {3}, {4}},
       [](const Inputs& x) { return addr(x[0], x[1], x[2], 2.0, -1.0); }},
      // products, elementwise and numeric compositions (linalg.cpp, elementwise_composites.cpp,
      // numeric_composites.cpp)
      {"dot", {{5}, {5}}, [](const Inputs& x) { return dot(x[0], x[1]); }},
      {"inner", {{2, 4}, {3, 4}}, [](const Inputs& x) { return inner(x[0], x[1]); }},
      {"mv", {m, {4}}, [](const Inputs& x) { return mv(x[0], x[1]); }},
      {"chain_matmul",
       {{2, 3}, m, {4, 2}},
       [](const Inputs& x) { return chain_matmul({x[0], x[1], x[2]}); }},
      {"dist", {m, {4}}, [](const Inputs& x) { return dist(x[0], x[1], 3.0); }},
      {"fmin", {m, m}, [](const Inputs& x) { return fmin(x[0], x[1]); }},
      {"sgn", {m}, [](const Inputs& x) { return sgn(x[0]); }},
      {"resolve_neg", {m}, [](const Inputs& x) { return resolve_neg(x[0]) * 2.0; }},
      {"addmm",
       {m, {3, 2}, {2, 4}},
       [](const Inputs& x) { return addmm(x[0], x[1], x[2], 0.5, 2.0); }},
      {"baddbmm",
       {{2, 3, 4}, {2, 3, 2}, {2, 2, 4}},
       [](const Inputs& x) { return baddbmm(x[0], x[1], x[2]); }},
      {"norm_2", {m}, [](const Inputs& x) { return x[0].norm(2, {1}); }},
      {"norm_3", {m}, [](const Inputs& x) { return x[0].norm(3); }, Domain::Positive},
      {"matmul", {m, {4, 2}}, [](const Inputs& x) { return matmul(x[0], x[1]); }},
      {"matmul_batched_broadcast",
       {{2, 3, 4}, {4, 2}},
       [](const Inputs& x) { return matmul(x[0], x[1]); }},
      {"matmul_vec", {m, {4}}, [](const Inputs& x) { return matmul(x[0], x[1]); }},
      {"bmm", {{2, 3, 4}, {2, 4, 2}}, [](const Inputs& x) { return bmm(x[0], x[1]); }},
      {"mm_transposed", {m, {2, 4}}, [](const Inputs& x) { return mm(x[0], x[1].t()); }},
      {"view",
       {m},
       [](const Inputs& x) {
         return x[0].reshape({2, 6}) * 2.0;
       }},
      {"transpose", {{2, 3, 4}}, [](const Inputs& x) { return x[0].transpose(0, 2) * 2.0; }},
      {"permute",
       {{2, 3, 4}},
       [](const Inputs& x) {
         return x[0].permute({1, 2, 0}) * 2.0;
       }},
      {"narrow", {m}, [](const Inputs& x) { return x[0].narrow(1, 1, 2) * 2.0; }},
      {"slice_step", {m}, [](const Inputs& x) { return x[0].slice(1, 0, 4, 2) * 2.0; }},
      {"select", {m}, [](const Inputs& x) { return x[0].select(0, 1) * 2.0; }},
      {"unsqueeze_squeeze", {m}, [](const Inputs& x) { return x[0].unsqueeze(1).squeeze() * 2.0; }},
      {"expand",
       {{3, 1}},
       [](const Inputs& x) {
         return x[0].expand({3, 4}) * idx({1, 2, 3, 4}).to(kFloat64);
       }},
      {"flatten", {{2, 3, 2}}, [](const Inputs& x) { return x[0].flatten(1) * 2.0; }},
      {"as_strided",
       {m},
       [](const Inputs& x) {
         return x[0].contiguous().as_strided({2, 2}, {1, 2}, 1) * 2.0;
       }},
      {"chunk", {m}, [](const Inputs& x) { return x[0].chunk(2, 1)[1] * 2.0; }},
      {"unbind",
       {m},
       [](const Inputs& x) {
         const std::vector<Tensor> rows = x[0].unbind(0);
         return rows[0] * rows[2] + rows[1];
       }},
      {"diagonal", {{3, 3}}, [](const Inputs& x) { return x[0].diagonal(1) * 2.0; }},
      // Overlapping windows: the gradient sums them.
      {"unfold_view", {{3, 5}}, [](const Inputs& x) { return x[0].unfold(1, 3, 1) * 2.0; }},
      {"unfold_view_strided",
       {{5, 2}},
       [](const Inputs& x) {
         return x[0].t().unfold(1, 2, 2).square();
       }},
      {"clone", {m}, [](const Inputs& x) { return x[0].clone() * 2.0; }},
      {"cat",
       {m, {3, 2}},
       [](const Inputs& x) {
         return cat({x[0], x[1]}, 1) * 2.0;
       }},
      {"stack",
       {m, m},
       [](const Inputs& x) {
         return stack({x[0], x[1]}, 0) * 2.0;
       }},
      {"index_select",
       {m},
       [](const Inputs& x) {
         return x[0].index_select(1, idx({3, 0, 3}));
       }},
      {"gather",
       {m},
       [](const Inputs& x) {
         return x[0].gather(1, idx({0, 3, 1, 1, 2, 2}, {3, 2}));
       }},
      {"scatter_add",
       {m, {3, 2}},
       [](const Inputs& x) {
         return x[0].scatter_add(1, idx({0, 0, 3, 1, 2, 2}, {3, 2}), x[1]);
       }},
      {"embedding",
       {{5, 3}},
       [](const Inputs& x) {
         return embedding(x[0], idx({4, 1, 4, 0}, {2, 2}));
       }},
      {"softmax", {m}, [](const Inputs& x) { return x[0].softmax(1); }},
      {"softmax_dim0", {m}, [](const Inputs& x) { return x[0].softmax(0); }},
      {"log_softmax", {m}, [](const Inputs& x) { return x[0].log_softmax(-1); }},
      {"inplace_chain",
       {m, m},
       [](const Inputs& x) {
         Tensor y = x[0] * 1.0;  // a non-leaf: in-place ops on it are recorded
         y.mul_(x[1]).add_(x[1], 2.0).exp_();
         return y;
       }},
      {"addcmul_addcdiv",
       {m, m, m},
       [](const Inputs& x) {
         Tensor y = x[0].clone();
         y.addcmul_(x[1], x[2], 0.5).addcdiv_(x[1], x[2], -0.25);
         return y;
       },
       Domain::Positive},
      {"copy_into_nonleaf",
       {m, {4}},
       [](const Inputs& x) {
         Tensor y = x[0] * 2.0;
         y.copy_(x[1]);
         return y * x[0];
       }},
      {"addcdiv",
       {m, m, m},
       [](const Inputs& x) { return (x[0] * 1.0).addcdiv_(x[1], x[2], 0.5); },
       Domain::Positive},
      {"reshape",
       {{2, 6}},
       [](const Inputs& x) {
         return x[0].reshape({3, 4}).t() * 2.0;
       }},
      {"squeeze", {{3, 1, 4}}, [](const Inputs& x) { return x[0].squeeze(1) * x[0].squeeze(); }},
      // A float32 round trip: the function is the identity up to float32
      // rounding (~6e-8 relative), which a step of 1e-2 keeps far below the
      // tolerance.
      {"to_float32_and_back",
       {m},
       [](const Inputs& x) { return x[0].to(kFloat32).to(kFloat64) * x[0]; },
       Domain::Any,
       1e-2},
      {"index",
       {m},
       [](const Inputs& x) {
         return x[0].index({idx({2, 0, 2}), idx({1, 3, 1})});
       }},
      {"index_put",
       {m, {2}},
       [](const Inputs& x) {
         return x[0].index_put({idx({1, 1}), idx({0, 3})}, x[1], true);
       }},
      // The reductions, scans and order statistics beyond sum and max.
      {"prod", {m}, [](const Inputs& x) { return prod(x[0], 1); }},
      {"prod_with_zeros",
       {m},
       [](const Inputs& x) {
         return prod(masked_fill(x[0], x[0].abs().lt(0.3), 0.0));
       }},
      {"std_dev", {m}, [](const Inputs& x) { return std_dev(x[0], {0, 1}, 0.5, true); }},
      {"var_mean",
       {m},
       [](const Inputs& x) {
         auto [v, mu] = var_mean(x[0], {1});
         return v + mu;
       }},
      {"std_mean",
       {m},
       [](const Inputs& x) {
         auto [sd, mu] = std_mean(x[0], {}, 0);
         return sd * mu;
       }},
      {"nansum", {m}, [](const Inputs& x) { return nansum(x[0], {1}); }},
      {"nanmean", {m}, [](const Inputs& x) { return nanmean(x[0], {0}); }},
      {"aminmax",
       {m},
       [](const Inputs& x) {
         auto [lo, hi] = aminmax(x[0], 1);
         return lo * hi;
       }},
      {"median", {m}, [](const Inputs& x) { return median(x[0], 1).first; }},
      {"nanmedian", {m}, [](const Inputs& x) { return nanmedian(x[0]); }},
      {"kthvalue", {m}, [](const Inputs& x) { return kthvalue(x[0], 2, 0).first; }},
      {"mode", {m}, [](const Inputs& x) { return mode(x[0], 1).first; }},
      {"quantile",
       {m},
       [](const Inputs& x) {
         return quantile(x[0], tensor<double>({0.2, 0.9}), 1);
       }},
      {"nanquantile",
       {m},
       [](const Inputs& x) {
         return nanquantile(x[0], full({}, 0.4, kFloat64), std::nullopt, false, "midpoint");
       }},
      {"msort", {m}, [](const Inputs& x) { return msort(x[0]); }},
      {"cummax", {m}, [](const Inputs& x) { return cummax(x[0], 1).first; }},
      {"cummin", {m}, [](const Inputs& x) { return cummin(x[0], 0).first; }},
      {"logcumsumexp", {m}, [](const Inputs& x) { return logcumsumexp(x[0], 1); }},
      // The scatters, the index_* ops and the selections.
      {"scatter",
       {m, {3, 2}},
       [](const Inputs& x) {
         return scatter(x[0], 1, idx({0, 2, 3, 1, 2, 0}, {3, 2}), x[1]);
       }},
      {"scatter_reduce_sum",
       {m, {3, 2}},
       [](const Inputs& x) {
         return scatter_reduce(x[0], 1, idx({0, 0, 3, 1, 2, 2}, {3, 2}), x[1], "sum", false);
       }},
      {"scatter_reduce_prod",
       {m, {3, 2}},
       [](const Inputs& x) {
         return scatter_reduce(x[0], 1, idx({0, 0, 3, 1, 2, 2}, {3, 2}), x[1], "prod");
       }},
      {"scatter_reduce_mean",
       {m, {3, 2}},
       [](const Inputs& x) {
         return scatter_reduce(x[0], 0, idx({0, 0, 2, 1, 2, 2}, {3, 2}), x[1], "mean");
       }},
      {"scatter_reduce_amax",
       {m, {3, 2}},
       [](const Inputs& x) {
         return scatter_reduce(x[0], 1, idx({0, 0, 3, 1, 2, 2}, {3, 2}), x[1], "amax", false);
       }},
      {"index_add",
       {m, {3, 2}},
       [](const Inputs& x) {
         return index_add(x[0], 1, idx({3, 3}), x[1], 0.5);
       }},
      {"index_copy", {m, {2, 4}}, [](const Inputs& x) { return index_copy(x[0], 0, idx({2, 0}), x[1]); }},
      {"index_fill", {m}, [](const Inputs& x) { return index_fill(x[0], 1, idx({1, 2}), 2.0); }},
      {"index_reduce",
       {m, {3, 2}},
       [](const Inputs& x) {
         return index_reduce(x[0], 1, idx({0, 0}), x[1], "amin", false);
       }},
      {"take", {m}, [](const Inputs& x) { return take(x[0], idx({11, -1, 2}, {3})); }},
      {"put", {m, {3}}, [](const Inputs& x) { return put(x[0], idx({1, 5, 1}), x[1], true); }},
      {"take_along_dim",
       {m},
       [](const Inputs& x) {
         return take_along_dim(x[0], idx({3, 0, 0}, {3, 1}), 1);
       }},
      {"masked_select", {m}, [](const Inputs& x) { return masked_select(x[0], x[0].gt(0)); }},
      {"masked_scatter",
       {m, {12}},
       [](const Inputs& x) {
         return masked_scatter(x[0], x[0].lt(0), x[1]);
       }},
      {"select_scatter", {m, {3}}, [](const Inputs& x) { return select_scatter(x[0], x[1], 1, 2); }},
      {"slice_scatter",
       {m, {3, 2}},
       [](const Inputs& x) {
         return slice_scatter(x[0], x[1], 1, 0, std::nullopt, 2);
       }},
      {"as_strided_scatter",
       {m, {2, 2}},
       [](const Inputs& x) {
         return as_strided_scatter(x[0], x[1], {2, 2}, {1, 4}, 1) * x[0];
       }},
      {"diagonal_scatter",
       {m, {2}},
       [](const Inputs& x) {
         return diagonal_scatter(x[0], x[1], 2);
       }},
      // The fused nn ops (src/nn/), float64 through their own kernels.
      {"linear", {m, {5, 4}, {5}}, [](const Inputs& x) { return F::linear(x[0], x[1], x[2]); }},
      {"linear_concat",
       {m, {2, 4}, {3, 4}},
       [](const Inputs& x) {
         return F::linear_concat(x[0], {x[1], x[2]});
       }},
      {"linear_groups",
       {m, {2, 4}, {3, 4}, {1, 4}},
       [](const Inputs& x) {
         return cat(F::linear_groups(x[0], {{x[1]}, {x[2], x[3]}}), -1);
       }},
      // x's gradient through a stored int8 weight (the weight has none).
      {"linear_packed",
       {{3, 32}},
       [](const Inputs& x) {
         Generator gen(3);
         const Tensor w = F::pack_weight(randn({5, 32}, {}, &gen), WeightFormat::Int8);
         return F::linear_packed(x[0], w, WeightFormat::Int8, 32);
       }},
      {"rms_norm", {m, {4}}, [](const Inputs& x) { return F::rms_norm(x[0], x[1], 1e-3); }},
      {"swiglu", {m, m}, [](const Inputs& x) { return F::swiglu(x[0], x[1]); }},
      {"rotary_embedding",
       {{2, 3, 4}},
       [](const Inputs& x) { return F::rotary_embedding(x[0], 1, 100.0); }},
      {"cross_entropy",
       {{3, 5}},
       [](const Inputs& x) {
         return F::cross_entropy(x[0], idx({4, 0, 2}));
       }},
      {"linear_cross_entropy",
       {{5, 3}, {4, 3}, {4}},
       [](const Inputs& x) {
         F::LinearCrossEntropyOptions o;
         o.linear_bias = x[2];
         o.label_smoothing = 0.2;
         o.ignore_index = 1;
         o.batch_chunk_size = 2;
         return F::linear_cross_entropy(x[0], x[1], idx({3, 0, 1, 2, 3}), o);
       }},
      {"linear_cross_entropy_probabilities",
       {{3, 2}, {4, 2}, {3, 4}},
       [](const Inputs& x) {
         F::LinearCrossEntropyOptions o;
         o.reduction = F::Reduction::None;
         o.batch_chunk_size = 2;
         return F::linear_cross_entropy(x[0], x[1], softmax(x[2], 1), o);
       }},
      {"scaled_dot_product_attention",
       {{2, 3, 4}, {2, 3, 4}, {2, 3, 2}},
       [](const Inputs& x) {
         return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true);
       }},
      {"rotary_attention",
       {{2, 3, 4}, {2, 3, 4}, {2, 3, 2}},
       [](const Inputs& x) {
         const auto [cos, sin] = F::rotary_tables(3, 4, 0, 100.0);
         return F::rotary_attention(x[0], x[1], x[2], cos, sin, F::RopeConvention::Interleaved, 0.0,
                                    true);
       }},
      // The composed activations (src/nn/activations.cpp), scaled where
      // their kinks lie outside N(0, 1)'s bulk.
      {"leaky_relu", {m}, [](const Inputs& x) { return F::leaky_relu(x[0], 0.2); }},
      {"elu", {m}, [](const Inputs& x) { return F::elu(x[0], 0.7); }},
      {"selu", {m}, [](const Inputs& x) { return F::selu(x[0]); }},
      {"celu", {m}, [](const Inputs& x) { return F::celu(x[0], 1.5); }},
      {"softplus", {m}, [](const Inputs& x) { return F::softplus(x[0], 2.0, 1.0); }},
      {"hardtanh", {m}, [](const Inputs& x) { return F::hardtanh(x[0], -0.5, 1.0); }},
      {"relu6", {m}, [](const Inputs& x) { return F::relu6(x[0] * 4.0); }},
      {"hardswish", {m}, [](const Inputs& x) { return F::hardswish(x[0] * 3.0); }},
      {"hardsigmoid", {m}, [](const Inputs& x) { return F::hardsigmoid(x[0] * 3.0); }},
      {"mish", {m}, [](const Inputs& x) { return F::mish(x[0]); }},
      {"logsigmoid", {m}, [](const Inputs& x) { return F::logsigmoid(x[0] * 3.0); }},
      {"softsign", {m}, [](const Inputs& x) { return F::softsign(x[0]); }},
      {"tanhshrink", {m}, [](const Inputs& x) { return F::tanhshrink(x[0]); }},
      {"softshrink", {m}, [](const Inputs& x) { return F::softshrink(x[0]); }},
      {"hardshrink", {m}, [](const Inputs& x) { return F::hardshrink(x[0], 0.7); }},
      {"threshold", {m}, [](const Inputs& x) { return F::threshold(x[0], 0.1, -2.0); }},
      {"glu", {m}, [](const Inputs& x) { return F::glu(x[0], 1); }},
      {"prelu", {m, {4}}, [](const Inputs& x) { return F::prelu(x[0], x[1]); }},
      {"softmin", {m}, [](const Inputs& x) { return F::softmin(x[0], 0); }},
      // The composed losses, vector functions and padding.
      {"l1_loss", {m, m}, [](const Inputs& x) { return F::l1_loss(x[0], x[1]); }},
      {"l1_loss_weighted",
       {m, m, m},
       [](const Inputs& x) { return F::l1_loss(x[0], x[1], F::Reduction::Mean, x[2]); }},
      {"smooth_l1_loss",
       {m, m},
       [](const Inputs& x) { return F::smooth_l1_loss(x[0], x[1], F::Reduction::Sum, 0.5); }},
      {"huber_loss",
       {m, m, m},
       [](const Inputs& x) { return F::huber_loss(x[0], x[1], F::Reduction::Mean, 0.5, x[2]); }},
      {"binary_cross_entropy",
       {m, m, {4}},
       [](const Inputs& x) { return F::binary_cross_entropy(sigmoid(x[0]), sigmoid(x[1]), x[2]); }},
      {"binary_cross_entropy_with_logits",
       {m, m, m, {4}},
       [](const Inputs&
              x) { return F::binary_cross_entropy_with_logits(x[0], sigmoid(x[1]), x[2], x[3]); }},
      {"kl_div",
       {m, m},
       [](const Inputs&
              x) { return F::kl_div(log_softmax(x[0], 1), softmax(x[1], 1), "batchmean"); }},
      {"kl_div_log_target",
       {m, m},
       [](const Inputs& x) { return F::kl_div(x[0], x[1], "sum", true); }},
      {"soft_margin_loss", {m, m}, [](const Inputs& x) { return F::soft_margin_loss(x[0], x[1]); }},
      {"hinge_embedding_loss",
       {m, m},
       [](const Inputs& x) { return F::hinge_embedding_loss(x[0], sign(x[1])); }},
      {"poisson_nll_loss",
       {m, m},
       [](const Inputs& x) { return F::poisson_nll_loss(x[0], x[1].abs() * 3.0, true, true); }},
      {"poisson_nll_loss_no_log",
       {m, m},
       [](const Inputs& x) { return F::poisson_nll_loss(x[0].abs() + 0.1, x[1], false); }},
      // src/nn/margin_losses.cpp; m is (3, 4): three samples of four classes.
      {"cosine_embedding_loss",
       {m, m},
       [](const Inputs& x) {
         return F::cosine_embedding_loss(x[0], x[1], idx({1, -1, -1}), 0.1);
       }},
      {"margin_ranking_loss",
       {m, m},
       [](const Inputs& x) { return F::margin_ranking_loss(x[0], x[1], sign(x[0] - x[1]), 0.5); }},
      {"multi_margin_loss",
       {m, {4}},
       [](const Inputs& x) {
         return F::multi_margin_loss(x[0], idx({3, 0, 1}), 2, 0.8, x[1].abs() + 0.5);
       }},
      {"multilabel_margin_loss",
       {m},
       [](const Inputs& x) {
         return F::multilabel_margin_loss(x[0], idx({3, 0, -1, 1, 2, 1, 0, -1, -1, 0, 0, 0}, {3, 4}));
       }},
      {"multilabel_soft_margin_loss",
       {m, m, {4}},
       [](const Inputs& x) { return F::multilabel_soft_margin_loss(x[0], sigmoid(x[1]), x[2]); }},
      {"triplet_margin_loss",
       {m, m, m},
       [](const Inputs& x) { return F::triplet_margin_loss(x[0], x[1], x[2], 2.0, 2.0, 1e-6, true); }},
      {"gaussian_nll_loss",
       {m, m, {3}},
       [](const Inputs& x) {
         return F::gaussian_nll_loss(x[0], x[1], x[2].abs() + 0.2, true, 1e-6, F::Reduction::Sum);
       }},
      {"cross_entropy_weighted",
       {m, {4}},
       [](const Inputs& x) {
         return F::cross_entropy(x[0], idx({3, -100, 1}), x[1].abs() + 0.5, -100, F::Reduction::Mean,
                                 0.1);
       }},
      {"cross_entropy_probabilities",
       {m, m, {4}},
       [](const Inputs& x) {
         return F::cross_entropy(x[0], softmax(x[1], 1), x[2], -100, F::Reduction::Mean, 0.2);
       }},
      {"nll_loss_weighted",
       {m, {4}},
       [](const Inputs& x) {
         return F::nll_loss(log_softmax(x[0], 1), idx({3, 0, 2}), x[1].abs() + 0.5);
       }},
      // src/nn/composed_layers.cpp.
      {"bilinear",
       {m, {3, 2}, {5, 4, 2}, {5}},
       [](const Inputs& x) { return F::bilinear(x[0], x[1], x[2], x[3]); }},
      {"channel_shuffle",
       {{2, 4, 3}},
       [](const Inputs& x) { return F::channel_shuffle(x[0], 2).cumsum(1); }},
      {"pdist", {{4, 3}}, [](const Inputs& x) { return F::pdist(x[0]); }},
      {"pdist_p1", {{4, 3}}, [](const Inputs& x) { return F::pdist(x[0], 1.0); }},
      {"local_response_norm",
       {{2, 5, 3}},
       [](const Inputs& x) { return F::local_response_norm(x[0], 3, 0.5, 0.75, 1.0); }},
      // nn ops moved from Python (src/nn/unpool_and_bags.cpp, multi_head_attention.cpp,
      // margin_losses.cpp).
      {"max_unpool1d",
       {{2, 3}},
       [](const Inputs& x) { return F::max_unpool1d(x[0], idx({0, 3, 5, 1, 2, 4}, {2, 3}), {2}); }},
      {"max_unpool2d",
       {{1, 2, 2}},
       [](const Inputs& x) {
         return F::max_unpool2d(x[0], idx({0, 3, 10, 13}, {1, 2, 2}), {2},
                                with([](auto& o) { o.output_size = {5, 4}; }));
       }},
      {"max_unpool3d",
       {{1, 2, 1, 1}},
       [](const Inputs& x) { return F::max_unpool3d(x[0], idx({1, 14}, {1, 2, 1, 1}), {2}); }},
      {"embedding_bag_sum_weighted",
       {{5, 3}, {6}},
       [](const Inputs& x) {
         return F::embedding_bag(idx({0, 2, 2, 4, 1, 3}), x[0], with([&](auto& o) {
                                   o.offsets = idx({0, 2, 2});
                                   o.mode = F::EmbeddingBagMode::Sum;
                                   o.per_sample_weights = x[1];
                                   o.padding_idx = 1;
                                 }));
       }},
      {"embedding_bag_mean",
       {{5, 3}},
       [](const Inputs& x) { return F::embedding_bag(idx({0, 2, 2, 4, 1, 3}, {2, 3}), x[0]); }},
      {"embedding_bag_max",
       {{5, 3}},
       [](const Inputs& x) {
         return F::embedding_bag(idx({0, 2, 4, 1, 3}), x[0], with([](auto& o) {
                                   o.offsets = idx({0, 3, 5});
                                   o.mode = F::EmbeddingBagMode::Max;
                                   o.include_last_offset = true;
                                 }));
       }},
      {"triplet_margin_with_distance_loss",
       {m, m, m},
       [](const Inputs& x) {
         const auto cosine_distance = [](const Tensor& a, const Tensor& b) {
           return 1.0 - F::cosine_similarity(a, b);
         };
         return F::triplet_margin_with_distance_loss(x[0], x[1], x[2], cosine_distance, 1.5, true,
                                                     F::Reduction::None);
       }},
      {"multi_head_attention_forward",
       {{3, 2, 4}, {12, 4}, {12}, {4, 4}, {1, 1, 4}, {1, 1, 4}},
       [](const Inputs& x) {
         const auto [out, weights] = F::multi_head_attention_forward(
             x[0], x[0], x[0], 4, 2, x[1], x[2], x[4], x[5], true, 0.0, x[3], Tensor(),
             with([](auto& o) { o.average_attn_weights = false; }));
         return cat({out.reshape({-1}), weights.reshape({-1})});
       }},
      {"normalize", {m}, [](const Inputs& x) { return F::normalize(x[0]); }},
      {"normalize_p3_dim0", {m}, [](const Inputs& x) { return F::normalize(x[0], 3.0, 0); }},
      {"cosine_similarity",
       {m, m},
       [](const Inputs& x) { return F::cosine_similarity(x[0], x[1]); }},
      {"pairwise_distance",
       {m, m},
       [](const Inputs& x) { return F::pairwise_distance(x[0], x[1]); }},
      {"pad",
       {m},
       [](const Inputs& x) { return F::pad(x[0], {1, 2, -1, 1}, F::PadMode::Constant, 0.5); }},
      // Linear algebra: matrices made invertible, positive-definite or
      // symmetric from the input (the gradient then flows through that too).
      {"linalg_lu_factor_ex", {{2, 3, 3}},
       [](const Inputs& x) { return std::get<0>(linalg::lu_factor_ex(x[0])); }},
      {"linalg_lu_factor", {{2, 4, 3}}, [](const Inputs& x) { return linalg::lu_factor(x[0]).first; }},
      {"linalg_lu_factor_wide", {{2, 3, 4}},
       [](const Inputs& x) { return linalg::lu_factor(x[0]).first; }},
      {"linalg_lu", {{2, 3, 3}},
       [](const Inputs& x) {
         auto [P, L, U] = linalg::lu(x[0]);
         return flat({L, U});
       }},
      {"lu_unpack", {{2, 3, 3}},
       [](const Inputs& x) {
         auto [LU, pivots] = linalg::lu_factor(x[0]);
         auto [P, L, U] = lu_unpack(LU, pivots);
         return flat({L, U});
       }},
      {"linalg_lu_solve", {{3, 3}, {3, 2}},
       [](const Inputs& x) {
         auto [LU, pivots] = linalg::lu_factor(well_conditioned(x[0]));
         return flat({linalg::lu_solve(LU, pivots, x[1]),
                      linalg::lu_solve(LU, pivots, x[1], true, true)});
       }},
      {"linalg_solve_triangular", {{2, 3, 3}, {3, 2}},
       [](const Inputs& x) {
         const Tensor a = well_conditioned(x[0]);
         return flat({linalg::solve_triangular(a.triu(), x[1], true),
                      linalg::solve_triangular(a.tril(), x[1].transpose(0, 1), false, false, true)});
       }},
      {"linalg_solve", {{2, 3, 3}, {3, 2}},
       [](const Inputs& x) { return linalg::solve(well_conditioned(x[0]), x[1]); }},
      {"linalg_solve_ex", {{3, 3}, {3}},
       [](const Inputs& x) { return linalg::solve_ex(well_conditioned(x[0]), x[1]).first; }},
      {"linalg_inv", {{3, 3}}, [](const Inputs& x) { return linalg::inv(well_conditioned(x[0])); }},
      {"linalg_inv_ex", {{3, 3}},
       [](const Inputs& x) { return linalg::inv_ex(well_conditioned(x[0])).first; }},
      {"linalg_det", {{2, 3, 3}}, [](const Inputs& x) { return linalg::det(well_conditioned(x[0])); }},
      {"linalg_slogdet", {{3, 3}},
       [](const Inputs& x) { return linalg::slogdet(x[0] - eye(3, 3, x[0].options()) * 3.0).second; }},
      {"logdet", {{3, 3}}, [](const Inputs& x) { return logdet(positive_definite(x[0])); }},
      {"linalg_cholesky_ex", {{2, 3, 3}},
       [](const Inputs& x) { return linalg::cholesky_ex(positive_definite(x[0])).first; }},
      {"linalg_cholesky", {{3, 3}},
       [](const Inputs& x) { return linalg::cholesky(positive_definite(x[0]), true); }},
      {"cholesky_solve", {{3, 3}, {3, 2}},
       [](const Inputs& x) {
         return cholesky_solve(x[1], linalg::cholesky(positive_definite(x[0])));
       }},
      {"cholesky_inverse", {{3, 3}},
       [](const Inputs& x) {
         return cholesky_inverse(linalg::cholesky(positive_definite(x[0]), true), true);
       }},
      {"triangular_solve", {{3, 3}, {3, 2}},
       [](const Inputs& x) {
         return triangular_solve(x[1], well_conditioned(x[0]), true, true).first;
       }},
      {"linalg_qr", {{2, 4, 3}},
       [](const Inputs& x) {
         auto [Q, R] = linalg::qr(x[0]);
         return flat({Q, R});
       }},
      {"linalg_qr_wide", {{2, 3, 4}},
       [](const Inputs& x) {
         auto [Q, R] = linalg::qr(x[0]);
         return flat({Q, R});
       }},
      // Eigenvectors and singular vectors are defined up to sign: the
      // gradchecked functions are invariant to it.
      {"linalg_eigh", {{2, 3, 3}},
       [](const Inputs& x) {
         auto [L, V] = linalg::eigh(symmetric(x[0]));
         return flat({L, abs(V)});
       }},
      {"linalg_eigvalsh", {{2, 3, 3}},
       [](const Inputs& x) { return linalg::eigvalsh(symmetric(x[0])); }},
      {"linalg_svd", {{2, 4, 3}},
       [](const Inputs& x) {
         auto [U, S, Vh] = linalg::svd(x[0], false);
         return flat({abs(U), S, abs(Vh)});
       }},
      {"linalg_svd_wide", {{2, 2, 3}},
       [](const Inputs& x) {
         auto [U, S, Vh] = linalg::svd(x[0], true);
         return flat({U.matmul(Vh.narrow(-2, 0, 2)), S});
       }},
      {"linalg_svdvals", {{2, 3, 4}}, [](const Inputs& x) { return linalg::svdvals(x[0]); }},
      {"linalg_householder_product", {{2, 4, 3}, {2, 2}},
       [](const Inputs& x) { return linalg::householder_product(x[0], x[1]); }},
      {"linalg_vector_norm", {{3, 4}},
       [](const Inputs& x) {
         return flat({linalg::vector_norm(x[0]), linalg::vector_norm(x[0], 3, {1}),
                      linalg::vector_norm(x[0], 1, {0})});
       }},
      {"linalg_matrix_norm", {{2, 3, 4}},
       [](const Inputs& x) {
         return flat({linalg::matrix_norm(x[0]), linalg::matrix_norm(x[0], "nuc"),
                      linalg::matrix_norm(x[0], 2), linalg::matrix_norm(x[0], 1)});
       }},
      {"linalg_norm", {{3, 4}}, [](const Inputs& x) { return linalg::norm(x[0], -1.0, {1}); }},
      {"linalg_cond", {{2, 3, 3}},
       [](const Inputs& x) {
         return flat({linalg::cond(x[0]), linalg::cond(well_conditioned(x[0]), "fro")});
       }},
      {"linalg_pinv", {{2, 4, 3}}, [](const Inputs& x) { return linalg::pinv(x[0]); }},
      {"linalg_matrix_power", {{3, 3}},
       [](const Inputs& x) {
         return flat({linalg::matrix_power(x[0], 3),
                      linalg::matrix_power(well_conditioned(x[0]), -2)});
       }},
      {"linalg_matrix_exp", {{2, 3, 3}},
       [](const Inputs& x) { return linalg::matrix_exp(x[0]); }},
      {"linalg_cross", {{2, 3}, {1, 3}}, [](const Inputs& x) { return linalg::cross(x[0], x[1]); }},
      {"linalg_vecdot", {{2, 3}, {2, 3}},
       [](const Inputs& x) { return linalg::vecdot(x[0], x[1]); }},
      {"linalg_multi_dot", {{3}, {3, 4}, {4, 2}},
       [](const Inputs& x) { return linalg::multi_dot({x[0], x[1], x[2]}); }},
      {"linalg_diagonal", {{3, 4}}, [](const Inputs& x) { return linalg::diagonal(x[0], -1); }},
      {"linalg_vander", {{3}}, [](const Inputs& x) { return linalg::vander(x[0], 4); }},
      {"linalg_tensorinv", {{4, 4}},
       [](const Inputs& x) { return linalg::tensorinv(well_conditioned(x[0]).reshape({4, 2, 2}), 1); }},
      {"linalg_tensorsolve", {{4, 4}, {2, 2}},
       [](const Inputs& x) {
         return linalg::tensorsolve(well_conditioned(x[0]).reshape({2, 2, 4}), x[1]);
       }},
      {"linalg_lstsq", {{2, 4, 3}, {2, 4, 2}},
       [](const Inputs& x) { return std::get<0>(linalg::lstsq(x[0], x[1])); }},
      {"pad_reflect",
       {{2, 3, 4}},
       [](const Inputs& x) { return F::pad(x[0], {2, 1, 1, 2}, F::PadMode::Reflect); }},
      {"pad_replicate",
       {{2, 3, 4}},
       [](const Inputs& x) { return F::pad(x[0], {2, 0, -1, 3}, F::PadMode::Replicate); }},
      {"pad_circular",
       {{2, 3, 4}},
       [](const Inputs& x) { return F::pad(x[0], {2, -1, 3, 1}, F::PadMode::Circular); }},
      {"unfold",
       {{2, 2, 4, 5}},
       [](const Inputs& x) { return F::unfold(x[0], {2, 3}, {1, 2}, {1, 0}, {2, 1}); }},
      {"fold",
       {{2, 8, 9}},
       [](const Inputs& x) { return F::fold(x[0], {4, 5}, {2, 2}, {1}, {1}, {2}); }},
      {"conv1d",
       {{2, 4, 6}, {4, 2, 3}, {4}},
       [](const Inputs& x) {
         return F::conv1d(x[0], x[1], x[2], with([](auto& o) { o.stride = {2}; o.padding = {1}; o.groups = 2; }));
       }},
      {"conv2d",
       {{2, 2, 4, 5}, {3, 2, 2, 3}, {3}},
       [](const Inputs& x) {
         return F::conv2d(x[0], x[1], x[2], with([](auto& o) { o.padding = {1, 0}; o.dilation = {1, 2}; }));
       }},
      {"conv2d_same",
       {{2, 4, 4}, {2, 2, 2, 2}},
       [](const Inputs& x) {
         return F::conv2d(x[0], x[1], {}, with([](auto& o) { o.padding_mode = F::ConvPadding::Same; }));
       }},
      {"conv3d",
       {{2, 2, 3, 4, 3}, {4, 1, 2, 2, 3}, {4}},
       [](const Inputs& x) {
         return F::conv3d(x[0], x[1], x[2], with([](auto& o) { o.padding = {1, 0, 1}; o.stride = {1, 2, 1}; o.groups = 2; }));
       }},
      {"conv_transpose1d",
       {{2, 4, 4}, {4, 2, 3}, {4}},
       [](const Inputs& x) {
         return F::conv_transpose1d(x[0], x[1], x[2],
                                    with([](auto& o) { o.stride = {2}; o.output_padding = {1}; o.groups = 2; }));
       }},
      {"conv_transpose2d",
       {{2, 2, 3, 4}, {2, 3, 3, 2}, {3}},
       [](const Inputs& x) {
         return F::conv_transpose2d(x[0], x[1], x[2], with([](auto& o) { o.stride = {2, 1}; o.padding = {1}; }));
       }},
      {"conv_transpose3d",
       {{2, 2, 2, 3, 2}, {2, 2, 2, 2, 3}, {2}},
       [](const Inputs& x) {
         return F::conv_transpose3d(x[0], x[1], x[2],
                                    with([](auto& o) { o.stride = {2, 1, 2}; o.padding = {1, 0, 1}; o.output_padding = {1, 0, 0}; }));
       }},
      {"max_pool1d",
       {{2, 3, 7}},
       [](const Inputs& x) { return F::max_pool1d(x[0], {3}, with([](auto& o) { o.stride = {2}; o.padding = {1}; })); }},
      {"max_pool2d",
       {{2, 2, 5, 6}},
       [](const Inputs& x) {
         return F::max_pool2d(x[0], {2, 3}, with([](auto& o) { o.padding = {1}; o.ceil_mode = true; }));
       }},
      {"max_pool2d_dilation",
       {{2, 5, 6}},
       [](const Inputs& x) {
         return F::max_pool2d(x[0], {2}, with([](auto& o) { o.stride = {1}; o.dilation = {2}; }));
       }},
      {"max_pool3d",
       {{2, 2, 4, 5, 4}},
       [](const Inputs& x) {
         return F::max_pool3d(x[0], {2, 3, 2}, with([](auto& o) { o.padding = {1}; o.dilation = {1, 1, 2}; o.ceil_mode = true; }));
       }},
      {"avg_pool1d",
       {{2, 3, 7}},
       [](const Inputs& x) {
         return F::avg_pool1d(x[0], {3}, with([](auto& o) { o.stride = {2}; o.padding = {1}; o.ceil_mode = true; }));
       }},
      {"avg_pool2d",
       {{2, 2, 5, 6}},
       [](const Inputs& x) {
         return F::avg_pool2d(x[0], {3, 2}, with([](auto& o) { o.padding = {1}; o.count_include_pad = false; }));
       }},
      {"avg_pool3d",
       {{2, 2, 4, 5, 4}},
       [](const Inputs& x) {
         return F::avg_pool3d(x[0], {2, 3, 2}, with([](auto& o) { o.padding = {1}; o.count_include_pad = false; }));
       }},
      {"adaptive_avg_pool1d",
       {{2, 3, 7}},
       [](const Inputs& x) { return F::adaptive_avg_pool1d(x[0], {3}); }},
      {"adaptive_avg_pool2d",
       {{2, 2, 5, 6}},
       [](const Inputs& x) { return F::adaptive_avg_pool2d(x[0], {3, 4}); }},
      {"adaptive_avg_pool3d",
       {{2, 2, 5, 4, 6}},
       [](const Inputs& x) { return F::adaptive_avg_pool3d(x[0], {3, 3, 4}); }},
      {"adaptive_max_pool1d",
       {{2, 3, 7}},
       [](const Inputs& x) { return F::adaptive_max_pool1d_with_indices(x[0], {3}).first; }},
      {"adaptive_max_pool2d",
       {{2, 2, 5, 6}},
       [](const Inputs& x) { return F::adaptive_max_pool2d_with_indices(x[0], {2, 4}).first; }},
      {"adaptive_max_pool3d",
       {{2, 2, 5, 4, 6}},
       [](const Inputs& x) { return F::adaptive_max_pool3d_with_indices(x[0], {3, 2, 4}).first; }},
      {"interpolate",
       {{2, 2, 3, 4}},
       [](const Inputs& x) {
         return F::interpolate(x[0], with([](auto& o) { o.size = {5, 3}; o.mode = F::InterpolateMode::Bilinear; }));
       }},
      {"interpolate_nearest_exact",
       {{2, 2, 5}},
       [](const Inputs& x) {
         return F::interpolate(x[0], with([](auto& o) { o.size = {7}; o.mode = F::InterpolateMode::NearestExact; }));
       }},
      {"interpolate_bicubic",
       {{1, 2, 3, 4}},
       [](const Inputs& x) {
         return F::interpolate(x[0], with([](auto& o) { o.scale_factor = {2.0, 1.5}; o.mode = F::InterpolateMode::Bicubic; o.align_corners = true; }));
       }},
      {"pixel_shuffle", {{2, 8, 2, 3}}, [](const Inputs& x) { return F::pixel_shuffle(x[0], 2); }},
      {"pixel_unshuffle",
       {{2, 2, 4, 2}},
       [](const Inputs& x) { return F::pixel_unshuffle(x[0], 2); }},
      {"group_norm",
       {{2, 4, 3, 2}, {4}, {4}},
       [](const Inputs& x) { return F::group_norm(x[0], 2, x[1], x[2]); }},
      // recurrent layers (src/nn/rnn.cpp): the sequence ops' outputs
      // flattened into one tensor; the params are every input after the state.
      {"rnn_tanh_cell",
       {{2, 3}, {2, 2}, {2, 3}, {2, 2}, {2}, {2}},
       [](const Inputs& x) { return F::rnn_tanh_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }},
      {"rnn_relu_cell",
       {{2, 3}, {2, 2}, {2, 3}, {2, 2}, {2}, {2}},
       [](const Inputs& x) { return F::rnn_relu_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }},
      {"lstm_cell",
       {{2, 3}, {2, 2}, {2, 2}, {8, 3}, {8, 2}, {8}, {8}},
       [](const Inputs& x) {
         const auto [h, c] = F::lstm_cell(x[0], {x[1], x[2]}, x[3], x[4], x[5], x[6]);
         return cat({h.reshape({-1}), c.reshape({-1})});
       }},
      {"gru_cell",
       {{2, 3}, {2, 2}, {6, 3}, {6, 2}, {6}, {6}},
       [](const Inputs& x) { return F::gru_cell(x[0], x[1], x[2], x[3], x[4], x[5]); }},
      {"rnn_tanh",
       {{3, 2, 2}, {2, 2, 2}, {2, 2}, {2, 2}, {2}, {2}, {2, 2}, {2, 2}, {2}, {2}},
       [](const Inputs& x) {
         const auto [out, h] =
             F::rnn_tanh(x[0], x[1], Inputs(x.begin() + 2, x.end()), {.num_layers = 2});
         return cat({out.reshape({-1}), h.reshape({-1})});
       }},
      {"rnn_relu",
       {{2, 3, 2}, {2, 2, 2}, {2, 2}, {2, 2}, {2, 2}, {2, 2}},
       [](const Inputs& x) {
         const auto [out, h] = F::rnn_relu(x[0], x[1], Inputs(x.begin() + 2, x.end()),
                                           {.has_biases = false, .bidirectional = true, .batch_first = true});
         return cat({out.reshape({-1}), h.reshape({-1})});
       }},
      {"lstm",
       {{2, 2, 2}, {2, 2, 2}, {2, 2, 2}, {8, 2}, {8, 2}, {8}, {8}, {8, 2}, {8, 2}, {8}, {8}},
       [](const Inputs& x) {
         const auto [out, h, c] =
             F::lstm(x[0], {x[1], x[2]}, Inputs(x.begin() + 3, x.end()), {.bidirectional = true});
         return cat({out.reshape({-1}), h.reshape({-1}), c.reshape({-1})});
       }},
      {"gru",
       {{3, 2}, {2, 2}, {6, 2}, {6, 2}, {6}, {6}, {6, 2}, {6, 2}, {6}, {6}},
       [](const Inputs& x) {
         const auto [out, h] = F::gru(x[0], x[1], Inputs(x.begin() + 2, x.end()), {.num_layers = 2});
         return cat({out.reshape({-1}), h.reshape({-1})});
       }},
  };
  // Masked ops (src/ops/masked.cpp): composites, checked with masks that
  // leave at least two elements of each slice in (a fully masked-out slice
  // gives an infinite or NaN output, which finite differences cannot read),
  // and one that masks a whole row out where the output stays finite.
  const auto keep = [] { return idx({1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1}, {3, 4}).ne(0); };
  const auto keep_row = [] { return idx({1, 0, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1}, {3, 4}).ne(0); };
  const auto keep_columns = [] { return idx({1, 1, 0, 1}, {4}).ne(0); };
  const std::vector<GradCase> masked_cases = {
      {"masked_sum",
       {m},
       [=](const Inputs& x) { return masked::sum(x[0], {1}, false, {}, keep_row()); }},
      {"masked_prod",
       {m},
       [=](const Inputs& x) { return masked::prod(x[0], {}, true, {}, keep_row()); }},
      {"masked_amax",
       {m},
       [=](const Inputs& x) { return masked::amax(x[0], {-1}, false, {}, keep()); }},
      {"masked_amin",
       {m},
       [=](const Inputs& x) {
         return masked::amin(x[0], {0, 1}, true, {}, keep());
       }},
      {"masked_mean",
       {m},
       [=](const Inputs& x) { return masked::mean(x[0], {1}, true, {}, keep_columns()); }},
      {"masked_median",
       {m},
       [=](const Inputs& x) { return masked::median(x[0], 1, false, {}, keep()); }},
      {"masked_logsumexp",
       {m},
       [=](const Inputs& x) { return masked::logsumexp(x[0], {1}, false, {}, keep()); }},
      {"masked_norm",
       {m},
       [=](const Inputs& x) { return masked::norm(x[0], 3, {1}, false, {}, keep()); }},
      {"masked_var",
       {m},
       [=](const Inputs& x) { return masked::var(x[0], {1}, 1, false, {}, keep()); }},
      {"masked_std_dev",
       {m},
       [=](const Inputs& x) {
         return masked::std_dev(x[0], {0, 1}, 0, false, {}, keep());
       }},
      {"masked_cumsum",
       {m},
       [=](const Inputs& x) { return masked::cumsum(x[0], 1, {}, keep_row()); }},
      {"masked_cumprod",
       {m},
       [=](const Inputs& x) { return masked::cumprod(x[0], 0, {}, keep_row()); }},
      {"masked_softmax",
       {m},
       [=](const Inputs& x) { return masked::softmax(x[0], 1, {}, keep()); }},
      {"masked_softmin",
       {m},
       [=](const Inputs& x) { return masked::softmin(x[0], -1, {}, keep_columns()); }},
      {"masked_log_softmax",
       {m},
       [=](const Inputs& x) {
         // -inf at the masked-out elements: compared where finite.
         const Tensor out = masked::log_softmax(x[0], 1, {}, keep());
         return where(keep(), out, zeros_like(out));
       }},
      {"masked_normalize",
       {m},
       [=](const Inputs& x) { return masked::normalize(x[0], 2, 1, 1e-12, {}, keep()); }},
      {"masked_logaddexp",
       {m, m},
       [=](const Inputs& x) {
         // Complementary masks: one operand of each pair is -inf.
         const Tensor drop = idx({0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0}, {3, 4}).ne(0);
         return masked::logaddexp(x[0], x[1], {}, keep(), drop);
       }},
  };
  t.insert(t.end(), masked_cases.begin(), masked_cases.end());
  // Complex ops: inputs enter as complex(x0, x1) and complex outputs leave
  // as view_as_real, so the real gradcheck covers the whole complex Jacobian
  // (PyTorch's gradcheck of complex functions checks the same two parts).
  const auto z = [](const Inputs& x) { return complex(x[0], x[1]); };
  const auto parts = [](const Tensor& c) { return view_as_real(c); };
  const std::vector<GradCase> complex_cases = {
      {"view_as_real", {m, m}, [=](const Inputs& x) { return view_as_real(z(x).t()) * 2.0; }},
      {"view_as_complex",
       {{3, 4, 2}},
       [=](const Inputs& x) {
         // A copy: view_as_complex needs an even offset and unit last stride.
         const Tensor c = view_as_complex(x[0].clone());
         return parts(c * c);
       }},
      {"real", {m, m}, [=](const Inputs& x) { return real(z(x) * z(x)); }},
      {"imag", {m, m}, [=](const Inputs& x) { return imag(z(x) * z(x)); }},
      {"complex", {m, {4}}, [=](const Inputs& x) { return parts(complex(x[0], x[1])); }},
      {"polar", {m, m}, [=](const Inputs& x) { return parts(polar(x[0], x[1])); }},
      {"conj", {m, m}, [=](const Inputs& x) { return parts(conj(z(x)) * z(x).t().t()); }},
      {"conj_physical", {m, m}, [=](const Inputs& x) { return parts(conj_physical(z(x)) * 3.0); }},
      {"resolve_conj", {m, m}, [=](const Inputs& x) { return parts(resolve_conj(z(x))); }},
      {"angle", {m, m}, [=](const Inputs& x) { return angle(z(x)); }, Domain::Positive},
      {"complex_arithmetic",
       {m, m},
       [=](const Inputs& x) {
         const Tensor a = z(x), b = z(x).flip({1});
         return parts(a * b - a / (b + 3.0) + exp(a) + reciprocal(a + 4.0) + (-a));
       }},
      {"complex_abs_sum_mean",
       {m, m},
       [=](const Inputs& x) {
         return abs(z(x) + 2.0) + parts(z(x).sum({0}, true) + z(x).mean()).sum();
       }},
      {"fft_c2c", {m, m}, [=](const Inputs& x) { return parts(fft::fft(z(x), std::nullopt, 0)); }},
      {"fft_fft", {m}, [=](const Inputs& x) { return parts(fft::fft(x[0], 5)); }},
      {"fft_ifft", {m, m}, [=](const Inputs& x) { return parts(fft::ifft(z(x), 3, -1, "ortho")); }},
      {"fft_rfft", {m}, [=](const Inputs& x) { return parts(fft::rfft(x[0], 7, 0)); }},
      {"fft_irfft", {m, m}, [=](const Inputs& x) { return fft::irfft(z(x)); }},
      {"fft_irfft_odd", {m, m}, [=](const Inputs& x) { return fft::irfft(z(x), 5, 0, "forward"); }},
      {"fft_hfft", {m, m}, [=](const Inputs& x) { return fft::hfft(z(x), 7); }},
      {"fft_ihfft", {m}, [=](const Inputs& x) { return parts(fft::ihfft(x[0])); }},
      {"fft_fft2", {m, m}, [=](const Inputs& x) { return parts(fft::fft2(z(x))); }},
      {"fft_ifft2",
       {m, m},
       [=](const Inputs& x) {
         return parts(fft::ifft2(z(x), std::vector<int64_t>{2, 5}));
       }},
      {"fft_rfft2", {m}, [=](const Inputs& x) { return parts(fft::rfft2(x[0])); }},
      {"fft_irfft2",
       {m, m},
       [=](const Inputs& x) {
         return fft::irfft2(z(x), std::vector<int64_t>{3, 5});
       }},
      {"fft_hfft2", {m, m}, [=](const Inputs& x) { return fft::hfft2(z(x)); }},
      {"fft_ihfft2", {m}, [=](const Inputs& x) { return parts(fft::ihfft2(x[0])); }},
      {"fft_fftn", {{2, 3, 4}}, [=](const Inputs& x) { return parts(fft::fftn(x[0])); }},
      {"fft_ifftn", {m, m}, [=](const Inputs& x) { return parts(fft::ifftn(z(x))); }},
      {"fft_rfftn", {{2, 3, 4}}, [=](const Inputs& x) { return parts(fft::rfftn(x[0])); }},
      {"fft_irfftn", {m, m}, [=](const Inputs& x) { return fft::irfftn(z(x)); }},
      {"fft_hfftn", {m, m}, [=](const Inputs& x) { return fft::hfftn(z(x)); }},
      {"fft_ihfftn", {m}, [=](const Inputs& x) { return parts(fft::ihfftn(x[0])); }},
      {"fft_fftshift", {m}, [=](const Inputs& x) { return fft::fftshift(x[0]); }},
      {"fft_ifftshift", {m, m}, [=](const Inputs& x) { return parts(fft::ifftshift(z(x))); }},
  };
  t.insert(t.end(), complex_cases.begin(), complex_cases.end());
  return t;
}

TEST(Gradcheck, EveryDifferentiableOpEveryLayout) {
  Generator gen(99);
  int64_t cases = 0;
  for (const GradCase& c : grad_table()) {
    for (Layout layout : kAllLayouts) {
      Inputs in;
      for (const auto& shape : c.shapes) {
        in.push_back(make_input(shape, kFloat64, layout, c.domain, gen).detach().requires_grad_());
      }
      try {
        EXPECT_TRUE(autograd::gradcheck(c.fn, in, c.eps)) << c.name;
      } catch (const std::exception& e) {
        ADD_FAILURE() << c.name << " [" << layout_name(layout) << "]: " << e.what();
      }
      ++cases;
    }
  }
  std::printf("gradcheck: %lld op x layout cases ran\n", static_cast<long long>(cases));
  EXPECT_GT(cases, 300);
}

// The table holds a case for every listed op with a gradient but those only
// backward formulas run (SecondDerivatives* below reach them).
TEST(Gradcheck, EveryDifferentiableListedOpHasACase) {
  std::vector<std::string> names;
  for (const GradCase& c : grad_table()) names.push_back(c.name);
  const std::vector<std::string> missing = ops_without_a_case(
      names, [](const detail::OpInfo& op) { return op.has_grad && !op.internal; });
  EXPECT_TRUE(missing.empty()) << "no gradcheck case for: " << ::testing::PrintToString(missing);
}

// Second derivatives: gradcheck of a function that itself returns a
// gradient built with create_graph.
TEST(Gradcheck, SecondDerivativesThroughElementwiseMatmulAndViews) {
  Generator gen(7);
  const std::vector<std::pair<std::string, Fn>> fns = {
      {"exp_mul", [](const Inputs& x) { return exp(x[0]) * x[1]; }},
      {"tanh_sigmoid", [](const Inputs& x) { return tanh(x[0]) * sigmoid(x[1]); }},
      {"div_pow", [](const Inputs& x) { return x[0].pow(3.0) / (x[1] * x[1] + 1.0); }},
      {"gelu_silu", [](const Inputs& x) { return gelu(x[0]) + silu(x[1]); }},
      {"log_sqrt",
       [](const Inputs& x) { return log(x[0] * x[0] + 1.0) * sqrt(x[1] * x[1] + 1.0); }},
      {"matmul", [](const Inputs& x) { return matmul(x[0], x[1].t()).square(); }},
      {"softmax", [](const Inputs& x) { return (x[0] * x[1]).softmax(1); }},
      // A part's gradient is embedded in zeros (view_backward), whose own
      // gradient selects the part again.
      {"narrow_select",
       [](const Inputs& x) {
         return (x[0].narrow(1, 1, 2) * x[1].select(0, 2).narrow(0, 0, 2)).exp();
       }},
  };
  for (const auto& [name, f] : fns) {
    Inputs in = {make_input({3, 4}, kFloat64, Layout::Contiguous, Domain::Unit, gen)
                     .detach()
                     .requires_grad_(),
                 make_input({3, 4}, kFloat64, Layout::Transposed, Domain::Unit, gen)
                     .detach()
                     .requires_grad_()};
    auto first_grad = [f](const Inputs& x) {
      Tensor y = f(x);
      auto g = autograd::grad({(y * y).sum()}, x, {}, std::nullopt, /*create_graph=*/true);
      return g[0] + g[1] * 2.0;
    };
    try {
      EXPECT_TRUE(autograd::gradcheck(first_grad, in, 1e-6, 1e-5, 1e-3)) << name;
    } catch (const std::exception& e) {
      ADD_FAILURE() << name << ": " << e.what();
    }
  }
}

// cumprod's second derivative where its input holds zeros: the first-order
// formula sets zeros to 1, so its own gradient missed the products past a
// zero (PyTorch's OpInfo gradgrad differed by 2.6).
TEST(Gradcheck, SecondDerivativeOfCumprodAtZeros) {
  const Tensor x =
      tensor<double>({0.5, 0.0, -1.5, 2.0, 0.0, 1.25, 0.0, 0.75, -0.5, 1.5, 2.0, 0.0}, {3, 4})
          .requires_grad_();
  auto first_grad = [](const Inputs& in) {
    const Tensor y = in[0].cumprod(1);
    return autograd::grad({(y * y).sum()}, in, {}, std::nullopt, /*create_graph=*/true)[0];
  };
  EXPECT_TRUE(autograd::gradcheck(first_grad, {x}, 1e-6, 1e-5, 1e-3));
}

TEST(Gradcheck, ReportsAWrongGradient) {
  // A function whose recorded graph is deliberately not its value: the
  // detached factor is missing from the analytic gradient.
  Tensor x = randn({3}, kFloat64).requires_grad_();
  auto wrong = [](const Inputs& in) { return in[0] * in[0].detach(); };
  EXPECT_THROW(autograd::gradcheck(wrong, {x}), autograd::GradcheckError);
}

}  // namespace
}  // namespace stride::testing
