// The scatters: scatter, scatter_add and scatter_reduce run one kernel
// (kernels::scatter) with the reduction as its argument; the index_* ops run
// it too, their 1-d index viewed as a scatter index (stride 0 outside dim,
// no copy). take, put, take_along_dim, masked_select and masked_scatter are
// composites of gather, the scatters and advanced indexing, as PyTorch's;
// select_, slice_ and diagonal_scatter write src into a view of a copy.
#include <functional>
#include <limits>
#include <string>
#include <string_view>

#include "backends/kernels.h"
#include "core/overlap.h"
#include "core/tensor_impl_utils.h"
#include "core/tensor_iter.h"
#include "ops/apply.h"
#include "ops/indexing.h"
#include "stride/ops.h"

namespace stride {

using autograd::Grads;
using detail::check_index;
using detail::Op;
using kernels::ScatterReduce;

namespace {

void check_scatter_shapes(
    const Tensor& self, int64_t d0, const Tensor& index, const Tensor& src, const char* op) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    STRIDE_CHECK(index.size(d) <= src.size(d) && (d == d0 || index.size(d) <= self.size(d)),
                 ShapeError, "[", op, "] index ", shape_str(index.sizes()),
                 " must not be larger than src ", shape_str(src.sizes()), " nor, outside dim ", d0,
                 ", than self ", shape_str(self.sizes()), ".");
  }
}

// self[... index[i] along dim ...] = reduce(it, src[i]), in place, not
// recorded. An empty index writes nothing (whatever its rank, as PyTorch).
void scatter_into(Tensor& self,
                  int64_t dim,
                  const Tensor& index,
                  const Tensor& src,
                  ScatterReduce reduce,
                  const char* op) {
  if (index.numel() == 0) return;
  check_index(index, op);
  if (self.dim() == 0 && index.dim() == 1) {  // a 0-d self takes a 1-d index, as PyTorch's
    wrap_dim(dim, 1, op);
    Tensor line = self.view({1});
    scatter_into(line, 0, index, src.reshape({-1}), reduce, op);
    return;
  }
  const int64_t nd = self.dim();
  STRIDE_CHECK(index.dim() == nd && src.dim() == nd, ShapeError, "[", op,
               "] self, index and src need the same number of dims; got ", shape_str(self.sizes()),
               ", ", shape_str(index.sizes()), " and ", shape_str(src.sizes()), ".");
  STRIDE_CHECK(src.dtype() == self.dtype(), DTypeError, "[", op, "] src must have self's dtype ",
               to_string(self.dtype()), "; got ", to_string(src.dtype()), ".");
  const int64_t d0 = wrap_dim(dim, nd, op);
  check_scatter_shapes(self, d0, index, src, op);
  STRIDE_CHECK(!detail::partially_overlap(self, src) && !src.is_same(self), OverlapError, "[", op,
               "] src overlaps self. Hint: clone() src first.");
  // The destination is restrided (stride 0 along dim): several index entries
  // may hit one element, so the kernel runs serially.
  Tensor dst = detail::restride(self, index.sizes(), d0);
  Tensor src_view = detail::make_view(src, index.sizes(), src.strides(), src.storage_offset());
  TensorIter iter = TensorIterConfig(op)
                        .add_output(dst)
                        .add_input(src_view)
                        .add_input(index)
                        .check_all_same_dtype(false)
                        .check_mem_overlap(false)
                        .build();
  const int64_t size_d = nd == 0 ? 1 : self.size(d0);
  const int64_t dim_bytes = (nd == 0 ? 0 : self.stride(d0)) * int64_t(self.element_size());
  kernels::scatter(self.device(), iter, self.dtype(), index.dtype(), reduce, d0, size_d, dim_bytes,
                   op);
}

// A value expanded to index's shape, as scatter's src.
Tensor value_like_index(const Scalar& value, const Tensor& self, const Tensor& index) {
  return full({}, value, self.options()).expand(index.sizes());
}

struct Reduction {
  ScatterReduce kind;
  bool mean;
};

Reduction parse_reduction(std::string_view reduce, const char* op) {
  if (reduce == "sum") return {ScatterReduce::Sum, false};
  if (reduce == "prod") return {ScatterReduce::Prod, false};
  if (reduce == "mean") return {ScatterReduce::Sum, true};
  if (reduce == "amax") return {ScatterReduce::Max, false};
  if (reduce == "amin") return {ScatterReduce::Min, false};
  throw ValueError(detail::str_cat(
      "[", op, "] reduce must be one of sum, prod, mean, amax, amin; got '", reduce, "'."));
}

// The value a reduction starts from: x's own value is left out of the
// elements index names by writing it there first.
Scalar identity_of(ScatterReduce kind, ScalarType dtype) {
  const bool floating = is_floating_point(dtype);
  switch (kind) {
    case ScatterReduce::Prod:
      return Scalar(int64_t(1));
    case ScatterReduce::Max:
      if (dtype == kBool) return Scalar(false);
      return floating
                 ? Scalar(-std::numeric_limits<double>::infinity())
                 : Scalar(dtype == kInt64 ? std::numeric_limits<int64_t>::min()
                                          : (dtype == kInt32 ? std::numeric_limits<int32_t>::min()
                                                             : int64_t(0)));
    case ScatterReduce::Min:
      if (dtype == kBool) return Scalar(true);
      return floating
                 ? Scalar(std::numeric_limits<double>::infinity())
                 : Scalar(dtype == kInt64 ? std::numeric_limits<int64_t>::max()
                                          : (dtype == kInt32 ? std::numeric_limits<int32_t>::max()
                                                             : int64_t(255)));
    default:
      return Scalar(int64_t(0));
  }
}

Tensor scatter_reduce_values(const Tensor& x,
                             int64_t dim,
                             const Tensor& index,
                             const Tensor& src,
                             Reduction r,
                             bool include_self) {
  Tensor out = x.clone();
  if (!include_self) {
    scatter_into(out, dim, index, value_like_index(identity_of(r.kind, x.dtype()), x, index),
                 ScatterReduce::None, "scatter_reduce");
  }
  scatter_into(out, dim, index, src, r.kind, "scatter_reduce");
  if (!r.mean) return out;
  // mean: the sum divided by the count of values reduced into each element.
  Tensor count = include_self ? ones_like(out) : zeros_like(out);
  scatter_into(count, dim, index, ones_like(src), ScatterReduce::Sum, "scatter_reduce");
  count = masked_fill(count, count.eq(Scalar(0)), Scalar(1));
  return x.is_floating_point() ? out / count : div(out, count, "floor");
}

// PyTorch's scatter_reduce backward, written with ops. prod's is exact
// where src holds a single zero per element (several give zero there).
Grads scatter_reduce_grads(const Tensor& g,
                           const Tensor& x,
                           int64_t dim,
                           const Tensor& index,
                           const Tensor& src,
                           const Tensor& out,
                           std::string_view reduce,
                           bool include_self) {
  Tensor gx, gsrc;
  if (reduce == "sum") {
    gx = g;
    gsrc = g.gather(dim, index);
  } else if (reduce == "mean") {
    Tensor n = include_self ? ones_like(g) : zeros_like(g);
    n = n.scatter_add(dim, index, ones_like(src));
    n = masked_fill(n, n.eq(Scalar(0)), Scalar(1));
    gx = g / n;
    gsrc = gx.gather(dim, index);
  } else if (reduce == "prod") {
    const Tensor masked_x = masked_fill(x, x.eq(Scalar(0)), Scalar(1));
    gx = g * scatter_reduce(masked_x, dim, index, src, reduce, include_self) / masked_x;
    const Tensor src_zero = src.eq(Scalar(0));
    const Tensor zeros_per_element =
        zeros_like(x).scatter_add(dim, index, src_zero.to(x.dtype())).gather(dim, index);
    const Tensor single_zero = src_zero * zeros_per_element.eq(Scalar(1));
    const Tensor without_zero = scatter_reduce(
        x, dim, index, masked_fill(src, single_zero, Scalar(1)), reduce, include_self);
    gsrc = where(single_zero, (g * without_zero).gather(dim, index),
                 (g * out).gather(dim, index) / masked_fill(src, src_zero, Scalar(1)));
  } else {  // amax, amin: split evenly among the elements equal to the result
    const Tensor x_is_result = x.eq(out).to(g.dtype());
    const Tensor src_is_result = src.eq(out.gather(dim, index)).to(g.dtype());
    const Tensor share = g / x_is_result.scatter_add(dim, index, src_is_result);
    gx = x_is_result * share;
    gsrc = src_is_result * share.gather(dim, index);
  }
  if (!include_self) gx = scatter(gx, dim, index, Scalar(0));
  return Grads{gx, Tensor(), gsrc};
}

}  // namespace

Tensor scatter_add(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::apply(
      Op::scatter_add, {&x, &index, &src},
      [&] {
        Tensor out = x.clone();
        scatter_into(out, dim, index, src, ScatterReduce::Sum, "scatter_add");
        return out;
      },
      [&](const Tensor&) {
        return [dim, index](const Grads& gs) {
          return Grads{gs[0], Tensor(), gs[0].gather(dim, index)};
        };
      });
}

Tensor& Tensor::scatter_add_(int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::apply_inplace(
      Op::scatter_add, *this, {&index, &src},
      [&] { return stride::scatter_add(clone(), dim, index, src); },
      [&] { scatter_into(*this, dim, index, src, ScatterReduce::Sum, "scatter_add"); });
}

Tensor Tensor::scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const {
  return stride::scatter_add(*this, dim, index, src);
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& src) {
  return detail::apply(
      Op::scatter, {&x, &index, &src},
      [&] {
        Tensor out = x.clone();
        scatter_into(out, dim, index, src, ScatterReduce::None, "scatter");
        return out;
      },
      [&](const Tensor&) {
        return [dim, index](const Grads& gs) {
          return Grads{scatter(gs[0], dim, index, Scalar(0)), Tensor(), gs[0].gather(dim, index)};
        };
      });
}

Tensor scatter(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  return detail::apply(
      Op::scatter, {&x, &index},
      [&] {
        Tensor out = x.clone();
        scatter_into(out, dim, index, value_like_index(value, x, index), ScatterReduce::None,
                     "scatter");
        return out;
      },
      [&](const Tensor&) {
        return [dim, index](const Grads& gs) {
          return Grads{scatter(gs[0], dim, index, Scalar(0)), Tensor()};
        };
      });
}

Tensor scatter_reduce(const Tensor& x,
                      int64_t dim,
                      const Tensor& index,
                      const Tensor& src,
                      std::string_view reduce,
                      bool include_self) {
  const Reduction r = parse_reduction(reduce, "scatter_reduce");
  return detail::apply(
      Op::scatter_reduce, {&x, &index, &src},
      [&] { return scatter_reduce_values(x, dim, index, src, r, include_self); },
      [&](const Tensor& out) {
        return [sx = autograd::SavedTensor::input(x), ssrc = autograd::SavedTensor::input(src),
                sy = autograd::SavedTensor::output(out), dim, index, reduce = std::string(reduce),
                include_self](const Grads& gs) {
          return scatter_reduce_grads(gs[0], sx.get(), dim, index, ssrc.get(), sy.get(), reduce,
                                      include_self);
        };
      });
}

// ---- index_add, index_copy, index_fill, index_reduce ----

namespace {

// The 1-d (or 0-d) index of an index_* op viewed as a scatter index of
// `shape`: index[i] at every position whose coordinate along dim is i.
Tensor index_as_scatter(const Tensor& index, IntArrayRef shape, int64_t dim, const char* op) {
  check_index(index, op);
  STRIDE_CHECK(index.dim() <= 1, ShapeError, "[", op, "] index must be 0-d or 1-d; got shape ",
               shape_str(index.sizes()), ".");
  DimVector strides(shape.size(), 0);
  if (!shape.empty() && index.dim() == 1) strides[size_t(dim)] = index.stride(0);
  return detail::make_view(index, shape, strides, index.storage_offset());
}

// Checks source against x for an index_* op: slice i of source along dim
// goes to position index[i] of x, every other dim equal.
void check_index_source(
    const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const char* op) {
  STRIDE_CHECK(source.dim() == x.dim(), ShapeError, "[", op, "] source ", shape_str(source.sizes()),
               " needs as many dims as self ", shape_str(x.sizes()), ".");
  for (int64_t d = 0; d < x.dim(); ++d) {
    const int64_t want = d == dim ? index.numel() : x.size(d);
    STRIDE_CHECK(source.size(d) == want, ShapeError, "[", op, "] source ",
                 shape_str(source.sizes()), " must have size ", want, " in dim ", d, " (self ",
                 shape_str(x.sizes()), ", ", index.numel(), " indices).");
  }
}

// Runs an index_* op on 1-d views of 0-d operands, whose dim is 0 too.
template <class F>
Tensor on_one_dim(const Tensor& x, const Tensor& source, int64_t dim, const char* op, F f) {
  if (x.dim() > 0) return f(x, source, wrap_dim(dim, x.dim(), op));
  wrap_dim(dim, 0, op);
  return f(x.reshape({1}), source.reshape({source.numel()}), 0).reshape({});
}

}  // namespace

Tensor index_add(
    const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source, const Scalar& alpha) {
  detail::check_dtype_rule(Op::index_add, x);
  return on_one_dim(x, source, dim, "index_add", [&](const Tensor& xs, const Tensor& s, int64_t d) {
    check_index_source(xs, d, index, s, "index_add");
    const Tensor scaled = alpha.to<double>() == 1.0 ? s : s * alpha;
    return xs.scatter_add(d, index_as_scatter(index, s.sizes(), d, "index_add"), scaled);
  });
}

Tensor index_copy(const Tensor& x, int64_t dim, const Tensor& index, const Tensor& source) {
  detail::check_dtype_rule(Op::index_copy, x);
  return on_one_dim(x, source, dim, "index_copy",
                    [&](const Tensor& xs, const Tensor& s, int64_t d) {
                      check_index_source(xs, d, index, s, "index_copy");
                      return scatter(xs, d, index_as_scatter(index, s.sizes(), d, "index_copy"), s);
                    });
}

Tensor index_fill(const Tensor& x, int64_t dim, const Tensor& index, const Scalar& value) {
  detail::check_dtype_rule(Op::index_fill, x);
  return on_one_dim(x, x, dim, "index_fill", [&](const Tensor& xs, const Tensor&, int64_t d) {
    DimVector shape = xs.sizes().dims();
    shape[size_t(d)] = index.numel();
    return scatter(xs, d, index_as_scatter(index, shape, d, "index_fill"), value);
  });
}

Tensor index_reduce(const Tensor& x,
                    int64_t dim,
                    const Tensor& index,
                    const Tensor& source,
                    std::string_view reduce,
                    bool include_self) {
  detail::check_dtype_rule(Op::index_reduce, x);
  STRIDE_CHECK(reduce != "sum", ValueError,
               "[index_reduce] reduce must be one of prod, mean, amax, amin; got 'sum'. Hint: use "
               "index_add.");
  return on_one_dim(
      x, source, dim, "index_reduce", [&](const Tensor& xs, const Tensor& s, int64_t d) {
        check_index_source(xs, d, index, s, "index_reduce");
        return scatter_reduce(xs, d, index_as_scatter(index, s.sizes(), d, "index_reduce"), s,
                              reduce, include_self);
      });
}

// ---- take, put, take_along_dim, masked_select, masked_scatter ----

namespace {

// Flat indices into x (negative ones from the end), bounds checked.
Tensor flat_positions(const Tensor& x, const Tensor& index, const char* op) {
  check_index(index, op);
  const int64_t n = x.numel();
  Tensor flat = index.reshape({-1}).to(kInt64);
  if (flat.numel() > 0 && !flat.device().is_meta()) {
    const int64_t lo = flat.min().item<int64_t>(), hi = flat.max().item<int64_t>();
    STRIDE_CHECK(lo >= -n && hi < n, IndexError, "[", op, "] index ", lo < -n ? lo : hi,
                 " is out of range for a tensor of ", n, " elements.");
  }
  return where(flat.lt(Scalar(0)), flat + Scalar(n), flat);
}

}  // namespace

Tensor take(const Tensor& x, const Tensor& index) {
  detail::check_dtype_rule(Op::take, x);
  const Tensor positions = flat_positions(x, index, "take");
  return x.reshape({-1}).gather(0, positions).view(index.sizes());
}

Tensor put(const Tensor& x, const Tensor& index, const Tensor& source, bool accumulate) {
  detail::check_dtype_rule(Op::put, x);
  STRIDE_CHECK(source.numel() == index.numel(), ShapeError, "[put] source has ", source.numel(),
               " elements but index has ", index.numel(), "; they must match.");
  const Tensor positions = flat_positions(x, index, "put");
  const Tensor flat = x.reshape({-1});
  const Tensor values = source.reshape({-1});
  return (accumulate ? flat.scatter_add(0, positions, values) : scatter(flat, 0, positions, values))
      .view(x.sizes());
}

Tensor take_along_dim(const Tensor& x, const Tensor& indices, std::optional<int64_t> dim) {
  detail::check_dtype_rule(Op::take_along_dim, x);
  if (!dim) return x.reshape({-1}).gather(0, indices.reshape({-1}));
  STRIDE_CHECK(x.dim() == indices.dim(), ShapeError, "[take_along_dim] input ",
               shape_str(x.sizes()), " and indices ", shape_str(indices.sizes()),
               " need the same number of dims.");
  const int64_t d = wrap_dim(*dim, x.dim(), "take_along_dim");
  // Every dim but d broadcasts.
  DimVector xs = x.sizes().dims(), is = indices.sizes().dims();
  xs[size_t(d)] = 1;
  is[size_t(d)] = 1;
  DimVector shape = broadcast_shapes(xs, is, "take_along_dim");
  DimVector x_shape = shape, i_shape = shape;
  x_shape[size_t(d)] = x.size(d);
  i_shape[size_t(d)] = indices.size(d);
  // As PyTorch's along a dim (not flattened): negative indices count from the end.
  const Tensor wrapped = where(indices.lt(Scalar(0)), indices + Scalar(x.size(d)), indices);
  return x.expand(x_shape).gather(d, wrapped.expand(i_shape));
}

Tensor masked_select(const Tensor& x, const Tensor& mask) {
  detail::check_dtype_rule(Op::masked_select, x);
  STRIDE_CHECK(mask.dtype() == kBool, DTypeError, "[masked_select] mask must be bool; got ",
               to_string(mask.dtype()), ".");
  const DimVector shape = broadcast_shapes(x.sizes(), mask.sizes(), "masked_select");
  if (shape.empty()) return index(x.reshape({1}), {mask.reshape({1})});  // a mask needs a dim
  return index(x.expand(shape), {mask.expand(shape)});
}

Tensor masked_scatter(const Tensor& x, const Tensor& mask, const Tensor& source) {
  detail::check_dtype_rule(Op::masked_scatter, x);
  STRIDE_CHECK(mask.dtype() == kBool, DTypeError, "[masked_scatter] mask must be bool; got ",
               to_string(mask.dtype()), ".");
  STRIDE_CHECK(source.dtype() == x.dtype(), DTypeError,
               "[masked_scatter] source must have self's dtype ", to_string(x.dtype()), "; got ",
               to_string(source.dtype()), ".");
  const DimVector shape = broadcast_shapes(x.sizes(), mask.sizes(), "masked_scatter");
  const Tensor m = mask.expand(shape);
  const int64_t count = m.sum().item<int64_t>();
  STRIDE_CHECK(count <= source.numel(), ShapeError, "[masked_scatter] mask has ", count,
               " true elements but source only ", source.numel(), ".");
  return index_put(x.expand(shape).contiguous(), {m}, source.reshape({-1}).narrow(0, 0, count));
}

// ---- select_scatter, slice_scatter, diagonal_scatter ----

namespace {

using ViewFn = std::function<Tensor(const Tensor&)>;

// x with src written where `view` looks. The gradient of x is g with that
// view zeroed (the same op), of src the view of g; both are ops, so double
// backward works.
Tensor view_scatter(Op op, const Tensor& x, const Tensor& src, const ViewFn& view) {
  const char* name = detail::op_name(op);
  const DimVector view_shape = view(x).sizes().dims();
  STRIDE_CHECK(src.sizes() == IntArrayRef(view_shape), ShapeError, "[", name, "] src ",
               shape_str(src.sizes()), " must have the shape of the view it fills, ",
               shape_str(view_shape), ".");
  const Tensor s = src.dtype() == x.dtype() ? src : src.to(x.dtype());
  return detail::apply(
      op, {&x, &s},
      [&] {
        Tensor out = x.clone();
        view(out).copy_(s);
        return out;
      },
      [&](const Tensor&) {
        return [op, view, view_shape](const Grads& gs) {
          const Tensor& g = gs[0];
          // view(g) of g's contiguous copy: as_strided addresses memory.
          return Grads{view_scatter(op, g, zeros(view_shape, g.options()), view),
                       view(g.contiguous())};
        };
      });
}

}  // namespace

Tensor select_scatter(const Tensor& x, const Tensor& src, int64_t dim, int64_t index) {
  return view_scatter(Op::select_scatter, x, src,
                      [dim, index](const Tensor& t) { return t.select(dim, index); });
}

Tensor slice_scatter(const Tensor& x,
                     const Tensor& src,
                     int64_t dim,
                     std::optional<int64_t> start,
                     std::optional<int64_t> end,
                     int64_t step) {
  return view_scatter(Op::slice_scatter, x, src,
                      [=](const Tensor& t) { return t.slice(dim, start, end, step); });
}

Tensor diagonal_scatter(
    const Tensor& x, const Tensor& src, int64_t offset, int64_t dim1, int64_t dim2) {
  return view_scatter(Op::diagonal_scatter, x, src,
                      [=](const Tensor& t) { return t.diagonal(offset, dim1, dim2); });
}

Tensor as_strided_scatter(const Tensor& x,
                          const Tensor& src,
                          IntArrayRef size,
                          IntArrayRef stride,
                          std::optional<int64_t> storage_offset) {
  // Offsets count from the tensor's first element: the copy starts its
  // memory there. x's contiguous form, so that view_scatter's shape check
  // reads as much memory as the copy has (an expanded x has less).
  return view_scatter(
      Op::as_strided_scatter, x.contiguous(), src,
      [size = size.dims(), stride = stride.dims(), offset = storage_offset.value_or(0)](
          const Tensor& t) { return t.as_strided(size, stride, t.storage_offset() + offset); });
}

}  // namespace stride
