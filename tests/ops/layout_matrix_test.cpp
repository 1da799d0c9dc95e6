// The layout matrix: every op, with inputs in every layout (contiguous,
// transposed, step-2 slice, nonzero offset, expanded) and outputs / in-place
// selves in every writable layout inside sentinel-filled buffers. The result
// must equal the op applied to contiguous copies of the same inputs, and
// nothing outside an output view may be written. Shapes include size-0 and
// size-1 dims.
#include <functional>
#include <limits>

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

struct OpCase {
  std::string name;
  std::vector<DimVector> shapes;  // one per input
  std::function<Tensor(const Inputs&)> fn;
  std::function<void(Tensor&, const Inputs&)> out_fn = nullptr;      // out= form
  std::function<void(Tensor&, const Inputs&)> inplace_fn = nullptr;  // self = inputs[0]
  Domain domain = Domain::Any;
  ScalarType dtype = kFloat32;
  double rtol = 1e-6;
  // The result's shape depends on the values (nonzero, unique): no meta run.
  bool data_dependent_shape = false;
};

#define UNARY(op, dom)                                                                       \
  OpCase {                                                                                   \
#op, {{4, 6}}, [](const Inputs& in) { return op(in[0]); },                                 \
        [](Tensor& out, const Inputs& in) { op##_out(out, in[0]); },                           \
        [](Tensor& self, const Inputs&) { self.op##_(); }, dom \
  }

#define BINARY(op, dom)                                                                            \
  OpCase {                                                                                         \
#op,                                                                                           \
        {{4, 6 }, {4, 6 } },                                                                       \
          [](const Inputs&                                                                         \
                 in) { return op(in[0], in[1]); },                                                 \
                                                [](Tensor & out,                                   \
                                                   const Inputs&                                   \
                                                       in) { op##_out(out, in[0], in[1]); },       \
                                                                                          nullptr, \
                                                                                          dom      \
  }

#define SPECIAL_UNARY(op, dom)                                                                    \
  OpCase {                                                                                        \
#op, {{4, 6 } },                                                                              \
          [](const Inputs& in) { return op(in[0]); }, [](Tensor & out,                            \
                                                         const Inputs&                            \
                                                             in) { op##_out(out, in[0]); },       \
                                                                                         nullptr, \
                                                                                         dom      \
  }

std::vector<OpCase> op_table() {
  std::vector<OpCase> t = {
  // Every unary op of the list (src/core/op_list.h).
#define STRIDE_FLOAT_UNARY_CASE(name, which, backward, domain) UNARY(name, Domain::domain),
#define STRIDE_SAME_UNARY_CASE(name, which, backward, domain) UNARY(name, Domain::domain),
      STRIDE_FLOAT_UNARY_OPS(STRIDE_FLOAT_UNARY_CASE) STRIDE_SAME_UNARY_OPS(STRIDE_SAME_UNARY_CASE)
#undef STRIDE_SAME_UNARY_CASE
#undef STRIDE_FLOAT_UNARY_CASE
  // Every binary op of the list.
#define STRIDE_BINARY_CASE(name, dispatch) BINARY(name, Domain::Any),
          STRIDE_BINARY_OPS(STRIDE_BINARY_CASE)
#undef STRIDE_BINARY_CASE
#define STRIDE_FLOAT_BINARY_CASE(name, grad_a, grad_b, domain) BINARY(name, Domain::domain),
              STRIDE_FLOAT_BINARY_OPS(STRIDE_FLOAT_BINARY_CASE)
#undef STRIDE_FLOAT_BINARY_CASE
                  BINARY(div, Domain::Positive),
      BINARY(pow, Domain::Positive),
  };
  auto add_case = [&](OpCase c) { t.push_back(std::move(c)); };
  add_case({"add",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return add(in[0], in[1], 0.5); },
            [](Tensor& out, const Inputs& in) { add_out(out, in[0], in[1], 0.5); },
            [](Tensor& self, const Inputs& in) { self.add_(in[1], 0.5); }});
  add_case({"sub",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return sub(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { sub_out(out, in[0], in[1]); },
            [](Tensor& self, const Inputs& in) { self.sub_(in[1]); }});
  add_case({"mul_",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return mul(in[0], in[1]); },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.mul_(in[1]); }});
  add_case({"div_",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return div(in[0], in[1]); },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.div_(in[1]); },
            Domain::Positive});
  // Divisors of both signs (Any), so that fmod and remainder differ.
  add_case({"fmod",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return fmod(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { fmod_out(out, in[0], in[1]); },
            [](Tensor& self, const Inputs& in) { self.fmod_(in[1]); }});
  add_case({"remainder",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return remainder(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { remainder_out(out, in[0], in[1]); },
            [](Tensor& self, const Inputs& in) { self.remainder_(in[1]); }});
  add_case({"remainder_scalar",
            {{4, 6}},
            [](const Inputs& in) { return in[0].remainder(-0.75); },
            nullptr,
            [](Tensor& self, const Inputs&) { self.remainder_(-0.75); }});
  add_case(
      {"remainder_of_a_number", {{4, 6}}, [](const Inputs& in) { return remainder(-1.5, in[0]); }});
  add_case({"div_floor", {{4, 6}, {4, 6}}, [](const Inputs& in) {
              return div(in[0], in[1], "floor") + div(in[0], in[1], "trunc");
            }});
  add_case({"frexp", {{4, 6}}, [](const Inputs& in) {
              auto [mantissa, exponent] = frexp(in[0]);
              return flat({mantissa, exponent});
            }});
  add_case({"add_broadcast_row",
            {{4, 6}, {6}},
            [](const Inputs& in) { return in[0] + in[1]; },
            [](Tensor& out, const Inputs& in) { add_out(out, in[0], in[1]); },
            [](Tensor& self, const Inputs& in) { self.add_(in[1]); }});
  add_case({"mul_broadcast_col",
            {{4, 6}, {4, 1}},
            [](const Inputs& in) { return in[0] * in[1]; },
            [](Tensor& out, const Inputs& in) { mul_out(out, in[0], in[1]); },
            [](Tensor& self, const Inputs& in) { self.mul_(in[1]); }});
  add_case({"add_size0",
            {{0, 6}, {0, 6}},
            [](const Inputs& in) { return in[0] + in[1]; },
            [](Tensor& out, const Inputs& in) { add_out(out, in[0], in[1]); },
            [](Tensor& self, const Inputs& in) { self.add_(in[1]); }});
  add_case({"mul_size1",
            {{1, 6}, {1, 6}},
            [](const Inputs& in) { return in[0] * in[1]; },
            [](Tensor& out, const Inputs& in) { mul_out(out, in[0], in[1]); },
            [](Tensor& self, const Inputs& in) { self.mul_(in[1]); }});
  add_case({"mul_scalar",
            {{4, 6}},
            [](const Inputs& in) { return in[0] * 3.0; },
            nullptr,
            [](Tensor& self, const Inputs&) { self.mul_(3.0); }});
  add_case({"pow_scalar",
            {{4, 6}},
            [](const Inputs& in) { return in[0].pow(2.5); },
            nullptr,
            [](Tensor& self, const Inputs&) { self.pow_(2.5); },
            Domain::Positive});
  add_case({"clamp",
            {{4, 6}},
            [](const Inputs& in) { return clamp(in[0], -0.5, 0.5); },
            [](Tensor& out, const Inputs& in) { clamp_out(out, in[0], -0.5, 0.5); },
            [](Tensor& self, const Inputs&) { self.clamp_(-0.5, 0.5); }});
  // Comparisons on integers (so that ties occur) produce bool outputs.
  // The integer ops on int64 (the draws' shift counts in [-5, 6) include
  // negative ones, which shift every bit out).
#define STRIDE_INTEGER_BINARY_CASE(name, dispatch)                                \
  add_case({#name,                                                                \
            {{4, 6}, {4, 6}},                                                     \
            [](const Inputs& in) { return name(in[0], in[1]); },                  \
            [](Tensor& out, const Inputs& in) { name##_out(out, in[0], in[1]); }, \
            [](Tensor& self, const Inputs& in) { self.name##_(in[1]); },          \
            Domain::Any,                                                          \
            kInt64});
  STRIDE_INTEGER_BINARY_OPS(STRIDE_INTEGER_BINARY_CASE)
#undef STRIDE_INTEGER_BINARY_CASE
  add_case({"bitwise_not",
            {{4, 6}},
            [](const Inputs& in) { return bitwise_not(in[0]); },
            nullptr,
            [](Tensor& self, const Inputs&) { self.bitwise_not_(); },
            Domain::Any,
            kInt64});
  add_case({"eq",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return eq(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { eq_out(out, in[0], in[1]); },
            nullptr,
            Domain::Any,
            kInt64});
  add_case({"ne",
            {{4, 6}, {6}},
            [](const Inputs& in) { return ne(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { ne_out(out, in[0], in[1]); },
            nullptr,
            Domain::Any,
            kInt64});
  add_case({"lt",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return lt(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { lt_out(out, in[0], in[1]); }});
  add_case({"le",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return le(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { le_out(out, in[0], in[1]); },
            nullptr,
            Domain::Any,
            kInt64});
  add_case({"gt",
            {{4, 6}, {4, 1}},
            [](const Inputs& in) { return gt(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { gt_out(out, in[0], in[1]); }});
  add_case({"ge",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return ge(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { ge_out(out, in[0], in[1]); },
            nullptr,
            Domain::Any,
            kInt32});
  add_case({"add_int64",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return in[0] + in[1]; },
            [](Tensor& out, const Inputs& in) { add_out(out, in[0], in[1]); },
            [](Tensor& self, const Inputs& in) { self.add_(in[1]); },
            Domain::Any,
            kInt64});
  add_case({"where",
            {{4, 6}, {4, 6}, {4, 6}},
            [](const Inputs& in) { return where(in[0].gt(0), in[1], in[2]); },
            [](Tensor& out, const Inputs& in) { where_out(out, in[0].gt(0), in[1], in[2]); }});
  add_case({"masked_fill",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return masked_fill(in[0], in[1].gt(0), -7.0); },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.masked_fill_(in[1].gt(0), -7.0); }});
  add_case({"tril",
            {{3, 4, 6}},
            [](const Inputs& in) { return tril(in[0], 1); },
            nullptr,
            [](Tensor& self, const Inputs&) { self.tril_(1); }});
  add_case({"triu",
            {{4, 6}},
            [](const Inputs& in) { return triu(in[0], -1); },
            nullptr,
            [](Tensor& self, const Inputs&) { self.triu_(-1); }});
  // Optimizer updates: the in-place self is the parameter (any layout).
  add_case({"lerp_",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return lerp(in[0], in[1], 0.3); },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.lerp_(in[1], 0.3); }});
  add_case({"addcmul_",
            {{4, 6}, {4, 6}, {4, 6}},
            [](const Inputs& in) { return in[0] + in[1] * in[2] * 0.5; },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.addcmul_(in[1], in[2], 0.5); },
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"addcdiv_",
            {{4, 6}, {4, 6}, {4, 6}},
            [](const Inputs& in) { return in[0] + in[1] / in[2] * -0.25; },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.addcdiv_(in[1], in[2], -0.25); },
            Domain::Positive,
            kFloat32,
            1e-5});
  add_case({"fill_",
            {{4, 6}},
            [](const Inputs& in) { return full_like(in[0], 2.5); },
            nullptr,
            [](Tensor& self, const Inputs&) { self.fill_(2.5); }});
  add_case({"zero_",
            {{4, 6}},
            [](const Inputs& in) { return zeros_like(in[0]); },
            nullptr,
            [](Tensor& self, const Inputs&) { self.zero_(); }});
  // Random fills draw in row-major order, so any layout gets the same values.
  add_case({"uniform_",
            {{4, 6}},
            [](const Inputs& in) {
              Generator g(7);
              return empty_like(in[0]).uniform_(-1, 1, &g);
            },
            nullptr,
            [](Tensor& self, const Inputs&) {
              Generator g(7);
              self.uniform_(-1, 1, &g);
            }});
  add_case({"normal_",
            {{4, 6}},
            [](const Inputs& in) {
              Generator g(8);
              return empty_like(in[0]).normal_(0, 2, &g);
            },
            nullptr,
            [](Tensor& self, const Inputs&) {
              Generator g(8);
              self.normal_(0, 2, &g);
            }});
  add_case({"random_",
            {{4, 6}},
            [](const Inputs& in) {
              Generator g(9);
              return empty_like(in[0]).random_(0, 10, &g);
            },
            nullptr,
            [](Tensor& self, const Inputs&) {
              Generator g(9);
              self.random_(0, 10, &g);
            }});
  add_case({"bernoulli_",
            {{4, 6}},
            [](const Inputs& in) {
              Generator g(10);
              return empty_like(in[0]).bernoulli_(0.3, &g);
            },
            nullptr,
            [](Tensor& self, const Inputs&) {
              Generator g(10);
              self.bernoulli_(0.3, &g);
            }});
  add_case({"copy_",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return in[1].clone(); },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.copy_(in[1]); }});
  add_case({"copy_convert",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return in[1].to(kInt64).to(kFloat32); },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.copy_(in[1].to(kInt64)); }});
  add_case({"copy_broadcast",
            {{4, 6}, {6}},
            [](const Inputs& in) {
              return in[1].expand({4, 6}).clone();
            },
            nullptr,
            [](Tensor& self, const Inputs& in) { self.copy_(in[1]); }});
  // Reductions (inputs in every layout; out= for the ones that have it).
  add_case({"sum_dim0",
            {{4, 6}},
            [](const Inputs& in) { return sum(in[0], {0}); },
            [](Tensor& out, const Inputs& in) { sum_out(out, in[0], {0}); },
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"sum_dim1_keep",
            {{4, 6}},
            [](const Inputs& in) { return sum(in[0], {1}, true); },
            [](Tensor& out, const Inputs& in) { sum_out(out, in[0], {1}, true); },
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"sum_all",
            {{3, 4, 6}},
            [](const Inputs& in) { return in[0].sum(); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"sum_size0", {{0, 6}}, [](const Inputs& in) { return sum(in[0], {0}); }});
  add_case({"mean_dims",
            {{3, 4, 6}},
            [](const Inputs& in) {
              return mean(in[0], {0, 2});
            },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"var",
            {{4, 6}},
            [](const Inputs& in) { return var(in[0], {1}); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"amax",
            {{4, 6}},
            [](const Inputs& in) { return amax(in[0], {1}); },
            [](Tensor& out, const Inputs& in) { amax_out(out, in[0], {1}); }});
  add_case({"amin_all", {{4, 6}}, [](const Inputs& in) { return amin(in[0]); }});
  add_case({"max_values", {{4, 6}}, [](const Inputs& in) { return max(in[0], 0).first; }});
  add_case({"max_indices", {{4, 6}}, [](const Inputs& in) { return max(in[0], 1).second; }});
  add_case({"argmin", {{4, 6}}, [](const Inputs& in) { return argmin(in[0], 0, true); }});
  add_case({"all", {{4, 6}}, [](const Inputs& in) { return all(in[0].gt(-0.5), {1}); }});
  add_case({"any_all", {{4, 6}}, [](const Inputs& in) { return any(in[0].gt(1.5)); }});
  add_case({"cumsum", {{4, 6}}, [](const Inputs& in) { return cumsum(in[0], 1); }});
  add_case({"cumsum_dim0", {{4, 6}}, [](const Inputs& in) { return cumsum(in[0], 0); }});
  add_case({"cumprod", {{4, 6}}, [](const Inputs& in) { return cumprod(in[0], 0); }});
  add_case({"sort_values", {{4, 6}}, [](const Inputs& in) { return sort(in[0], 0).first; }});
  add_case(
      {"sort_indices", {{4, 6}}, [](const Inputs& in) { return sort(in[0], 1, true).second; }});
  add_case({"argsort", {{4, 6}}, [](const Inputs& in) { return argsort(in[0]); }});
  add_case({"topk_values", {{4, 6}}, [](const Inputs& in) { return topk(in[0], 3).first; }});
  add_case(
      {"topk_indices", {{4, 6}}, [](const Inputs& in) { return topk(in[0], 2, 0, false).second; }});
  add_case({"multinomial",
            {{4, 6}},
            [](const Inputs& in) {
              Generator gen(7);
              return multinomial(in[0], 3, false, &gen);
            },
            nullptr,
            nullptr,
            Domain::Positive});
  // The reductions, scans and order statistics beyond sum and max.
  add_case({"prod", {{4, 6}}, [](const Inputs& in) { return prod(in[0], 1); }});
  add_case({"prod_all", {{4, 6}}, [](const Inputs& in) { return prod(in[0]); }});
  add_case({"std_dev", {{4, 6}}, [](const Inputs& in) { return std_dev(in[0], {0}, 0.5); }});
  add_case({"var_mean", {{4, 6}}, [](const Inputs& in) { return var_mean(in[0], {1}).first; }});
  add_case({"std_mean", {{4, 6}}, [](const Inputs& in) { return std_mean(in[0]).second; }});
  add_case({"nansum", {{4, 6}}, [](const Inputs& in) { return nansum(in[0].log(), {1}); }});
  add_case({"nanmean", {{4, 6}}, [](const Inputs& in) { return nanmean(in[0].log(), {0}); }});
  add_case({"count_nonzero", {{4, 6}}, [](const Inputs& in) {
              return count_nonzero(in[0].gt(0), {1});
            }});
  add_case({"aminmax", {{4, 6}}, [](const Inputs& in) { return aminmax(in[0], 0).second; }});
  add_case({"median", {{4, 6}}, [](const Inputs& in) { return median(in[0], 1).first; }});
  add_case({"nanmedian", {{4, 6}}, [](const Inputs& in) { return nanmedian(in[0].log()); }});
  add_case({"kthvalue", {{4, 6}}, [](const Inputs& in) { return kthvalue(in[0], 2, 0).second; }});
  add_case({"mode", {{4, 6}}, [](const Inputs& in) { return mode(in[0].round(), 1).first; }});
  add_case({"quantile", {{4, 6}}, [](const Inputs& in) {
              return quantile(in[0], tensor<float>({0.25f, 0.5f}), 1);
            }});
  add_case({"nanquantile", {{4, 6}}, [](const Inputs& in) {
              return nanquantile(in[0].log(), full({}, 0.3), std::nullopt, false, "midpoint");
            }});
  add_case({"msort", {{4, 6}}, [](const Inputs& in) { return msort(in[0]); }});
  add_case({"cummax", {{4, 6}}, [](const Inputs& in) { return cummax(in[0], 1).second; }});
  add_case({"cummin", {{4, 6}}, [](const Inputs& in) { return cummin(in[0], 0).first; }});
  add_case({"logcumsumexp", {{4, 6}}, [](const Inputs& in) { return logcumsumexp(in[0], 1); }});
  // The scatters and the index_* ops.
  add_case({"scatter", {{4, 6}, {4, 6}}, [](const Inputs& in) {
              return scatter(in[0], 1, tensor<int64_t>({0, 4, 1, 5, 2, 3, 3, 0}, {4, 2}), in[1]);
            }});
  add_case({"scatter_reduce", {{4, 6}, {4, 6}}, [](const Inputs& in) {
              return scatter_reduce(in[0], 1, tensor<int64_t>({0, 0, 1, 5, 2, 2, 3, 3}, {4, 2}),
                                    in[1], "mean", false);
            }});
  add_case({"index_add", {{4, 6}, {4, 2}}, [](const Inputs& in) {
              return index_add(in[0], 1, tensor<int64_t>({5, 5}), in[1], 2);
            }});
  add_case({"index_copy", {{4, 6}, {2, 6}}, [](const Inputs& in) {
              return index_copy(in[0], 0, tensor<int64_t>({3, 0}), in[1]);
            }});
  add_case({"index_fill", {{4, 6}}, [](const Inputs& in) {
              return index_fill(in[0], 1, tensor<int64_t>({1, 4}), -1.5);
            }});
  add_case({"index_reduce", {{4, 6}, {3, 6}}, [](const Inputs& in) {
              return index_reduce(in[0], 0, tensor<int64_t>({1, 1, 2}), in[1], "amax");
            }});
  add_case({"take", {{4, 6}}, [](const Inputs& in) {
              return take(in[0], tensor<int64_t>({0, -1, 7, 7}, {2, 2}));
            }});
  add_case({"put", {{4, 6}, {3}}, [](const Inputs& in) {
              return put(in[0], tensor<int64_t>({2, -3, 2}), in[1], true);
            }});
  add_case({"take_along_dim", {{4, 6}}, [](const Inputs& in) {
              return take_along_dim(in[0], tensor<int64_t>({5, 0, 2}, {1, 3}), 1);
            }});
  add_case({"masked_select",
            {{4, 6}},
            [](const Inputs& in) { return masked_select(in[0], in[0].gt(0)); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-6,
            true});
  add_case({"masked_scatter",
            {{4, 6}, {24}},
            [](const Inputs& in) { return masked_scatter(in[0], in[0].lt(0), in[1]); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-6,
            true});
  add_case({"nonzero",
            {{4, 6}},
            [](const Inputs& in) { return nonzero(in[0].gt(0)); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-6,
            true});
  add_case({"argwhere",
            {{4, 6}},
            [](const Inputs& in) { return argwhere(in[0].round()); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-6,
            true});
  add_case({"select_scatter", {{4, 6}, {4}}, [](const Inputs& in) {
              return select_scatter(in[0], in[1], 1, -2);
            }});
  add_case({"as_strided_scatter", {{4, 6}, {3, 2}}, [](const Inputs& in) {
              return as_strided_scatter(in[0], in[1], {3, 2}, {5, 2}, 1);
            }});
  add_case({"slice_scatter", {{4, 6}, {4, 3}}, [](const Inputs& in) {
              return slice_scatter(in[0], in[1], 1, 1, std::nullopt, 2);
            }});
  add_case({"diagonal_scatter", {{4, 6}, {3}}, [](const Inputs& in) {
              return diagonal_scatter(in[0], in[1], -1);
            }});
  // Searching and counting.
  add_case({"searchsorted", {{4, 6}, {4, 3}}, [](const Inputs& in) {
              return searchsorted(sort(in[0], 1).first, in[1], false, true);
            }});
  add_case({"bucketize", {{4, 6}, {5}}, [](const Inputs& in) {
              return bucketize(in[0], sort(in[1], 0).first);
            }});
  add_case({"bincount",
            {{6}},
            [](const Inputs& in) { return bincount((in[0] * 3).abs().to(kInt64), in[0], 2); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-6,
            true});
  add_case({"histc",
            {{4, 6}},
            [](const Inputs& in) { return histc(in[0], 7, -1, 1); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-6,
            true});
  add_case({"unique",
            {{4, 6}},
            [](const Inputs& in) { return unique(in[0].round(), true, true).inverse; },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-6,
            true});
  add_case({"unique_consecutive",
            {{4, 6}},
            [](const Inputs& in) { return unique_consecutive(in[0].gt(0), false, true, 1).counts; },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-6,
            true});
  add_case(
      {"isin", {{4, 6}, {5}}, [](const Inputs& in) { return isin(in[0].round(), in[1].round()); }});
  add_case({"isnan", {{4, 6}}, [](const Inputs& in) { return isnan(in[0].log()); }});
  add_case({"isinf", {{4, 6}}, [](const Inputs& in) { return isinf(in[0] / in[0].gt(0)); }});
  add_case({"isfinite", {{4, 6}}, [](const Inputs& in) { return isfinite(in[0].log()); }});
  add_case({"flip", {{4, 6}}, [](const Inputs& in) { return flip(in[0], {0, 1}); }});
  add_case({"roll", {{4, 6}}, [](const Inputs& in) { return roll(in[0], {2, -1}, {1, 0}); }});
  add_case({"outer", {{4}, {6}}, [](const Inputs& in) { return outer(in[0], in[1]); }});
  add_case({"addmm",
            {{4, 6}, {4, 3}, {3, 6}},
            [](const Inputs& in) { return addmm(in[0], in[1], in[2], 0.5, 2.0); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"baddbmm",
            {{2, 4, 6}, {2, 4, 3}, {2, 3, 6}},
            [](const Inputs& in) { return baddbmm(in[0], in[1], in[2]); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  // products, elementwise and numeric compositions (src/ops/linalg.cpp, einsum.cpp,
  // elementwise_composites.cpp, numeric_composites.cpp)
  // Sums of products: rtol 1e-5, as addmm's.
  const auto add_summed = [&](std::string name, std::vector<DimVector> shapes,
                              std::function<Tensor(const Inputs&)> fn) {
    add_case({std::move(name), std::move(shapes), std::move(fn), nullptr, nullptr, Domain::Any,
              kFloat32, 1e-5});
  };
  add_summed("dot", {{6}, {6}}, [](const Inputs& in) { return dot(in[0], in[1]); });
  add_summed("inner", {{4, 6}, {3, 6}}, [](const Inputs& in) { return inner(in[0], in[1]); });
  add_summed("mv", {{4, 6}, {6}}, [](const Inputs& in) { return mv(in[0], in[1]); });
  add_summed("addmv", {{4}, {4, 6}, {6}},
             [](const Inputs& in) { return addmv(in[0], in[1], in[2], 0.5, 2.0); });
  add_summed("addr", {{4, 6}, {4}, {6}},
             [](const Inputs& in) { return addr(in[0], in[1], in[2], 2.0, -1.0); });
  add_summed("addbmm", {{4, 6}, {2, 4, 3}, {2, 3, 6}},
             [](const Inputs& in) { return addbmm(in[0], in[1], in[2], 0.5, 2.0); });
  add_summed("tensordot", {{2, 4, 3}, {3, 4}}, [](const Inputs& in) {
    return tensordot(in[0], in[1], {1, 2}, {1, 0});
  });
  add_summed("chain_matmul", {{4, 3}, {3, 5}, {5, 2}}, [](const Inputs& in) {
    return chain_matmul({in[0], in[1], in[2]});
  });
  add_summed("kron", {{2, 3}, {3, 2}}, [](const Inputs& in) { return kron(in[0], in[1]); });
  add_summed("cdist", {{2, 4, 3}, {5, 3}}, [](const Inputs& in) { return cdist(in[0], in[1]); });
  add_summed("dist", {{4, 6}, {4, 6}}, [](const Inputs& in) { return dist(in[0], in[1], 3.0); });
  add_summed("einsum", {{2, 4, 3}, {3, 5}}, [](const Inputs& in) {
    return einsum("bij,jk->bik", {in[0], in[1]});
  });
  // The logical ops on int64 draws in [-5, 6), zeros among them.
  const auto add_logical = [&](std::string name, std::vector<DimVector> shapes,
                               std::function<Tensor(const Inputs&)> fn) {
    add_case(
        {std::move(name), std::move(shapes), std::move(fn), nullptr, nullptr, Domain::Any, kInt64});
  };
  add_logical("logical_and", {{4, 6}, {4, 6}},
              [](const Inputs& in) { return logical_and(in[0], in[1]); });
  add_logical("logical_or", {{4, 6}, {4, 6}},
              [](const Inputs& in) { return logical_or(in[0], in[1]); });
  add_logical("logical_xor", {{4, 6}, {4, 6}},
              [](const Inputs& in) { return logical_xor(in[0], in[1]); });
  add_logical("logical_not", {{4, 6}}, [](const Inputs& in) { return logical_not(in[0]); });
  add_case({"fmax", {{4, 6}, {4, 6}}, [](const Inputs& in) { return fmax(in[0], in[1]); }});
  add_case({"fmin", {{4, 6}, {4, 6}}, [](const Inputs& in) { return fmin(in[0], in[1]); }});
  add_case({"isclose", {{4, 6}, {4, 6}}, [](const Inputs& in) {
              return isclose(in[0], in[1], 0.5, 0.5);
            }});
  add_case({"trace", {{4, 6}}, [](const Inputs& in) { return trace(in[0]); }});
  add_case({"diff", {{4, 6}}, [](const Inputs& in) {
              return diff(in[0], 2, 1, std::nullopt, std::nullopt);
            }});
  add_case(
      {"trapezoid", {{4, 6}, {6}}, [](const Inputs& in) { return trapezoid(in[0], in[1], 1); }});
  add_case({"cumulative_trapezoid", {{4, 6}}, [](const Inputs& in) {
              return cumulative_trapezoid(in[0], 0.5, 0);
            }});
  add_summed("cov", {{4, 6}}, [](const Inputs& in) { return cov(in[0]); });
  add_summed("corrcoef", {{4, 6}}, [](const Inputs& in) { return corrcoef(in[0]); });
  add_summed("renorm", {{4, 6}}, [](const Inputs& in) { return renorm(in[0], 2, 0, 1.0); });
  add_case({"gradient", {{4, 6}}, [](const Inputs& in) {
              return cat(gradient(in[0], std::vector<double>{0.5, 2.0}, {0, 1}));
            }});
  // The histograms' shapes follow their bins and ranges, not the values.
  add_case({"histogram", {{4, 6}}, [](const Inputs& in) {
              const HistogramResult r = histogram(in[0], 5, std::pair{-1.5, 1.5});
              return cat({r.hist, r.bin_edges});
            }});
  add_case({"histogramdd", {{12, 2}}, [](const Inputs& in) {
              return histogramdd(in[0], {3, 4}, {{-1.0, 1.0}, {-2.0, 2.0}}).hist;
            }});
  add_case({"sgn", {{4, 6}}, [](const Inputs& in) { return sgn(in[0]); }});
  add_case({"resolve_neg", {{4, 6}}, [](const Inputs& in) { return resolve_neg(in[0]); }});
  add_case({"unravel_index",
            {{4, 6}},
            [](const Inputs& in) {
              return cat(unravel_index(in[0] + 5, {3, 4}));
            },
            nullptr,
            nullptr,
            Domain::Any,
            kInt64});
  add_case({"argmax_all", {{4, 6}}, [](const Inputs& in) { return argmax(in[0]); }});
  add_case({"logsumexp",
            {{4, 6}},
            [](const Inputs& in) { return logsumexp(in[0], {1}); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"norm",
            {{4, 6}},
            [](const Inputs& in) { return norm(in[0], 2, {0}); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"sum_int",
            {{4, 6}},
            [](const Inputs& in) { return sum(in[0], {1}); },
            nullptr,
            nullptr,
            Domain::Any,
            kInt32});
  // Linear algebra, softmax, indexing, joining.
  add_case({"matmul",
            {{4, 6}, {6, 5}},
            [](const Inputs& in) { return matmul(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { matmul_out(out, in[0], in[1]); },
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"matmul_batched",
            {{3, 4, 6}, {3, 6, 5}},
            [](const Inputs& in) { return matmul(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { matmul_out(out, in[0], in[1]); },
            nullptr,
            Domain::Any,
            kFloat64,
            1e-12});
  add_case(
      {"matmul_size0", {{0, 6}, {6, 5}}, [](const Inputs& in) { return matmul(in[0], in[1]); }});
  add_case({"softmax",
            {{4, 6}},
            [](const Inputs& in) { return softmax(in[0], -1); },
            [](Tensor& out, const Inputs& in) { softmax_out(out, in[0], -1); }});
  add_case({"mean_out",
            {{4, 6}},
            [](const Inputs& in) { return mean(in[0], {1}); },
            [](Tensor& out, const Inputs& in) { mean_out(out, in[0], {1}); },
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"mm_out",
            {{4, 6}, {6, 5}},
            [](const Inputs& in) { return mm(in[0], in[1]); },
            [](Tensor& out, const Inputs& in) { mm_out(out, in[0], in[1]); },
            nullptr,
            Domain::Any,
            kFloat64,
            1e-12});
  add_case({"cat_out",
            {{4, 6}, {4, 2}},
            [](const Inputs& in) {
              return cat({in[0], in[1]}, 1);
            },
            [](Tensor& out, const Inputs& in) {
              cat_out(out, {in[0], in[1]}, 1);
            }});
  add_case({"index_select_out",
            {{4, 6}},
            [](const Inputs& in) {
              return in[0].index_select(0, tensor<int64_t>({3, 1, 1}));
            },
            [](Tensor& out, const Inputs& in) {
              index_select_out(out, in[0], 0, tensor<int64_t>({3, 1, 1}));
            }});
  add_case({"max_out_values",
            {{4, 6}},
            [](const Inputs& in) { return max(in[0], 1).first; },
            [](Tensor& out, const Inputs& in) {
              Tensor indices;
              max_out(out, indices, in[0], 1);
            }});
  add_case({"softmax_dim0", {{3, 4, 6}}, [](const Inputs& in) { return softmax(in[0], 0); }});
  add_case({"log_softmax", {{4, 6}}, [](const Inputs& in) { return log_softmax(in[0], 1); }});
  add_case({"index_select", {{4, 6}}, [](const Inputs& in) {
              return in[0].index_select(1, tensor<int64_t>({5, 0, 2, 2}));
            }});
  add_case({"gather", {{4, 6}}, [](const Inputs& in) {
              return in[0].gather(1, tensor<int64_t>({0, 5, 1, 1, 2, 3, 4, 4}, {4, 2}));
            }});
  add_case({"scatter_add", {{4, 6}, {4, 6}}, [](const Inputs& in) {
              return in[0].scatter_add(1, tensor<int64_t>({0, 0, 1, 5, 2, 2, 3, 3}, {4, 2}), in[1]);
            }});
  add_case({"embedding", {{5, 6}}, [](const Inputs& in) {
              return embedding(in[0], tensor<int64_t>({4, 0, 4, 1}, {2, 2}));
            }});
  add_case({"cat", {{4, 6}, {4, 3}}, [](const Inputs& in) { return cat({in[0], in[1]}, 1); }});
  add_case({"stack", {{4, 6}, {4, 6}}, [](const Inputs& in) { return stack({in[0], in[1]}, 1); }});
  add_case({"clone", {{4, 6}}, [](const Inputs& in) { return in[0].clone(); }});
  add_case({"contiguous", {{4, 6}}, [](const Inputs& in) { return in[0].contiguous() * 1.0; }});
  add_case({"to_bfloat16", {{4, 6}}, [](const Inputs& in) { return in[0].to(kBFloat16); }});
  add_case({"min_values", {{4, 6}}, [](const Inputs& in) { return min(in[0], 0).first; }});
  add_case({"bmm", {{2, 4, 6}, {2, 6, 3}}, [](const Inputs& in) { return bmm(in[0], in[1]); }});
  add_case({"index", {{4, 6}}, [](const Inputs& in) {
              return in[0].index({tensor<int64_t>({3, 0, 3}), tensor<int64_t>({5, 1, 0})});
            }});
  add_case({"index_put",
            {{4, 6}, {2}},
            [](const Inputs& in) {
              return in[0].index_put({tensor<int64_t>({1, 2}), tensor<int64_t>({4, 0})}, in[1]);
            },
            nullptr,
            [](Tensor& self, const Inputs& in) {
              self.index_put_({tensor<int64_t>({1, 2}), tensor<int64_t>({4, 0})}, in[1]);
            }});
  // Views: a new geometry on the input's memory, the same on meta.
  // A split of the first dim, which every input layout allows.
  add_case({"view", {{4, 6}}, [](const Inputs& in) { return in[0].view({2, 2, 6}); }});
  add_case({"reshape", {{4, 6}}, [](const Inputs& in) { return in[0].reshape({2, 12}); }});
  add_case({"transpose", {{3, 4, 6}}, [](const Inputs& in) { return in[0].transpose(0, 2); }});
  add_case({"permute", {{3, 4, 6}}, [](const Inputs& in) { return in[0].permute({1, 2, 0}); }});
  add_case({"select", {{4, 6}}, [](const Inputs& in) { return in[0].select(1, 2); }});
  add_case({"slice", {{4, 6}}, [](const Inputs& in) { return in[0].slice(1, 1, 6, 2); }});
  add_case({"unsqueeze", {{4, 6}}, [](const Inputs& in) { return in[0].unsqueeze(1); }});
  add_case({"squeeze", {{4, 1, 6}}, [](const Inputs& in) { return in[0].squeeze(1); }});
  add_case({"expand", {{4, 1}}, [](const Inputs& in) { return in[0].expand({2, 4, 6}); }});
  add_case({"as_strided", {{4, 6}}, [](const Inputs& in) {
              return in[0].clone().as_strided({3, 2}, {4, 1}, 1);
            }});
  add_case({"diagonal", {{4, 6}}, [](const Inputs& in) { return in[0].diagonal(1); }});
  add_case({"unfold_view", {{4, 6}}, [](const Inputs& in) { return in[0].unfold(1, 3, 2); }});
  add_case({"unfold_view_overlapping", {{5, 3}}, [](const Inputs& in) {
              return in[0].unfold(0, 3, 1);
            }});
  // The fused nn ops (src/nn/). Their GEMMs may sum in another order for
  // another layout (a copied operand, another kernel), so to 1e-5.
  add_case({"linear",
            {{4, 6}, {5, 6}, {5}},
            [](const Inputs& in) { return F::linear(in[0], in[1], in[2]); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"linear_concat",
            {{4, 6}, {2, 6}, {3, 6}},
            [](const Inputs& in) {
              return F::linear_concat(in[0], {in[1], in[2]});
            },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"linear_groups",
            {{4, 6}, {2, 6}, {3, 6}},
            [](const Inputs& in) {
              return cat(F::linear_groups(in[0], {{in[1]}, {in[2], in[1]}}), -1);
            },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  // Packed weights: the weight in any layout packs to the same blocks.
  add_case({"linear_packed",
            {{4, 32}, {5, 32}},
            [](const Inputs& in) {
              return F::linear_packed(in[0], F::pack_weight(in[1], WeightFormat::Int4),
                                      WeightFormat::Int4, 32);
            },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"pack_weight", {{3, 64}}, [](const Inputs& in) {
              return F::pack_weight(in[0], WeightFormat::Int8);
            }});
  add_case({"unpack_weight", {{3, 64}}, [](const Inputs& in) {
              return F::unpack_weight(F::pack_weight(in[0], WeightFormat::BFloat16),
                                      WeightFormat::BFloat16, 64);
            }});
  add_case({"rms_norm", {{4, 6}, {6}}, [](const Inputs& in) { return F::rms_norm(in[0], in[1]); }});
  add_case({"swiglu", {{4, 6}, {4, 6}}, [](const Inputs& in) { return F::swiglu(in[0], in[1]); }});
  add_case({"rotary_embedding", {{3, 4, 6}}, [](const Inputs& in) {
              return F::rotary_embedding(in[0], 2);
            }});
  add_case(
      {"cross_entropy", {{4, 6}}, [](const Inputs& in) {
         return F::cross_entropy(in[0], tensor<int64_t>({5, 0, 2, 2}), -100, F::Reduction::None);
       }});
  add_case({"linear_cross_entropy", {{5, 3}, {6, 3}, {6}}, [](const Inputs& in) {
              F::LinearCrossEntropyOptions o;
              o.linear_bias = in[2];
              o.reduction = F::Reduction::None;
              o.ignore_index = 2;
              o.label_smoothing = 0.1;
              o.batch_chunk_size = 2;
              return F::linear_cross_entropy(in[0], in[1], tensor<int64_t>({5, 0, 2, 3, 1}), o);
            }});
  add_case({"scaled_dot_product_attention",
            {{2, 4, 6}, {2, 4, 6}, {2, 4, 6}},
            [](const Inputs& in) {
              return F::scaled_dot_product_attention(in[0], in[1], in[2], {}, 0.0, true);
            },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"rotary_attention",
            {{2, 4, 6}, {2, 4, 6}, {2, 4, 6}},
            [](const Inputs& in) {
              const auto [cos, sin] = F::rotary_tables(4, 6, 0, 100.0);
              return F::rotary_attention(in[0], in[1], in[2], cos, sin,
                                         F::RopeConvention::Interleaved, 0.0, true);
            },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  // The composed activations (src/nn/activations.cpp).
  const auto activation = [&](const char* name, std::function<Tensor(const Tensor&)> f) {
    add_case({name, {{4, 6}}, [f](const Inputs& in) { return f(in[0]); }});
  };
  activation("leaky_relu", [](const Tensor& x) { return F::leaky_relu(x, 0.2); });
  activation("elu", [](const Tensor& x) { return F::elu(x, 0.7); });
  activation("selu", [](const Tensor& x) { return F::selu(x); });
  activation("celu", [](const Tensor& x) { return F::celu(x, 1.5); });
  activation("softplus", [](const Tensor& x) { return F::softplus(x, 2.0, 1.0); });
  activation("hardtanh", [](const Tensor& x) { return F::hardtanh(x, -0.5, 1.0); });
  activation("relu6", [](const Tensor& x) { return F::relu6(x * 4.0); });
  activation("hardswish", [](const Tensor& x) { return F::hardswish(x * 3.0); });
  activation("hardsigmoid", [](const Tensor& x) { return F::hardsigmoid(x * 3.0); });
  activation("mish", [](const Tensor& x) { return F::mish(x); });
  activation("logsigmoid", [](const Tensor& x) { return F::logsigmoid(x); });
  activation("softsign", [](const Tensor& x) { return F::softsign(x); });
  activation("tanhshrink", [](const Tensor& x) { return F::tanhshrink(x); });
  activation("softshrink", [](const Tensor& x) { return F::softshrink(x); });
  activation("hardshrink", [](const Tensor& x) { return F::hardshrink(x, 0.7); });
  activation("threshold", [](const Tensor& x) { return F::threshold(x, 0.1, -2.0); });
  activation("glu", [](const Tensor& x) { return F::glu(x); });
  activation("glu_dim0", [](const Tensor& x) { return F::glu(x, 0); });
  activation("softmin", [](const Tensor& x) { return F::softmin(x, 1); });
  add_case({"prelu", {{4, 6}, {6}}, [](const Inputs& in) { return F::prelu(in[0], in[1]); }});
  // The composed losses, vector functions and padding (src/nn/losses.cpp,
  // vectors.cpp, pad.cpp), unreduced so that every element is compared.
  const F::Reduction none = F::Reduction::None;
  const DimVector m{4, 6};
  add_case({"l1_loss", {m, m}, [=](const Inputs& in) { return F::l1_loss(in[0], in[1], none); }});
  add_case({"l1_loss_weighted_mean", {m, m, m}, [](const Inputs& in) {
              return F::l1_loss(in[0], in[1], F::Reduction::Mean, in[2].abs());
            }});
  add_case({"smooth_l1_loss", {m, m}, [=](const Inputs& in) {
              return F::smooth_l1_loss(in[0], in[1], none, 0.5);
            }});
  add_case({"huber_loss", {m, m, m}, [=](const Inputs& in) {
              return F::huber_loss(in[0], in[1], none, 0.5, in[2]);
            }});
  add_case({"binary_cross_entropy", {m, m, {6}}, [=](const Inputs& in) {
              return F::binary_cross_entropy(sigmoid(in[0]), sigmoid(in[1]), in[2], none);
            }});
  add_case({"binary_cross_entropy_with_logits", {m, m, m, {6}}, [=](const Inputs& in) {
              return F::binary_cross_entropy_with_logits(in[0], sigmoid(in[1]), in[2], in[3].abs(),
                                                         none);
            }});
  add_case({"kl_div", {m, m}, [](const Inputs& in) {
              return F::kl_div(log_softmax(in[0], 1), softmax(in[1], 1), "none");
            }});
  add_case({"kl_div_log_target", {m, m}, [](const Inputs& in) {
              return F::kl_div(in[0], in[1], "none", true);
            }});
  add_case({"soft_margin_loss", {m, m}, [=](const Inputs& in) {
              return F::soft_margin_loss(in[0], sign(in[1]), none);
            }});
  add_case({"hinge_embedding_loss", {m, m}, [=](const Inputs& in) {
              return F::hinge_embedding_loss(in[0], sign(in[1]), 0.5, none);
            }});
  add_case({"poisson_nll_loss", {m, m}, [=](const Inputs& in) {
              return F::poisson_nll_loss(in[0], in[1].abs() * 3.0, true, true, 1e-8, none);
            }});
  // The margin, ranking, triplet and Gaussian losses and the weighted or
  // probability-target cross-entropy (src/nn/margin_losses.cpp); class
  // targets are drawn from an input so that they follow it onto meta.
  const auto classes_of = [](const Tensor& x) { return x.argmax(1); };
  const auto labels_of = [](const Tensor& order, const Tensor& cut) {
    const Tensor perm = order.argsort(1);
    return where(cut.gt(0.5), full_like(perm, -1), perm);
  };
  add_case({"cosine_embedding_loss", {m, m, {4}}, [=](const Inputs& in) {
              return F::cosine_embedding_loss(in[0], in[1], sign(in[2]), 0.2, none);
            }});
  add_case({"margin_ranking_loss", {m, m, m}, [=](const Inputs& in) {
              return F::margin_ranking_loss(in[0], in[1], sign(in[2]), 0.1, none);
            }});
  add_case({"multi_margin_loss", {m, m, {6}}, [=](const Inputs& in) {
              return F::multi_margin_loss(in[0], classes_of(in[1]), 2, 0.5, in[2].abs(), none);
            }});
  add_case({"multilabel_margin_loss", {m, m, m}, [=](const Inputs& in) {
              return F::multilabel_margin_loss(in[0], labels_of(in[1], in[2]), none);
            }});
  add_case({"multilabel_soft_margin_loss", {m, m, {6}}, [=](const Inputs& in) {
              return F::multilabel_soft_margin_loss(in[0], sigmoid(in[1]), in[2], none);
            }});
  add_case({"triplet_margin_loss", {m, m, m}, [=](const Inputs& in) {
              return F::triplet_margin_loss(in[0], in[1], in[2], 1.0, 2.0, 1e-6, true, none);
            }});
  add_case({"gaussian_nll_loss", {m, m, m}, [=](const Inputs& in) {
              return F::gaussian_nll_loss(in[0], in[1], in[2].abs() + 0.1, true, 1e-6, none);
            }});
  add_case({"cross_entropy_weighted", {m, m, {6}}, [=](const Inputs& in) {
              return F::cross_entropy(in[0], classes_of(in[1]), in[2].abs(), -100, none, 0.1);
            }});
  add_case({"cross_entropy_probabilities", {m, m, {6}}, [=](const Inputs& in) {
              return F::cross_entropy(in[0], softmax(in[1], 1), in[2].abs(), -100, none, 0.2);
            }});
  add_case({"nll_loss_weighted", {m, m, {6}}, [=](const Inputs& in) {
              return F::nll_loss(log_softmax(in[0], 1), classes_of(in[1]), in[2].abs(), 2, none);
            }});
  // src/nn/composed_layers.cpp.
  // A sum of products: rtol 1e-5, as addmm's.
  add_case({"bilinear",
            {m, {4, 5}, {3, 6, 5}, {3}},
            [](const Inputs& in) { return F::bilinear(in[0], in[1], in[2], in[3]); },
            nullptr,
            nullptr,
            Domain::Any,
            kFloat32,
            1e-5});
  add_case({"channel_shuffle", {{2, 6, 4}}, [](const Inputs& in) {
              return F::channel_shuffle(in[0], 3);
            }});
  add_case({"pdist", {{5, 6}}, [](const Inputs& in) { return F::pdist(in[0], 3.0); }});
  add_case({"local_response_norm", {{2, 6, 4}}, [](const Inputs& in) {
              return F::local_response_norm(in[0], 3, 0.1, 0.75, 2.0);
            }});
  add_case({"one_hot", {m}, [](const Inputs& in) {
              return F::one_hot(in[0].gt(0.0).to(kInt64) + in[0].gt(1.0).to(kInt64), 3);
            }});
  add_case({"normalize", {m}, [](const Inputs& in) { return F::normalize(in[0]); }});
  add_case(
      {"normalize_p3_dim0", {m}, [](const Inputs& in) { return F::normalize(in[0], 3.0, 0); }});
  add_case({"cosine_similarity", {m, {6}}, [](const Inputs& in) {
              return F::cosine_similarity(in[0], in[1], -1);
            }});
  add_case({"pairwise_distance", {m, m}, [](const Inputs& in) {
              return F::pairwise_distance(in[0], in[1]);
            }});
  add_case({"pad", {m}, [](const Inputs& in) {
              return F::pad(in[0], {1, 2, -1, 1}, F::PadMode::Constant, 0.5);
            }});
  add_case({"pad_reflect", {{2, 4, 6}}, [](const Inputs& in) {
              return F::pad(in[0], {2, 1, 1, 3}, F::PadMode::Reflect);
            }});
  add_case({"pad_replicate", {{2, 4, 6}}, [](const Inputs& in) {
              return F::pad(in[0], {2, 0, -1, 3}, F::PadMode::Replicate);
            }});
  add_case({"pad_circular", {{2, 4, 6}}, [](const Inputs& in) {
              return F::pad(in[0], {2, -1, 3, 1}, F::PadMode::Circular);
            }});
  // Linear algebra (include/stride/linalg.h), in float64 on matrices made
  // invertible, positive-definite or symmetric from the random input.
  auto add_linalg = [&](std::string name, std::vector<DimVector> shapes,
                        std::function<Tensor(const Inputs&)> fn) {
    add_case({std::move(name), std::move(shapes), std::move(fn), nullptr, nullptr, Domain::Unit,
              kFloat64, 1e-9});
  };
  const DimVector sq{2, 4, 4}, rhs{2, 4, 3};
  add_linalg("linalg_lu_factor_ex", {sq}, [](const Inputs& in) {
    auto [LU, pivots, info] = linalg::lu_factor_ex(in[0]);
    return flat({LU, pivots, info});
  });
  add_linalg("linalg_lu_factor_wide", {{2, 3, 5}}, [](const Inputs& in) {
    auto [LU, pivots] = linalg::lu_factor(in[0]);
    return flat({LU, pivots});
  });
  add_linalg("linalg_lu_factor", {sq},
             [](const Inputs& in) { return linalg::lu_factor(in[0]).first; });
  add_linalg("linalg_lu", {{5, 3}}, [](const Inputs& in) {
    auto [P, L, U] = linalg::lu(in[0]);
    return flat({P, L, U});
  });
  add_linalg("lu_unpack", {sq}, [](const Inputs& in) {
    auto [LU, pivots] = linalg::lu_factor(in[0]);
    auto [P, L, U] = lu_unpack(LU, pivots);
    return flat({P, L, U});
  });
  add_linalg("linalg_lu_solve", {sq, rhs}, [](const Inputs& in) {
    auto [LU, pivots] = linalg::lu_factor(well_conditioned(in[0]));
    return flat({linalg::lu_solve(LU, pivots, in[1]),
                 linalg::lu_solve(LU, pivots, in[1], true, true),
                 linalg::lu_solve(LU, pivots, in[1].transpose(-2, -1), false)});
  });
  add_linalg("linalg_solve_triangular", {sq, rhs}, [](const Inputs& in) {
    const Tensor a = well_conditioned(in[0]);
    return flat({linalg::solve_triangular(a.triu(), in[1], true),
                 linalg::solve_triangular(a.tril(), in[1].transpose(-2, -1), false, false, true)});
  });
  add_linalg("linalg_solve", {sq, rhs},
             [](const Inputs& in) { return linalg::solve(well_conditioned(in[0]), in[1]); });
  add_linalg("linalg_solve_ex_vector", {sq, {2, 4}}, [](const Inputs& in) {
    return linalg::solve_ex(well_conditioned(in[0]), in[1]).first;
  });
  add_linalg("linalg_inv", {sq},
             [](const Inputs& in) { return linalg::inv(well_conditioned(in[0])); });
  add_linalg("linalg_inv_ex", {sq},
             [](const Inputs& in) { return linalg::inv_ex(well_conditioned(in[0])).first; });
  add_linalg("linalg_det", {sq}, [](const Inputs& in) { return linalg::det(in[0]); });
  add_linalg("linalg_slogdet", {sq}, [](const Inputs& in) {
    auto [sign, logabsdet] = linalg::slogdet(in[0]);
    return flat({sign, logabsdet});
  });
  add_linalg("logdet", {sq}, [](const Inputs& in) { return logdet(positive_definite(in[0])); });
  add_linalg("linalg_cholesky_ex", {sq}, [](const Inputs& in) {
    return linalg::cholesky_ex(positive_definite(in[0]), true).first;
  });
  add_linalg("linalg_cholesky", {sq},
             [](const Inputs& in) { return linalg::cholesky(positive_definite(in[0])); });
  add_linalg("cholesky_solve", {sq, rhs}, [](const Inputs& in) {
    return cholesky_solve(in[1], linalg::cholesky(positive_definite(in[0])));
  });
  add_linalg("cholesky_inverse", {sq}, [](const Inputs& in) {
    return cholesky_inverse(linalg::cholesky(positive_definite(in[0]), true), true);
  });
  add_linalg("triangular_solve", {sq, rhs}, [](const Inputs& in) {
    return triangular_solve(in[1], well_conditioned(in[0]), false, true).first;
  });
  add_linalg("linalg_qr", {{2, 5, 3}}, [](const Inputs& in) {
    auto [Q, R] = linalg::qr(in[0]);
    auto [Qc, Rc] = linalg::qr(in[0], "complete");
    return flat({Q, R, Qc, Rc, linalg::qr(in[0], "r").second});
  });
  add_linalg("linalg_eigh", {sq}, [](const Inputs& in) {
    auto [L, V] = linalg::eigh(symmetric(in[0]), "U");
    return flat({L, V});
  });
  add_linalg("linalg_eigvalsh", {sq},
             [](const Inputs& in) { return linalg::eigvalsh(symmetric(in[0])); });
  add_linalg("linalg_svd", {{2, 3, 5}}, [](const Inputs& in) {
    auto [U, S, Vh] = linalg::svd(in[0]);
    auto [Ur, Sr, Vhr] = linalg::svd(in[0], false);
    // Vh's last two rows span the null space, where any basis is right (and
    // rounding picks one): the complete basis is compared on its first 3.
    return flat({U, S, Vh.narrow(-2, 0, 3), Ur, Vhr});
  });
  add_linalg("linalg_svdvals", {{2, 5, 3}},
             [](const Inputs& in) { return linalg::svdvals(in[0]); });
  add_linalg("linalg_householder_product", {{5, 3}, {2}},
             [](const Inputs& in) { return linalg::householder_product(in[0], in[1]); });
  add_linalg("linalg_vector_norm", {{3, 4, 5}}, [](const Inputs& in) {
    return flat({linalg::vector_norm(in[0]), linalg::vector_norm(in[0], 3, {0, 2}, true),
                 linalg::vector_norm(in[0], -std::numeric_limits<double>::infinity(), {1})});
  });
  add_linalg("linalg_matrix_norm", {{3, 4, 5}}, [](const Inputs& in) {
    return flat({linalg::matrix_norm(in[0]), linalg::matrix_norm(in[0], "nuc", {0, 2}, true),
                 linalg::matrix_norm(in[0], 1),
                 linalg::matrix_norm(in[0], -std::numeric_limits<double>::infinity(), {2, 0}),
                 linalg::matrix_norm(in[0], -2)});
  });
  add_linalg("linalg_norm", {{3, 4}}, [](const Inputs& in) {
    return flat({linalg::norm(in[0]), linalg::norm(in[0], 2.0), linalg::norm(in[0], "nuc"),
                 linalg::norm(in[0], 3.0, {1})});
  });
  add_linalg("linalg_cond", {sq}, [](const Inputs& in) {
    return flat({linalg::cond(in[0]), linalg::cond(well_conditioned(in[0]), "fro"),
                 linalg::cond(well_conditioned(in[0]), 1.0)});
  });
  add_linalg("linalg_matrix_rank", {{2, 5, 3}}, [](const Inputs& in) {
    return flat({linalg::matrix_rank(in[0]),
                 linalg::matrix_rank(symmetric(in[0].narrow(-2, 0, 3)), 0.5, {}, true)});
  });
  add_linalg("linalg_pinv", {{2, 5, 3}}, [](const Inputs& in) {
    return flat({linalg::pinv(in[0]), linalg::pinv(symmetric(in[0].narrow(-2, 0, 3)),
                                                   scalar_tensor(0.0, kFloat64), {}, true)});
  });
  add_linalg("linalg_matrix_power", {sq}, [](const Inputs& in) {
    return flat({linalg::matrix_power(in[0], 5), linalg::matrix_power(in[0], 0),
                 linalg::matrix_power(well_conditioned(in[0]), -2)});
  });
  add_linalg("linalg_matrix_exp", {sq},
             [](const Inputs& in) { return linalg::matrix_exp(in[0] * 3.0); });
  add_linalg("linalg_cross", {{4, 3}, {1, 3}},
             [](const Inputs& in) { return linalg::cross(in[0], in[1]); });
  add_linalg("linalg_vecdot", {{4, 3}, {4, 3}},
             [](const Inputs& in) { return linalg::vecdot(in[0], in[1], 0); });
  add_linalg("linalg_multi_dot", {{4}, {4, 5}, {5, 3}, {3}}, [](const Inputs& in) {
    return linalg::multi_dot({in[0], in[1], in[2], in[3]});
  });
  add_linalg("linalg_diagonal", {{3, 4, 5}},
             [](const Inputs& in) { return linalg::diagonal(in[0], 1, 0, -1); });
  add_linalg("linalg_vander", {{2, 4}}, [](const Inputs& in) { return linalg::vander(in[0], 5); });
  add_linalg("linalg_tensorinv", {{4, 2, 2}}, [](const Inputs& in) {
    return linalg::tensorinv(well_conditioned(in[0].reshape({4, 4})).reshape({4, 2, 2}), 1);
  });
  add_linalg("linalg_tensorsolve", {{2, 3, 6}, {2, 3}}, [](const Inputs& in) {
    return linalg::tensorsolve(well_conditioned(in[0].reshape({6, 6})).reshape({2, 3, 6}), in[1]);
  });
  add_linalg("linalg_lstsq", {{2, 5, 3}, {2, 5, 2}}, [](const Inputs& in) {
    auto [x, residuals, rank, sv] = linalg::lstsq(in[0], in[1], std::nullopt, "gelsd");
    return flat({x, residuals, rank, sv, std::get<0>(linalg::lstsq(in[0], in[1]))});
  });
  // Convolutions and poolings (src/nn/conv.cpp, pooling.cpp).
  add_case({"unfold", {{2, 3, 5, 6}}, [](const Inputs& in) {
              return F::unfold(in[0], {2, 3}, {1, 2}, {1, 0}, {2, 1});
            }});
  add_case({"fold", {{2, 12, 9}}, [](const Inputs& in) {
              return F::fold(in[0], {4, 5}, {2, 2}, {1}, {1}, {2});
            }});
  add_case({"conv1d", {{2, 4, 7}, {6, 2, 3}, {6}}, [](const Inputs& in) {
              return F::conv1d(in[0], in[1], in[2], with([](auto& o) {
                                 o.stride = {2};
                                 o.padding = {1};
                                 o.groups = 2;
                               }));
            }});
  add_case({"conv2d", {{2, 3, 5, 6}, {4, 3, 2, 3}, {4}}, [](const Inputs& in) {
              return F::conv2d(in[0], in[1], in[2], with([](auto& o) {
                                 o.padding = {1, 0};
                                 o.dilation = {1, 2};
                               }));
            }});
  add_case({"conv2d_same_unbatched", {{3, 5, 6}, {2, 3, 2, 2}}, [](const Inputs& in) {
              return F::conv2d(in[0], in[1], {},
                               with([](auto& o) { o.padding_mode = F::ConvPadding::Same; }));
            }});
  add_case({"conv3d", {{2, 4, 4, 5, 3}, {6, 2, 2, 3, 2}, {6}}, [](const Inputs& in) {
              return F::conv3d(in[0], in[1], in[2], with([](auto& o) {
                                 o.stride = {1, 2, 1};
                                 o.padding = {1, 0, 1};
                                 o.dilation = {2, 1, 1};
                                 o.groups = 2;
                               }));
            }});
  add_case({"conv3d_same_unbatched", {{2, 3, 4, 5}, {3, 2, 2, 3, 2}}, [](const Inputs& in) {
              return F::conv3d(in[0], in[1], {},
                               with([](auto& o) { o.padding_mode = F::ConvPadding::Same; }));
            }});
  add_case({"conv_transpose1d", {{2, 4, 5}, {4, 3, 3}, {6}}, [](const Inputs& in) {
              return F::conv_transpose1d(in[0], in[1], in[2], with([](auto& o) {
                                           o.stride = {2};
                                           o.output_padding = {1};
                                           o.groups = 2;
                                         }));
            }});
  add_case({"conv_transpose2d", {{2, 3, 4, 5}, {3, 2, 3, 2}, {2}}, [](const Inputs& in) {
              return F::conv_transpose2d(in[0], in[1], in[2], with([](auto& o) {
                                           o.stride = {2, 1};
                                           o.padding = {1};
                                         }));
            }});
  add_case({"conv_transpose3d", {{2, 4, 3, 4, 2}, {4, 1, 2, 3, 2}, {2}}, [](const Inputs& in) {
              return F::conv_transpose3d(in[0], in[1], in[2], with([](auto& o) {
                                           o.stride = {2, 1, 2};
                                           o.padding = {1, 0, 0};
                                           o.output_padding = {1, 0, 1};
                                           o.groups = 2;
                                         }));
            }});
  add_case({"max_pool1d", {{2, 3, 7}}, [](const Inputs& in) {
              return F::max_pool1d(in[0], {3}, with([](auto& o) {
                                     o.stride = {2};
                                     o.padding = {1};
                                   }));
            }});
  add_case({"max_pool2d", {{2, 3, 5, 6}}, [](const Inputs& in) {
              return F::max_pool2d(in[0], {2, 3}, with([](auto& o) {
                                     o.padding = {1};
                                     o.ceil_mode = true;
                                   }));
            }});
  add_case({"max_pool2d_indices", {{3, 5, 6}}, [](const Inputs& in) {
              return F::max_pool2d_with_indices(in[0], {2}, with([](auto& o) {
                                                  o.stride = {1};
                                                  o.dilation = {2};
                                                }))
                  .second;
            }});
  add_case({"max_pool3d", {{2, 3, 4, 5, 6}}, [](const Inputs& in) {
              return F::max_pool3d(in[0], {2, 2, 3}, with([](auto& o) {
                                     o.padding = {1, 0, 1};
                                     o.ceil_mode = true;
                                   }));
            }});
  add_case({"max_pool3d_indices", {{3, 4, 5, 6}}, [](const Inputs& in) {
              return F::max_pool3d_with_indices(in[0], {2}, with([](auto& o) {
                                                  o.stride = {1};
                                                  o.dilation = {2, 1, 2};
                                                }))
                  .second;
            }});
  add_case({"avg_pool1d", {{2, 3, 7}}, [](const Inputs& in) {
              return F::avg_pool1d(in[0], {3}, with([](auto& o) {
                                     o.stride = {2};
                                     o.padding = {1};
                                     o.ceil_mode = true;
                                   }));
            }});
  add_case({"avg_pool2d", {{2, 3, 5, 6}}, [](const Inputs& in) {
              return F::avg_pool2d(in[0], {3, 2}, with([](auto& o) {
                                     o.padding = {1};
                                     o.count_include_pad = false;
                                   }));
            }});
  add_case({"avg_pool3d", {{2, 3, 4, 5, 6}}, [](const Inputs& in) {
              return F::avg_pool3d(in[0], {2, 3, 2}, with([](auto& o) {
                                     o.padding = {1};
                                     o.ceil_mode = true;
                                     o.count_include_pad = false;
                                   }));
            }});
  add_case({"adaptive_avg_pool1d", {{2, 3, 7}}, [](const Inputs& in) {
              return F::adaptive_avg_pool1d(in[0], {3});
            }});
  add_case({"adaptive_avg_pool2d", {{2, 3, 5, 6}}, [](const Inputs& in) {
              return F::adaptive_avg_pool2d(in[0], {3, std::nullopt});
            }});
  add_case({"adaptive_avg_pool3d", {{2, 3, 5, 4, 6}}, [](const Inputs& in) {
              return F::adaptive_avg_pool3d(in[0], {3, std::nullopt, 4});
            }});
  add_case({"adaptive_max_pool1d", {{2, 3, 7}}, [](const Inputs& in) {
              return F::adaptive_max_pool1d_with_indices(in[0], {3}).first;
            }});
  add_case({"adaptive_max_pool2d", {{2, 3, 5, 6}}, [](const Inputs& in) {
              return F::adaptive_max_pool2d_with_indices(in[0], {2, 4}).first;
            }});
  add_case({"adaptive_max_pool3d", {{2, 3, 5, 4, 6}}, [](const Inputs& in) {
              return F::adaptive_max_pool3d_with_indices(in[0], {3, 2, 4}).first;
            }});
  // nn ops moved from Python (src/nn/unpool_and_bags.cpp, multi_head_attention.cpp,
  // margin_losses.cpp; nonzero_static in src/ops/advanced_indexing.cpp)
  add_case({"max_unpool1d", {{2, 3}}, [](const Inputs& in) {
              return F::max_unpool1d(in[0], tensor<int64_t>({0, 3, 5, 1, 2, 4}, {2, 3}), {2});
            }});
  add_case(
      {"max_unpool2d", {{1, 2, 2, 3}}, [](const Inputs& in) {
         const Tensor indices =
             tensor<int64_t>({0, 3, 5, 12, 15, 17, 1, 2, 4, 19, 20, 23}, {1, 2, 2, 3});
         return F::max_unpool2d(in[0], indices, {2}, with([](auto& o) { o.output_size = {5, 6}; }));
       }});
  add_case({"max_unpool3d", {{2, 2, 1, 1}}, [](const Inputs& in) {
              const Tensor indices = tensor<int64_t>({0, 9, 3, 14}, {2, 2, 1, 1});
              return F::max_unpool3d(in[0], indices, {2});
            }});
  add_case({"embedding_bag", {{5, 6}}, [](const Inputs& in) {
              return F::embedding_bag(tensor<int64_t>({4, 0, 4, 1, 2, 2}, {2, 3}), in[0],
                                      with([](auto& o) { o.padding_idx = 2; }));
            }});
  add_case({"embedding_bag_max_offsets", {{5, 6}}, [](const Inputs& in) {
              return F::embedding_bag(tensor<int64_t>({4, 0, 3, 1, 2}, {5}), in[0],
                                      with([](auto& o) {
                                        o.offsets = tensor<int64_t>({0, 2, 2}, {3});
                                        o.mode = F::EmbeddingBagMode::Max;
                                      }));
            }});
  add_case({"triplet_margin_with_distance_loss", {m, m, m}, [=](const Inputs& in) {
              return F::triplet_margin_with_distance_loss(in[0], in[1], in[2], {}, 0.5, true, none);
            }});
  add_case({"multi_head_attention_forward", {{3, 2, 4}, {12, 4}, {4, 4}}, [](const Inputs& in) {
              const auto [out, weights] =
                  F::multi_head_attention_forward(in[0], in[0], in[0], 4, 2, in[1], Tensor(),
                                                  Tensor(), Tensor(), false, 0.0, in[2], Tensor());
              return cat({out.reshape({-1}), weights.reshape({-1})});
            }});
  add_case({"nonzero_static", {{4, 6}}, [](const Inputs& in) {
              return nonzero_static(in[0].gt(0), 30, -2);
            }});
  add_case({"interpolate", {{2, 3, 4, 5}}, [](const Inputs& in) {
              return F::interpolate(in[0], with([](auto& o) {
                                      o.size = {7, 3};
                                      o.mode = F::InterpolateMode::Bilinear;
                                    }));
            }});
  add_case({"interpolate_nearest", {{2, 3, 5}}, [](const Inputs& in) {
              return F::interpolate(in[0], with([](auto& o) { o.scale_factor = {1.7}; }));
            }});
  add_case({"interpolate_bicubic", {{1, 2, 4, 5}}, [](const Inputs& in) {
              return F::interpolate(in[0], with([](auto& o) {
                                      o.scale_factor = {2.0, 0.6};
                                      o.mode = F::InterpolateMode::Bicubic;
                                      o.align_corners = true;
                                    }));
            }});
  add_case({"pixel_shuffle", {{2, 8, 3, 4}}, [](const Inputs& in) {
              return F::pixel_shuffle(in[0], 2);
            }});
  add_case({"pixel_unshuffle", {{2, 2, 4, 6}}, [](const Inputs& in) {
              return F::pixel_unshuffle(in[0], 2);
            }});
  add_case({"group_norm", {{2, 6, 3, 4}, {6}, {6}}, [](const Inputs& in) {
              return F::group_norm(in[0], 3, in[1], in[2]);
            }});
  add_case({"exp_bfloat16",
            {{4, 6}},
            [](const Inputs& in) { return exp(in[0]); },
            nullptr,
            [](Tensor& self, const Inputs&) { self.exp_(); },
            Domain::Unit,
            kBFloat16});
  // Complex numbers: inputs are complex(in[0], in[1]) and views of it (the
  // transposed and sliced ones are non-contiguous complex tensors).
  const auto z = [](const Inputs& in) { return complex(in[0], in[1]); };
  add_case({"view_as_real", {{4, 6}, {4, 6}}, [=](const Inputs& in) {
              return view_as_real(z(in).t());
            }});
  add_case({"view_as_complex", {{4, 6}, {4, 6}}, [](const Inputs& in) {
              return view_as_complex(stack({in[0], in[1]}, -1));
            }});
  add_case(
      {"real", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return real(z(in).narrow(1, 1, 3)); }});
  add_case({"imag", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return imag(z(in).t()); }});
  add_case({"complex", {{4, 6}, {6}}, [](const Inputs& in) { return complex(in[0], in[1]); }});
  add_case({"polar", {{4, 6}, {4, 6}}, [](const Inputs& in) { return polar(in[0], in[1]); }});
  add_case({"conj", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return conj(z(in).t()); }});
  add_case(
      {"conj_physical", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return conj_physical(z(in)); }});
  add_case(
      {"resolve_conj", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return resolve_conj(z(in)); }});
  add_case({"angle", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return angle(z(in).t()); }});
  add_case({"angle_real", {{4, 6}}, [](const Inputs& in) { return angle(in[0]); }});
  add_case(
      {"isreal", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return isreal(z(in) * in[0].gt(0)); }});
  add_case({"complex_arithmetic", {{4, 6}, {4, 6}}, [=](const Inputs& in) {
              const Tensor a = z(in), b = z(in).t().contiguous().t().flip({0});
              return (a * b + a / (b + 3.0) - exp(-a)).sum({1}) + reciprocal(a + 4.0).mean();
            }});
  // Fourier transforms: any length (6 = 2 * 3, 5 and 7 primes), resized
  // (n trims or pads), along either dim, of real and complex inputs.
  add_case(
      {"fft_c2c", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return fft::fft(z(in).t(), 5, 0); }});
  add_case({"fft_fft", {{4, 6}}, [](const Inputs& in) { return fft::fft(in[0]); }});
  add_case({"fft_fft_dim0_ortho", {{4, 6}, {4, 6}}, [=](const Inputs& in) {
              return fft::fft(z(in), 7, 0, "ortho");
            }});
  add_case({"fft_ifft", {{4, 6}, {4, 6}}, [=](const Inputs& in) {
              return fft::ifft(z(in), 4, -1, "forward");
            }});
  add_case(
      {"fft_rfft", {{4, 6}}, [](const Inputs& in) { return fft::rfft(in[0], std::nullopt, 0); }});
  add_case({"fft_irfft", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return fft::irfft(z(in), 7); }});
  add_case({"fft_hfft", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return fft::hfft(z(in).t()); }});
  add_case({"fft_ihfft", {{4, 6}}, [](const Inputs& in) { return fft::ihfft(in[0], 5); }});
  add_case({"fft_fft2", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return fft::fft2(z(in)); }});
  add_case({"fft_ifft2", {{4, 6}, {4, 6}}, [=](const Inputs& in) {
              return fft::ifft2(z(in), std::vector<int64_t>{3, 8}, {1, 0}, "ortho");
            }});
  add_case({"fft_rfft2", {{4, 6}}, [](const Inputs& in) { return fft::rfft2(in[0]); }});
  add_case({"fft_irfft2", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return fft::irfft2(z(in)); }});
  add_case(
      {"fft_hfft2", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return fft::hfft2(z(in).t()); }});
  add_case({"fft_ihfft2", {{4, 6}}, [](const Inputs& in) { return fft::ihfft2(in[0]); }});
  add_case({"fft_fftn", {{4, 6}}, [](const Inputs& in) { return fft::fftn(in[0]); }});
  add_case({"fft_ifftn", {{4, 6}, {4, 6}}, [=](const Inputs& in) {
              return fft::ifftn(z(in), std::nullopt, std::vector<int64_t>{0});
            }});
  add_case({"fft_rfftn", {{4, 6}}, [](const Inputs& in) {
              return fft::rfftn(in[0], std::vector<int64_t>{5, 5});
            }});
  add_case({"fft_irfftn", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return fft::irfftn(z(in)); }});
  add_case({"fft_hfftn", {{4, 6}, {4, 6}}, [=](const Inputs& in) { return fft::hfftn(z(in)); }});
  add_case({"fft_ihfftn", {{4, 6}}, [](const Inputs& in) { return fft::ihfftn(in[0]); }});
  add_case(
      {"fft_fftfreq", {{4, 6}}, [](const Inputs& in) { return fft::fftfreq(in[0].size(1), 0.5); }});
  add_case(
      {"fft_rfftfreq", {{4, 6}}, [](const Inputs& in) { return fft::rfftfreq(in[0].size(1)); }});
  add_case({"fft_fftshift", {{4, 6}, {4, 6}}, [=](const Inputs& in) {
              return fft::fftshift(z(in).t());
            }});
  add_case({"fft_ifftshift", {{4, 6}}, [](const Inputs& in) {
              return fft::ifftshift(in[0], std::vector<int64_t>{1});
            }});
  // The special functions (CPU only), last: the cases share one generator,
  // so the others keep their inputs. No in-place forms.
#define STRIDE_SPECIAL_UNARY_CASE(name, which, backward, domain) \
  add_case(SPECIAL_UNARY(name, Domain::domain));
  STRIDE_SPECIAL_UNARY_OPS(STRIDE_SPECIAL_UNARY_CASE)
#undef STRIDE_SPECIAL_UNARY_CASE
#define STRIDE_SPECIAL_NOGRAD_CASE(name, domain) add_case(SPECIAL_UNARY(name, Domain::domain));
  STRIDE_SPECIAL_UNARY_NOGRAD_OPS(STRIDE_SPECIAL_NOGRAD_CASE)
#undef STRIDE_SPECIAL_NOGRAD_CASE
#define STRIDE_SPECIAL_BINARY_CASE(name, grad_a, grad_b, domain) \
  add_case(BINARY(name, Domain::domain));
  STRIDE_SPECIAL_BINARY_OPS(STRIDE_SPECIAL_BINARY_CASE)
#undef STRIDE_SPECIAL_BINARY_CASE
#define STRIDE_SPECIAL_BINARY_NOGRAD_CASE(name, domain) add_case(BINARY(name, Domain::domain));
  STRIDE_SPECIAL_BINARY_NOGRAD_OPS(STRIDE_SPECIAL_BINARY_NOGRAD_CASE)
#undef STRIDE_SPECIAL_BINARY_NOGRAD_CASE
  add_case({"polygamma",
            {{4, 6}},
            [](const Inputs& in) { return polygamma(2, in[0]); },
            [](Tensor& out, const Inputs& in) { polygamma_out(out, 2, in[0]); },
            nullptr,
            Domain::Positive});
  add_case({"mvlgamma",
            {{4, 6}},
            [](const Inputs& in) { return mvlgamma(in[0], 3); },
            nullptr,
            nullptr,
            Domain::AboveOne});
  for (auto [name, fn] : {std::pair{"deg2rad", &deg2rad}, std::pair{"rad2deg", &rad2deg},
                          std::pair{"signbit", &signbit}, std::pair{"isposinf", &isposinf},
                          std::pair{"isneginf", &isneginf}}) {
    add_case({name, {{4, 6}}, [fn](const Inputs& in) { return fn(in[0]); }});
  }
  add_case({"nan_to_num", {{4, 6}}, [](const Inputs& in) {
              return nan_to_num(log(in[0]), 1.0, 2.0, -2.0);
            }});
  add_case({"heaviside", {{4, 6}, {4, 6}}, [](const Inputs& in) {
              return heaviside(round(in[0]), in[1]);
            }});
  add_case({"ldexp", {{4, 6}, {4, 6}}, [](const Inputs& in) { return ldexp(in[0], in[1]); }});
  add_case({"float_power",
            {{4, 6}, {4, 6}},
            [](const Inputs& in) { return float_power(in[0], in[1]); },
            nullptr,
            nullptr,
            Domain::Positive,
            kFloat32,
            1e-5});
  add_case({"logit",
            {{4, 6}},
            [](const Inputs& in) { return logit(in[0], 0.25); },
            nullptr,
            nullptr,
            Domain::Probability});
  // torch.masked (src/ops/masked.cpp): the mask is where the last input is
  // positive, so that its layout varies too; a fully masked-out row reads
  // as the op's identity or NaN, on meta as on the CPU.
  {
    using std::nullopt;
    const DimVector mm{4, 6};
    const auto keep = [](const Tensor& last) { return last.gt(0); };
    add_case({"masked_sum", {mm, mm}, [=](const Inputs& in) {
                return masked::sum(in[0], {1}, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_prod", {mm, mm}, [=](const Inputs& in) {
                return masked::prod(in[0], {0}, true, nullopt, keep(in[1]));
              }});
    add_case({"masked_amax", {mm, {6}}, [=](const Inputs& in) {
                return masked::amax(in[0], {-1}, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_amin", {mm, mm}, [=](const Inputs& in) {
                return masked::amin(in[0], {}, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_argmax", {mm, mm}, [=](const Inputs& in) {
                return masked::argmax(in[0], 1, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_argmin", {mm, mm}, [=](const Inputs& in) {
                return masked::argmin(in[0], 0, true, kInt64, keep(in[1]));
              }});
    add_case({"masked_mean", {mm, mm}, [=](const Inputs& in) {
                return masked::mean(in[0], {1}, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_median", {mm, mm}, [=](const Inputs& in) {
                return masked::median(in[0], 1, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_logsumexp", {mm, mm}, [=](const Inputs& in) {
                return masked::logsumexp(in[0], {1}, true, nullopt, keep(in[1]));
              }});
    add_case({"masked_norm", {mm, mm}, [=](const Inputs& in) {
                return masked::norm(in[0], 3.0, {1}, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_var", {mm, mm}, [=](const Inputs& in) {
                return masked::var(in[0], {1}, 1, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_std_dev", {mm, mm}, [=](const Inputs& in) {
                return masked::std_dev(in[0], {0, 1}, 0, false, nullopt, keep(in[1]));
              }});
    add_case({"masked_cumsum", {mm, mm}, [=](const Inputs& in) {
                return masked::cumsum(in[0], 1, nullopt, keep(in[1]));
              }});
    add_case({"masked_cumprod", {mm, mm}, [=](const Inputs& in) {
                return masked::cumprod(in[0], 0, nullopt, keep(in[1]));
              }});
    add_case({"masked_softmax", {mm, mm}, [=](const Inputs& in) {
                return masked::softmax(in[0], 1, nullopt, keep(in[1]));
              }});
    add_case({"masked_log_softmax", {mm, mm}, [=](const Inputs& in) {
                return masked::log_softmax(in[0], -1, nullopt, keep(in[1]));
              }});
    add_case({"masked_softmin", {mm, mm}, [=](const Inputs& in) {
                return masked::softmin(in[0], 0, nullopt, keep(in[1]));
              }});
    add_case({"masked_normalize", {mm, mm}, [=](const Inputs& in) {
                return masked::normalize(in[0], 2.0, 1, 1e-12, nullopt, keep(in[1]));
              }});
    add_case({"masked_logaddexp", {mm, mm, mm}, [=](const Inputs& in) {
                return masked::logaddexp(in[0], in[1], nullopt, keep(in[2]), keep(in[1]));
              }});
  }
  // shape compositions (src/ops/shape_ops.cpp); a split's pieces come back flat()
  add_case({"atleast_1d", {{4, 6}}, [](const Inputs& in) {
              return atleast_1d(in[0].select(0, 1).select(0, 2));
            }});
  add_case(
      {"atleast_2d", {{4, 6}}, [](const Inputs& in) { return atleast_2d(in[0].select(0, 3)); }});
  add_case({"atleast_3d", {{4, 6}}, [](const Inputs& in) { return atleast_3d(in[0]); }});
  add_case({"broadcast_to", {{4, 1}}, [](const Inputs& in) {
              return broadcast_to(in[0], {2, 4, 6});
            }});
  add_case({"broadcast_tensors", {{4, 1}, {6}}, [](const Inputs& in) {
              return stack(broadcast_tensors({in[0], in[1]}));
            }});
  add_case({"hstack", {{4, 6}, {4, 2}}, [](const Inputs& in) { return hstack({in[0], in[1]}); }});
  add_case({"vstack", {{4, 6}, {6}}, [](const Inputs& in) { return vstack({in[0], in[1]}); }});
  add_case({"dstack", {{4, 6}, {4, 6}}, [](const Inputs& in) { return dstack({in[0], in[1]}); }});
  add_case({"column_stack", {{4}, {4, 6}}, [](const Inputs& in) {
              return column_stack({in[0], in[1]});
            }});
  add_case({"tensor_split", {{4, 7}}, [](const Inputs& in) {
              return flat(tensor_split(in[0], 3, -1));
            }});
  add_case({"tensor_split_at", {{4, 7}}, [](const Inputs& in) {
              return flat(tensor_split_at(in[0], {2, 6, 5}, 1));
            }});
  add_case({"split_with_sizes", {{4, 6}}, [](const Inputs& in) {
              return flat(split_with_sizes(in[0], {1, 0, 4, 1}, 1));
            }});
  add_case({"hsplit", {{4, 6}}, [](const Inputs& in) { return flat(hsplit(in[0], 3)); }});
  add_case({"vsplit", {{4, 6}}, [](const Inputs& in) { return vsplit(in[0], 2)[1]; }});
  add_case({"dsplit", {{2, 3, 6}}, [](const Inputs& in) {
              return flat(dsplit_at(in[0], {1, 4}));
            }});
  add_case({"movedim", {{3, 4, 6}}, [](const Inputs& in) {
              return movedim(in[0], {0, 2}, {1, 0});
            }});
  add_case({"ravel", {{4, 6}}, [](const Inputs& in) { return ravel(in[0]); }});
  add_case({"fliplr", {{4, 6}}, [](const Inputs& in) { return fliplr(in[0]); }});
  add_case({"flipud", {{4, 6}}, [](const Inputs& in) { return flipud(in[0]); }});
  add_case({"rot90", {{4, 6}}, [](const Inputs& in) { return rot90(in[0], 1, {0, 1}); }});
  add_case({"rot90_k3", {{3, 4, 6}}, [](const Inputs& in) { return rot90(in[0], -1, {2, 0}); }});
  add_case({"diag", {{6}}, [](const Inputs& in) { return diag(in[0], 1); }});
  add_case({"diag_of_matrix", {{4, 6}}, [](const Inputs& in) { return diag(in[0], -1); }});
  add_case({"diag_embed", {{2, 3}}, [](const Inputs& in) { return diag_embed(in[0], 1, 0, 2); }});
  add_case({"diagflat", {{2, 3}}, [](const Inputs& in) { return diagflat(in[0], -1); }});
  add_case({"block_diag", {{2, 3}, {4}, {1, 2}}, [](const Inputs& in) {
              return block_diag({in[0], in[1], in[2]});
            }});
  add_case({"meshgrid", {{3}, {4}}, [](const Inputs& in) {
              return stack(meshgrid({in[0], in[1]}, "xy"));
            }});
  add_case({"cartesian_prod", {{3}, {4}}, [](const Inputs& in) {
              return cartesian_prod({in[0], in[1]});
            }});
  add_case({"combinations", {{5}}, [](const Inputs& in) { return combinations(in[0], 2); }});
  add_case({"repeat", {{4, 6}}, [](const Inputs& in) { return repeat(in[0], {2, 1, 2}); }});
  add_case({"tile", {{4, 6}}, [](const Inputs& in) { return tile(in[0], {2}); }});
  add_case({"repeat_interleave", {{4, 6}}, [](const Inputs& in) {
              return repeat_interleave(in[0], 2, 1);
            }});
  // The counts are values on the CPU (read to size the result), so they
  // stay there on the meta run too.
  add_case({"repeat_interleave_counts",
            {{4, 6}},
            [counts = tensor<int64_t>({1, 0, 3, 2})](const Inputs& in) {
              return repeat_interleave(in[0], counts, 0);
            }});
  add_case({"unflatten", {{4, 6}}, [](const Inputs& in) { return unflatten(in[0], 1, {2, -1}); }});
  add_case({"sum_to_size", {{4, 6}}, [](const Inputs& in) { return sum_to_size(in[0], {1, 6}); }});
  // recurrent layers (src/nn/rnn.cpp): the sequence ops' outputs flattened
  // into one tensor; params are every input after the state.
  const auto flat = [](const std::vector<Tensor>& outputs) {
    std::vector<Tensor> flattened;
    for (const Tensor& o : outputs) flattened.push_back(o.reshape({-1}));
    return cat(flattened, 0);
  };
  const auto from = [](const Inputs& in, size_t first) {
    return std::vector<Tensor>(in.begin() + std::ptrdiff_t(first), in.end());
  };
  // In float64: BLAS sums the products in an order that depends on the
  // layout, which moves float32 results by more than the table's rtol.
  const auto add_recurrent = [&](OpCase c) {
    c.dtype = kFloat64;
    add_case(std::move(c));
  };
  const std::vector<DimVector> rnn_cell{{2, 4}, {2, 3}, {3, 4}, {3, 3}, {3}, {3}};
  add_recurrent({"rnn_tanh_cell", rnn_cell, [](const Inputs& in) {
                   return F::rnn_tanh_cell(in[0], in[1], in[2], in[3], in[4], in[5]);
                 }});
  add_recurrent({"rnn_relu_cell", rnn_cell, [](const Inputs& in) {
                   return F::rnn_relu_cell(in[0], in[1], in[2], in[3], in[4], in[5]);
                 }});
  add_recurrent(
      {"lstm_cell", {{2, 4}, {2, 3}, {2, 3}, {12, 4}, {12, 3}, {12}, {12}}, [=](const Inputs& in) {
         const auto [h, c] = F::lstm_cell(in[0], {in[1], in[2]}, in[3], in[4], in[5], in[6]);
         return flat({h, c});
       }});
  add_recurrent({"gru_cell", {{2, 4}, {2, 3}, {9, 4}, {9, 3}, {9}, {9}}, [](const Inputs& in) {
                   return F::gru_cell(in[0], in[1], in[2], in[3], in[4], in[5]);
                 }});
  add_recurrent({"rnn_tanh",
                 {{3, 2, 4}, {2, 2, 3}, {3, 4}, {3, 3}, {3}, {3}, {3, 3}, {3, 3}, {3}, {3}},
                 [=](const Inputs& in) {
                   const auto [out, h] = F::rnn_tanh(in[0], in[1], from(in, 2), {.num_layers = 2});
                   return flat({out, h});
                 }});
  add_recurrent({"rnn_relu",
                 {{3, 2, 4}, {2, 2, 3}, {3, 4}, {3, 3}, {3}, {3}, {3, 4}, {3, 3}, {3}, {3}},
                 [=](const Inputs& in) {
                   const auto [out, h] =
                       F::rnn_relu(in[0], in[1], from(in, 2), {.bidirectional = true});
                   return flat({out, h});
                 }});
  add_recurrent({"lstm",
                 {{2, 3, 4},
                  {4, 2, 3},
                  {4, 2, 3},
                  {12, 4},
                  {12, 3},
                  {12},
                  {12},
                  {12, 4},
                  {12, 3},
                  {12},
                  {12},
                  {12, 6},
                  {12, 3},
                  {12},
                  {12},
                  {12, 6},
                  {12, 3},
                  {12},
                  {12}},
                 [=](const Inputs& in) {
                   const auto [out, h, c] =
                       F::lstm(in[0], {in[1], in[2]}, from(in, 3),
                               {.num_layers = 2, .bidirectional = true, .batch_first = true});
                   return flat({out, h, c});
                 }});
  add_recurrent({"gru", {{3, 4}, {1, 3}, {9, 4}, {9, 3}}, [=](const Inputs& in) {
                   const auto [out, h] = F::gru(in[0], in[1], from(in, 2), {.has_biases = false});
                   return flat({out, h});
                 }});
  return t;
}

}  // namespace
}  // namespace stride::testing

namespace stride::testing {
namespace {

Inputs contiguous_copies(const Inputs& in) {
  Inputs out;
  for (const Tensor& t : in) out.push_back(t.clone());
  return out;
}

std::string describe(const OpCase& c, const std::vector<Layout>& layouts) {
  std::string s = c.name + " [";
  for (size_t i = 0; i < layouts.size(); ++i)
    s += std::string(i ? "," : "") + layout_name(layouts[i]);
  return s + "]";
}

// The input layout combinations: all inputs in layout L, then each input
// alone in L with the others contiguous.
std::vector<std::vector<Layout>> input_layout_combos(size_t arity) {
  std::vector<std::vector<Layout>> combos;
  for (Layout l : kAllLayouts) combos.push_back(std::vector<Layout>(arity, l));
  if (arity > 1) {
    for (size_t i = 0; i < arity; ++i) {
      for (Layout l : kAllLayouts) {
        if (l == Layout::Contiguous) continue;
        std::vector<Layout> c(arity, Layout::Contiguous);
        c[i] = l;
        combos.push_back(c);
      }
    }
  }
  return combos;
}

TEST(LayoutMatrix, EveryOpEveryLayout) {
  Generator gen(1234);
  int64_t cases = 0;
  for (const OpCase& c : op_table()) {
    for (const auto& layouts : input_layout_combos(c.shapes.size())) {
      Inputs in;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        in.push_back(make_input(c.shapes[i], c.dtype, layouts[i], c.domain, gen));
      }
      const std::string what = describe(c, layouts);
      const Tensor ref = c.fn(contiguous_copies(in));
      // Inputs in this layout.
      EXPECT_TRUE(close(c.fn(in), ref, c.rtol)) << what;
      ++cases;
      // out= into every writable output layout.
      if (c.out_fn && layouts[0] == Layout::Contiguous) {
        for (Layout ol : kOutputLayouts) {
          Tensor base;
          Tensor out = make_output(ref.sizes(), ref.dtype(), ol, base);
          Tensor before = base.clone();
          c.out_fn(out, in);
          expect_written_only_inside(out, ref, base, before, c.rtol,
                                     what + " out=" + layout_name(ol));
          ++cases;
        }
      }
      // In place on a self in every writable layout.
      if (c.inplace_fn && layouts[0] != Layout::Expanded) {
        for (Layout sl : kOutputLayouts) {
          Tensor base;
          Tensor self = make_output(in[0].sizes(), in[0].dtype(), sl, base);
          self.copy_(in[0]);
          Tensor before = base.clone();
          Inputs args = in;
          args[0] = self;
          c.inplace_fn(self, args);
          expect_written_only_inside(self, ref, base, before, c.rtol,
                                     what + " in-place self=" + layout_name(sl));
          ++cases;
        }
      }
    }
  }
  std::printf("layout matrix: %lld op x layout cases ran\n", static_cast<long long>(cases));
  EXPECT_GT(cases, 1000);
}

// The same view of t's memory on meta: sizes, strides and offset kept.
Tensor meta_view(const Tensor& t) {
  const auto elements = int64_t(t.storage()->nbytes() / t.element_size());
  return empty({elements}, t.options().device(kMeta))
      .as_strided(t.sizes(), t.strides(), t.storage_offset());
}

void expect_same_geometry(const Tensor& meta, const Tensor& cpu, const std::string& what) {
  EXPECT_TRUE(meta.device().is_meta()) << what;
  EXPECT_EQ(meta.dtype(), cpu.dtype()) << what;
  EXPECT_EQ(meta.sizes(), cpu.sizes()) << what;
  EXPECT_EQ(meta.strides(), cpu.strides()) << what;
  EXPECT_EQ(meta.storage_offset(), cpu.storage_offset()) << what;
}

// Every op of the matrix, every layout, out= and in-place forms, on meta:
// the outputs' shapes, dtypes and strides are the CPU's, and an in-place op
// bumps the version counter as often.
TEST(LayoutMatrix, MetaAgreesWithTheCpuOnShapesDtypesAndStrides) {
  Generator gen(1234);
  int64_t cases = 0;
  for (const OpCase& c : op_table()) {
    if (c.data_dependent_shape) continue;
    for (const auto& layouts : input_layout_combos(c.shapes.size())) {
      Inputs in, meta_in;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        in.push_back(make_input(c.shapes[i], c.dtype, layouts[i], c.domain, gen));
        meta_in.push_back(meta_view(in.back()));
      }
      const std::string what = describe(c, layouts) + " on meta";
      const Tensor cpu_result = c.fn(in);
      Tensor meta_result;
      {
        DefaultDeviceGuard on_meta(kMeta);  // what the op makes itself goes to meta too
        meta_result = c.fn(meta_in);
      }
      expect_same_geometry(meta_result, cpu_result, what);
      ++cases;
      if (c.out_fn && layouts[0] == Layout::Contiguous) {
        for (Layout ol : kOutputLayouts) {
          Tensor base;
          Tensor out = make_output(cpu_result.sizes(), cpu_result.dtype(), ol, base);
          Tensor meta_out = meta_view(out);
          c.out_fn(out, in);
          {
            DefaultDeviceGuard on_meta(kMeta);
            c.out_fn(meta_out, meta_in);
          }
          expect_same_geometry(meta_out, out, what + " out=" + layout_name(ol));
          ++cases;
        }
      }
      if (c.inplace_fn && layouts[0] != Layout::Expanded) {
        for (Layout sl : kOutputLayouts) {
          Tensor base;
          Tensor self = make_output(in[0].sizes(), in[0].dtype(), sl, base);
          self.copy_(in[0]);
          Tensor meta_self = meta_view(self);
          const uint64_t cpu_version = self.version(), meta_version = meta_self.version();
          Inputs args = in, meta_args = meta_in;
          args[0] = self;
          meta_args[0] = meta_self;
          c.inplace_fn(self, args);
          {
            DefaultDeviceGuard on_meta(kMeta);
            c.inplace_fn(meta_self, meta_args);
          }
          const std::string where = what + " in-place self=" + layout_name(sl);
          expect_same_geometry(meta_self, self, where);
          EXPECT_EQ(meta_self.version() - meta_version, self.version() - cpu_version) << where;
          ++cases;
        }
      }
    }
  }
  std::printf("layout matrix on meta: %lld op x layout cases ran\n", static_cast<long long>(cases));
  EXPECT_GT(cases, 1000);
}

// The table holds a case for every listed op but those only backward
// formulas run (tested through gradcheck's second derivatives).
TEST(LayoutMatrix, EveryListedOpHasACase) {
  std::vector<std::string> names;
  for (const OpCase& c : op_table()) names.push_back(c.name);
  const std::vector<std::string> missing =
      ops_without_a_case(names, [](const detail::OpInfo& op) { return !op.internal; });
  EXPECT_TRUE(missing.empty()) << "no layout-matrix case for: "
                               << ::testing::PrintToString(missing);
}

// Writing through an expanded view is refused, never silently racy.
TEST(LayoutMatrix, InPlaceOnExpandedViewThrows) {
  Tensor base = zeros({1, 6});
  Tensor expanded = base.expand({4, 6});
  EXPECT_THROW(expanded.add_(ones({4, 6})), OverlapError);
  EXPECT_THROW(expanded.uniform_(), OverlapError);
  Tensor out = zeros({1, 6}).expand({4, 6});
  EXPECT_THROW(add_out(out, ones({4, 6}), ones({4, 6})), OverlapError);
}

}  // namespace
}  // namespace stride::testing
