// max_unpool and embedding_bag, composed of scatter and index_add (listed as
// Composite in src/core/op_list.h), so that their gradients are those ops'.
// Both place rows by index tensors built with ops rather than read on the
// host, so their shapes follow from their arguments' shapes and they run on
// meta; only the checks of index values read them, and not on meta.
#include <string>
#include <vector>

#include "core/check.h"
#include "nn/conv_internal.h"
#include "ops/apply.h"
#include "stride/autograd.h"
#include "stride/nn/functional.h"
#include "stride/ops.h"

namespace stride::nn::functional {

namespace {

using detail::Triple;
using ::stride::detail::check_dtype_rule;
using ::stride::detail::Op;

// ---- max_unpool ----

// The last `dims` entries of a Triple (a 1-d op's width, a 2-d op's height
// and width).
std::vector<int64_t> last_dims(const Triple& t, int64_t dims) {
  return std::vector<int64_t>(t.end() - dims, t.end());
}

// PyTorch's _unpool_output_size: the inverse of max_pool's size formula, or
// output_size (its spatial sizes, with or without the leading dims), which
// must lie strictly within one stride of it.
std::vector<int64_t> unpooled_size(const Tensor& x,
                                   const std::vector<int64_t>& kernel,
                                   const std::vector<int64_t>& step,
                                   const std::vector<int64_t>& padding,
                                   const std::vector<int64_t>& output_size,
                                   const char* op) {
  const auto dims = int64_t(kernel.size());
  std::vector<int64_t> inverse;
  for (int64_t d = 0; d < dims; ++d) {
    const size_t i = size_t(d);
    inverse.push_back((x.size(x.dim() - dims + d) - 1) * step[i] - 2 * padding[i] + kernel[i]);
  }
  if (output_size.empty()) return inverse;
  const auto given = int64_t(output_size.size());
  STRIDE_CHECK(given == dims || given == dims + 2 || given == x.dim(), ValueError, "[", op,
               "] output_size must hold ", dims, " spatial sizes, or the whole output shape; got ",
               shape_str(output_size), ".");
  const std::vector<int64_t> size(output_size.end() - dims, output_size.end());
  for (int64_t d = 0; d < dims; ++d) {
    const size_t i = size_t(d);
    const int64_t low = inverse[i] - step[i], high = inverse[i] + step[i];
    STRIDE_CHECK(low < size[i] && size[i] < high, ValueError, "[", op, "] output_size ",
                 shape_str(size), " is out of reach of the pooled input: spatial dim ", d,
                 " must be between ", low, " and ", high, " (exclusive); pass a size in range.");
  }
  return size;
}

// Every index must name an element of its output plane of `plane` elements
// (on meta there are no values to check).
void check_indices_in_plane(const Tensor& indices, int64_t plane, const char* op) {
  if (indices.device().is_meta() || indices.numel() == 0) return;
  NoGradGuard no_grad;
  const bool inside = indices.ge(0).all().item<bool>() && indices.lt(plane).all().item<bool>();
  STRIDE_CHECK(inside, ValueError, "[", op, "] indices must lie in [0, ", plane,
               "), the output plane; pass the indices max_pool returned for this input.");
}

Tensor max_unpool(const Tensor& x,
                  const Tensor& indices,
                  IntArrayRef kernel_size,
                  const UnpoolOptions& o,
                  int64_t dims,
                  Op listed,
                  const char* op) {
  check_dtype_rule(listed, x);
  STRIDE_CHECK(x.dim() == dims + 1 || x.dim() == dims + 2, ShapeError, "[", op, "] input must be ",
               dims + 1, "-d (C, *spatial) or ", dims + 2, "-d (N, C, *spatial); got ",
               shape_str(x.sizes()), ".");
  STRIDE_CHECK(indices.sizes() == x.sizes(), ShapeError, "[", op,
               "] indices must have input's shape ", shape_str(x.sizes()), "; got ",
               shape_str(indices.sizes()), ".");
  STRIDE_CHECK(indices.dtype() == kInt64, DTypeError, "[", op,
               "] indices must be int64, as max_pool returns them; got ",
               to_string(indices.dtype()), ".");
  const std::vector<int64_t> kernel =
      last_dims(detail::spatial_arg(kernel_size, dims, 1, 1, op, "kernel_size"), dims);
  const std::vector<int64_t> step =
      o.stride.empty() ? kernel
                       : last_dims(detail::spatial_arg(o.stride, dims, 1, 1, op, "stride"), dims);
  const std::vector<int64_t> padding =
      last_dims(detail::spatial_arg(o.padding, dims, 0, 0, op, "padding"), dims);
  const std::vector<int64_t> size = unpooled_size(x, kernel, step, padding, o.output_size, op);
  int64_t plane = 1;
  for (const int64_t s : size) plane *= s;
  check_indices_in_plane(indices, plane, op);
  std::vector<int64_t> lead(x.sizes().begin(), x.sizes().end() - dims);
  std::vector<int64_t> flat = lead, shape = lead;
  flat.push_back(-1);
  shape.insert(shape.end(), size.begin(), size.end());
  lead.push_back(plane);
  const Tensor zero = zeros(lead, x.options());
  return scatter(zero, -1, indices.reshape(flat), x.reshape(flat)).reshape(shape);
}

// ---- embedding_bag ----

void check_bag_arguments(const Tensor& input, const Tensor& weight, const EmbeddingBagOptions& o) {
  STRIDE_CHECK(input.dtype() == kInt64 || input.dtype() == kInt32, DTypeError,
               "[embedding_bag] input must hold int64 or int32 ids; got ", to_string(input.dtype()),
               ".");
  STRIDE_CHECK(weight.dim() == 2, ShapeError,
               "[embedding_bag] weight must be 2-d (num_embeddings, dim); got shape ",
               shape_str(weight.sizes()), ".");
  STRIDE_CHECK(weight.is_floating_point(), DTypeError,
               "[embedding_bag] weight must be floating-point; got ", to_string(weight.dtype()),
               ".");
  if (input.dim() == 2) {
    STRIDE_CHECK(!o.offsets.defined(), ValueError,
                 "[embedding_bag] offsets must be undefined for a 2-d input, each row of which is "
                 "a bag; drop offsets or pass a 1-d input.");
  } else {
    STRIDE_CHECK(input.dim() == 1 && o.offsets.defined() && o.offsets.dim() == 1, ValueError,
                 "[embedding_bag] input must be (B, N), or 1-d with 1-d offsets; got input of "
                 "shape ",
                 shape_str(input.sizes()), " and ",
                 o.offsets.defined() ? "offsets of shape " + shape_str(o.offsets.sizes())
                                     : std::string("no offsets"),
                 ".");
    STRIDE_CHECK(o.offsets.dtype() == kInt64 || o.offsets.dtype() == kInt32, DTypeError,
                 "[embedding_bag] offsets must be int64 or int32; got ",
                 to_string(o.offsets.dtype()), ".");
  }
  STRIDE_CHECK(!o.per_sample_weights.defined() || o.mode == EmbeddingBagMode::Sum,
               NotImplementedError,
               "[embedding_bag] per_sample_weights is only supported in mode sum; pass mode sum "
               "or no per_sample_weights.");
  STRIDE_CHECK(!o.per_sample_weights.defined() || o.per_sample_weights.sizes() == input.sizes(),
               ShapeError, "[embedding_bag] per_sample_weights must have input's shape ",
               shape_str(input.sizes()), "; got ",
               o.per_sample_weights.defined() ? shape_str(o.per_sample_weights.sizes()) : "", ".");
  const int64_t rows = weight.size(0);
  STRIDE_CHECK(!o.padding_idx || (-rows <= *o.padding_idx && *o.padding_idx < rows), ValueError,
               "[embedding_bag] padding_idx must be within [-", rows, ", ", rows, "); got ",
               o.padding_idx.value_or(0), ".");
}

// The bags' starts: offsets, less the last one with include_last_offset
// (it closes the last bag, which as in PyTorch's kernel still runs to the
// end of input). They must start at 0 and not decrease, within the input.
Tensor bag_starts(const Tensor& offsets, int64_t ids, bool include_last_offset) {
  const int64_t count = offsets.size(0) - (include_last_offset && offsets.size(0) > 0 ? 1 : 0);
  const Tensor starts = offsets.narrow(0, 0, count).to(kInt64);
  if (starts.device().is_meta() || count == 0) return starts;
  const std::vector<int64_t> s = starts.to_vector<int64_t>();
  bool ordered = s.front() == 0 && s.back() <= ids;
  for (size_t i = 1; i < s.size(); ++i) ordered = ordered && s[i - 1] <= s[i];
  STRIDE_CHECK(ordered, ValueError,
               "[embedding_bag] offsets must start at 0 and not decrease, within the input of ",
               ids, " ids; got ", shape_str(s), ".");
  return starts;
}

// Each id's bag (int64, one per id) and the number of bags. Ids equal to
// padding_idx go to an extra bag, `bags`, which the caller drops.
std::pair<Tensor, int64_t> bag_of_each_id(const Tensor& input,
                                          const Tensor& ids,
                                          const EmbeddingBagOptions& o,
                                          int64_t rows) {
  const auto positions = [&](int64_t n) { return arange(n, kInt64).to(ids.device()); };
  Tensor bag;
  int64_t bags = 0;
  if (input.dim() == 2) {
    bags = input.size(0);
    bag = positions(bags).unsqueeze(1).expand({bags, input.size(1)}).reshape({-1});
  } else {
    const Tensor starts = bag_starts(o.offsets, ids.size(0), o.include_last_offset);
    bags = starts.size(0);
    // Id i is in the last bag starting at or before it.
    bag = searchsorted(starts, positions(ids.size(0)), false, true) - 1;
  }
  if (o.padding_idx) {
    const int64_t padding = (*o.padding_idx + rows) % rows;
    bag = where(ids.eq(padding), full_like(bag, bags), bag);
  }
  return {bag, bags};
}

// PyTorch's embedding_renorm_: each looked-up row whose norm exceeds
// max_norm is scaled, in place and untracked, to max_norm.
void renormalise_rows(const Tensor& ids, Tensor weight, double max_norm, double norm_type) {
  NoGradGuard no_grad;
  const Tensor looked_up =
      index_fill(zeros({weight.size(0)}, weight.options().dtype(kBool)), 0, ids, true);
  const Tensor norms = weight.norm(norm_type, {1});
  const Tensor scale = where(logical_and(looked_up, norms.gt(max_norm)),
                             (norms + 1e-7).reciprocal() * max_norm, ones_like(norms));
  weight.mul_(scale.unsqueeze(1).to(weight.dtype()));
}

// The looked-up rows with their gradient divided by how often the input
// looks each row up: the values are the rows', only the gradient is scaled.
Tensor rows_scaled_by_frequency(const Tensor& rows, const Tensor& ids, int64_t num_rows) {
  const Tensor one = ones_like(ids).to(rows.dtype());
  const Tensor counts = index_add(zeros({num_rows}, rows.options()), 0, ids, one);
  const Tensor scale = counts.index_select(0, ids).reciprocal().unsqueeze(1);
  const Tensor fixed = rows.detach();
  return fixed + (rows - fixed) * scale;
}

// The rows summed, averaged or maxed into bags + 1 slots (the last one
// collecting padding), of weight's dtype.
Tensor reduce_into_bags(Tensor rows,
                        const Tensor& bag,
                        int64_t bags,
                        const Tensor& weight,
                        const EmbeddingBagOptions& o) {
  const int64_t dim = weight.size(1);
  if (o.mode == EmbeddingBagMode::Max) {
    const Tensor out = zeros({bags + 1, dim}, weight.options());
    const Tensor index = bag.unsqueeze(1).expand({bag.size(0), dim});
    return scatter_reduce(out, 0, index, rows, "amax", false);
  }
  // 16-bit weights accumulate in float and round once, as PyTorch's kernel.
  const ScalarType accumulate = weight.element_size() == 2 ? kFloat32 : weight.dtype();
  rows = rows.to(accumulate);
  if (o.per_sample_weights.defined()) {
    rows = rows * o.per_sample_weights.reshape({-1}).to(accumulate).unsqueeze(1);
  }
  Tensor out = index_add(zeros({bags + 1, dim}, weight.options().dtype(accumulate)), 0, bag, rows);
  if (o.mode == EmbeddingBagMode::Mean) {
    const Tensor one = ones_like(bag).to(accumulate);
    const Tensor counts = index_add(zeros({bags + 1}, out.options()), 0, bag, one);
    out = out / counts.clamp(1).unsqueeze(1);
  }
  return out.to(weight.dtype());
}

}  // namespace

Tensor max_unpool1d(const Tensor& x,
                    const Tensor& indices,
                    IntArrayRef kernel_size,
                    const UnpoolOptions& options) {
  return max_unpool(x, indices, kernel_size, options, 1, Op::max_unpool1d, "max_unpool1d");
}

Tensor max_unpool2d(const Tensor& x,
                    const Tensor& indices,
                    IntArrayRef kernel_size,
                    const UnpoolOptions& options) {
  return max_unpool(x, indices, kernel_size, options, 2, Op::max_unpool2d, "max_unpool2d");
}

Tensor max_unpool3d(const Tensor& x,
                    const Tensor& indices,
                    IntArrayRef kernel_size,
                    const UnpoolOptions& options) {
  return max_unpool(x, indices, kernel_size, options, 3, Op::max_unpool3d, "max_unpool3d");
}

Tensor embedding_bag(const Tensor& input,
                     const Tensor& weight,
                     const EmbeddingBagOptions& options) {
  check_dtype_rule(Op::embedding_bag, input);
  check_bag_arguments(input, weight, options);
  const Tensor ids = input.reshape({-1}).to(kInt64);
  if (options.max_norm) renormalise_rows(ids, weight, *options.max_norm, options.norm_type);
  Tensor rows = ::stride::embedding(weight, ids);
  if (options.scale_grad_by_freq) rows = rows_scaled_by_frequency(rows, ids, weight.size(0));
  const auto [bag, bags] = bag_of_each_id(input, ids, options, weight.size(0));
  return reduce_into_bags(rows, bag, bags, weight, options).narrow(0, 0, bags);
}

}  // namespace stride::nn::functional
