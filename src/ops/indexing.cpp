// Indexing and joining: index_select, gather, embedding, cat, stack (the
// scatters are in scatter.cpp).
//
// Note [Restrided indexing]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// As in PyTorch, the indexed operand is viewed with stride 0 along the
// indexed dim and the shape of the result, so TensorIter can walk result,
// source and index together in any layout; the kernel only adds
// `index * stride_of_dim` to the source (or destination) pointer.
//
// Note [Indexed runs]
// ~~~~~~~~~~~~~~~~~~~
// When TensorIter's inner run has one index (stride 0) and contiguous data
// on both sides -- a row of an embedding or of index_select along dim 0 --
// the run is one id check and one copy (gather) or one vector add
// (scatter_add) instead of a load and check per element, which dominated
// embedding's forward and backward. Elements are visited in the same order,
// so scatter_add's sums keep their bits.
#include <algorithm>

#include "backends/kernels.h"
#include "core/overlap.h"
#include "core/tensor_impl_utils.h"
#include "core/tensor_iter.h"
#include "ops/apply.h"
#include "ops/elementwise_common.h"
#include "ops/indexing.h"

namespace stride {

using detail::Op;

namespace detail {

void check_index(const Tensor& index, const char* op) {
  STRIDE_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32, DTypeError, "[", op,
               "] index must be int64 or int32; got ", to_string(index.dtype()), ".");
}

Tensor restride(const Tensor& t, IntArrayRef shape, int64_t dim) {
  DimVector st = t.strides().dims();
  if (t.dim() > 0) st[size_t(dim)] = 0;
  return make_view(t, shape, st, t.storage_offset());
}

}  // namespace detail

namespace {

using detail::check_index;
using detail::restride;

// out[...] = src[... with dim replaced by index[...]], all three walked by one
// TensorIter (Note [Restrided indexing]).
void gather_kernel(Tensor& out,
                   const Tensor& src_restrided,
                   const Tensor& index_restrided,
                   int64_t dim,
                   int64_t src_dim_size,
                   int64_t src_dim_stride,
                   const char* op) {
  TensorIter iter = TensorIterConfig(op)
                        .add_output(out)
                        .add_input(src_restrided)
                        .add_input(index_restrided)
                        .check_all_same_dtype(false)
                        .build();
  const int64_t dim_bytes = src_dim_stride * int64_t(out.element_size());
  // Indices are read by the kernel: on meta, which has none, nothing is checked.
  kernels::gather(out.device(), iter, index_restrided.dtype(), dim, src_dim_size, dim_bytes, op);
}

}  // namespace

static Tensor index_select_kernel(const Tensor& x, int64_t dim, const Tensor& index) {
  check_index(index, "index_select");
  STRIDE_CHECK(index.dim() <= 1, ShapeError, "[index_select] index must be 0-d or 1-d; got shape ",
               shape_str(index.sizes()), ".");
  if (x.dim() == 0) return index_select_kernel(x.view({1}), 0, index.reshape({-1})).view({});
  dim = wrap_dim(dim, x.dim(), "index_select");
  DimVector shape = x.sizes().dims();
  shape[size_t(dim)] = index.numel();
  Tensor out = empty(shape, x.options());
  DimVector ist(shape.size(), 0);
  ist[size_t(dim)] = index.dim() == 0 ? 0 : index.stride(0);
  Tensor idx = detail::make_view(index, shape, ist, index.storage_offset());
  gather_kernel(out, restride(x, shape, dim), idx, dim, x.size(dim), x.stride(dim), "index_select");
  return out;
}

static Tensor gather_values(const Tensor& x, int64_t dim, const Tensor& index) {
  // As PyTorch, an empty index gathers nothing whatever its dtype and rank.
  if (index.numel() == 0) return empty(index.sizes(), x.options());
  check_index(index, "gather");
  if (x.dim() == 0 && index.dim() == 1) return gather_values(x.reshape({1}), dim, index);
  STRIDE_CHECK(index.dim() == x.dim(), ShapeError,
               "[gather] index must have as many dims as the "
               "input; got index ",
               shape_str(index.sizes()), " for input ", shape_str(x.sizes()), ".");
  dim = wrap_dim(dim, x.dim(), "gather");
  for (int64_t d = 0; d < x.dim(); ++d) {
    STRIDE_CHECK(d == dim || index.size(d) <= x.size(d), ShapeError, "[gather] index ",
                 shape_str(index.sizes()), " is larger than input ", shape_str(x.sizes()),
                 " in dim ", d, ".");
  }
  Tensor out = empty(index.sizes(), x.options());
  const int64_t size = x.dim() == 0 ? 1 : x.size(dim);
  const int64_t stride = x.dim() == 0 ? 0 : x.stride(dim);
  gather_kernel(out, restride(x, index.sizes(), dim), index, dim, size, stride, "gather");
  return out;
}

// index_select's gradient: rows of g added back at their indices (a
// complex g's parts, as real pairs: scatter_add has no complex kernel).
static Tensor index_select_backward(const Tensor& g,
                                    IntArrayRef shape,
                                    int64_t dim,
                                    const Tensor& index) {
  if (g.is_complex()) {
    DimVector parts_shape;
    for (const int64_t s : shape) parts_shape.push_back(s);
    parts_shape.push_back(2);
    return view_as_complex(index_select_backward(view_as_real(g), parts_shape, dim, index));
  }
  DimVector ishape(size_t(g.dim()), 1);
  ishape[size_t(dim)] = index.numel();
  return zeros(shape, g.options()).scatter_add(dim, index.reshape(ishape).expand(g.sizes()), g);
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return detail::apply(
      Op::index_select, {&x, &index}, [&] { return index_select_kernel(x, dim, index); },
      [&](const Tensor&) {
        return [shape = x.sizes().dims(),
                d = x.dim() == 0 ? 0 : wrap_dim(dim, x.dim(), "index_select"),
                index](const autograd::Grads& gs) {
          if (shape.empty()) return autograd::Grads{gs[0].reshape({}), Tensor()};
          return autograd::Grads{index_select_backward(gs[0], shape, d, index), Tensor()};
        };
      });
}

Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  return detail::apply(
      Op::gather, {&x, &index}, [&] { return gather_values(x, dim, index); },
      [&](const Tensor&) {
        return [shape = x.sizes().dims(), dim, index](const autograd::Grads& gs) {
          return autograd::Grads{zeros(shape, gs[0].options()).scatter_add(dim, index, gs[0]),
                                 Tensor()};
        };
      });
}

Tensor embedding(const Tensor& weight, const Tensor& ids) {
  STRIDE_CHECK(weight.dim() == 2, ShapeError, "[embedding] weight must be (V, D); got ",
               shape_str(weight.sizes()), ".");
  check_index(ids, "embedding");
  DimVector shape = ids.sizes().dims();
  shape.push_back(weight.size(1));
  const Tensor flat = ids.reshape({-1});
  auto forward = [&] {
    DimVector oshape{flat.numel(), weight.size(1)};
    Tensor out = empty(oshape, weight.options());
    DimVector ist{flat.stride(0), 0};
    Tensor idx = detail::make_view(flat, oshape, ist, flat.storage_offset());
    gather_kernel(out, restride(weight, oshape, 0), idx, 0, weight.size(0), weight.stride(0),
                  "embedding");
    return out.view(shape);
  };
  auto backward = [&](const Tensor&) {
    return [vocab = weight.size(0), flat](const autograd::Grads& gs) {
      const int64_t d = gs[0].size(-1);
      return autograd::Grads{
          index_select_backward(gs[0].reshape({flat.numel(), d}), {vocab, d}, 0, flat), Tensor()};
    };
  };
  return detail::apply(Op::embedding, {&weight, &ids}, forward, backward);
}

namespace {

// PyTorch's legacy rule: a tensor of shape (0,) joins tensors of any shape,
// adding nothing but its dtype to the result's.
bool is_legacy_empty(const Tensor& t) {
  return t.dim() == 1 && t.size(0) == 0;
}

bool has_several_dims(const Tensor& t) {
  return t.dim() > 1;
}

// Among 1-d tensors a (0,) one is an ordinary operand; the rule is needed
// only beside a tensor of more dims (beside a 0-d one, cat's own check
// refuses).
bool has_legacy_empty(const std::vector<Tensor>& tensors) {
  return std::any_of(tensors.begin(), tensors.end(), is_legacy_empty) &&
         std::any_of(tensors.begin(), tensors.end(), has_several_dims);
}

// Each (0,) tensor joins as an empty slab of the others' shape, a view of it,
// so that it stays in the graph (with an empty gradient) as it does in
// PyTorch, and its dtype takes part in the promotion.
Tensor cat_with_legacy_empties(const std::vector<Tensor>& tensors, int64_t dim) {
  const Tensor& shaped = *std::find_if(tensors.begin(), tensors.end(), has_several_dims);
  dim = wrap_dim(dim, shaped.dim(), "cat");
  DimVector slab = shaped.sizes().dims();
  slab[size_t(dim)] = 0;
  std::vector<Tensor> parts;
  for (const Tensor& t : tensors) parts.push_back(is_legacy_empty(t) ? t.reshape(slab) : t);
  return cat(parts, dim);
}

}  // namespace

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  STRIDE_CHECK(!tensors.empty(), ValueError, "[cat] expects at least one tensor.");
  if (has_legacy_empty(tensors)) return cat_with_legacy_empties(tensors, dim);
  const Tensor& first = tensors[0];
  STRIDE_CHECK(first.dim() > 0, ShapeError,
               "[cat] zero-dimensional tensors cannot be "
               "concatenated. Hint: use stack.");
  dim = wrap_dim(dim, first.dim(), "cat");
  ScalarType dtype = first.dtype();
  int64_t total = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    STRIDE_CHECK(t.dim() == first.dim(), ShapeError, "[cat] tensor ", i, " has shape ",
                 shape_str(t.sizes()), " but tensor 0 has ", shape_str(first.sizes()),
                 "; all need the same number of dims.");
    for (int64_t d = 0; d < first.dim(); ++d) {
      STRIDE_CHECK(d == dim || t.size(d) == first.size(d), ShapeError, "[cat] tensor ", i,
                   " has shape ", shape_str(t.sizes()), " but tensor 0 has ",
                   shape_str(first.sizes()), "; sizes must match except in dim ", dim, ".");
    }
    dtype = promote_types(dtype, t.dtype());
    total += t.size(dim);
  }
  DimVector shape = first.sizes().dims();
  shape[size_t(dim)] = total;
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : tensors) inputs.push_back(&t);
  auto forward = [&] {
    Tensor out = empty(shape, first.options().dtype(dtype));
    int64_t offset = 0;
    for (const Tensor& t : tensors) {
      out.narrow(dim, offset, t.size(dim)).copy_(t);
      offset += t.size(dim);
    }
    return out;
  };
  // Each input gets its slice of the gradient.
  auto backward = [&](const Tensor&) {
    std::vector<int64_t> sizes;
    for (const Tensor& t : tensors) sizes.push_back(t.size(dim));
    return [sizes, dim](const autograd::Grads& gs) {
      autograd::Grads grads;
      int64_t offset = 0;
      for (int64_t len : sizes) {
        grads.push_back(gs[0].narrow(dim, offset, len));
        offset += len;
      }
      return grads;
    };
  };
  return detail::apply(Op::cat, inputs, forward, backward);
}

Tensor stack(const std::vector<Tensor>& tensors, int64_t dim) {
  STRIDE_CHECK(!tensors.empty(), ValueError, "[stack] expects at least one tensor.");
  dim = wrap_dim(dim, tensors[0].dim() + 1, "stack");
  std::vector<Tensor> parts;
  parts.reserve(tensors.size());
  for (size_t i = 0; i < tensors.size(); ++i) {
    STRIDE_CHECK(tensors[i].sizes() == tensors[0].sizes(), ShapeError, "[stack] tensor ", i,
                 " has shape ", shape_str(tensors[i].sizes()), " but tensor 0 has ",
                 shape_str(tensors[0].sizes()), "; stack needs equal shapes.");
    parts.push_back(tensors[i].unsqueeze(dim));
  }
  return cat(parts, dim);
}

namespace {

// The positions 0..n-1 of a dim, reordered: position i of the result reads
// source position at(i).
template <class At>
Tensor positions(int64_t n, const Tensor& like, At at) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[size_t(i)] = at(i);
  return tensor(order).to(like.device());
}

}  // namespace

Tensor flip(const Tensor& x, IntArrayRef dims) {
  detail::check_dtype_rule(Op::flip, x);
  Tensor r = x;
  for (const int64_t dim : dims) {
    const int64_t d = wrap_dim(dim, x.dim(), "flip");
    const int64_t n = x.size(d);
    r = r.index_select(d, positions(n, x, [n](int64_t i) { return n - 1 - i; }));
  }
  return dims.empty() ? x.clone() : r;
}

Tensor roll(const Tensor& x, IntArrayRef shifts, IntArrayRef dims) {
  detail::check_dtype_rule(Op::roll, x);
  if (dims.empty()) {  // the flattened tensor, rolled as one line
    STRIDE_CHECK(shifts.size() == 1, ValueError, "[roll] without dims takes one shift; got ",
                 shifts.size(), ".");
    return roll(x.reshape({-1}), shifts, {0}).view(x.sizes());
  }
  STRIDE_CHECK(shifts.size() == dims.size(), ValueError, "[roll] got ", shifts.size(),
               " shifts for ", dims.size(), " dims; pass one shift per dim.");
  Tensor r = x;
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = wrap_dim(dims[k], x.dim(), "roll");
    const int64_t n = x.size(d);
    if (n == 0) continue;
    const int64_t shift = ((shifts[k] % n) + n) % n;
    r = r.index_select(d, positions(n, x, [n, shift](int64_t i) { return (i - shift + n) % n; }));
  }
  return r;
}

Tensor Tensor::flip(IntArrayRef dims) const {
  return stride::flip(*this, dims);
}
Tensor Tensor::roll(IntArrayRef shifts, IntArrayRef dims) const {
  return stride::roll(*this, shifts, dims);
}
Tensor Tensor::index_select(int64_t dim, const Tensor& index) const {
  return stride::index_select(*this, dim, index);
}
Tensor Tensor::gather(int64_t dim, const Tensor& index) const {
  return stride::gather(*this, dim, index);
}

}  // namespace stride
