// View ops: each returns a tensor sharing the input's storage (and so its
// version counter) with new sizes, strides and offset. None of them copies.
// Each records its backward, which maps the view's gradient back to the
// shape of its input.
#include <optional>

#include "core/check.h"
#include "core/overlap.h"
#include "core/tensor_impl_utils.h"
#include "ops/apply.h"
#include "ops/reduce.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

using autograd::Grads;

namespace {

using ViewFn = std::function<Tensor(const Tensor&)>;

// Marks `view` as a view of `self` and records its backward.
Tensor record_view(Op op, const Tensor& self, Tensor view, ViewFn backward) {
  return detail::apply(
      op, {&self},
      [&] {
        view.impl()->set_is_view(true);
        return view;
      },
      [&](const Tensor&) {
        return [bw = std::move(backward)](const Grads& gs) { return Grads{bw(gs[0])}; };
      });
}

// The gradient of a view that selects part of its input: zeros of the
// input's shape with `g` written where `select` looks. Differentiable in g
// (its backward selects again), so double backward works through views.
Tensor embed(const Tensor& g, const DimVector& shape, const ViewFn& select) {
  return detail::apply(
      Op::view_backward, {&g},
      [&] {
        Tensor out = zeros(shape, g.options());
        select(out).copy_(g);
        return out;
      },
      [&](const Tensor&) { return [select](const Grads& gs) { return Grads{select(gs[0])}; }; });
}

Tensor make_view(const Tensor& base, IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  return detail::make_view(base, sizes, strides, offset);
}

using Geometry = std::tuple<DimVector, DimVector, int64_t>;

// as_strided addresses storage directly: the gradient is scatter-added into
// a zero "storage" (overlapping output elements add up), then read back
// through the input's own geometry.
Tensor as_strided_backward(const Tensor& g,
                           const Geometry& self_geom,
                           const Geometry& out_geom,
                           int64_t capacity) {
  const auto& [in_sizes, in_strides, in_offset] = self_geom;
  const auto& [out_sizes, out_strides, out_offset] = out_geom;
  Tensor probe = empty(in_sizes, Device(kMeta));  // its strides only
  STRIDE_CHECK(!detail::has_internal_overlap(detail::make_view(probe, in_sizes, in_strides, 0)),
               NotImplementedError,
               "[as_strided] backward through an as_strided view of a tensor whose own elements "
               "overlap (e.g. an expanded tensor) is not supported. Hint: call contiguous() "
               "before as_strided.");
  Tensor positions = arange(capacity).to(g.device()).as_strided(out_sizes, out_strides, out_offset);
  Tensor storage_grad =
      zeros({capacity}, g.options()).scatter_add(0, positions.reshape({-1}), g.reshape({-1}));
  return storage_grad.as_strided(in_sizes, in_strides, in_offset);
}

}  // namespace

namespace {

DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  DimVector out(shape.begin(), shape.end());
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == -1) {
      STRIDE_CHECK(!infer, ShapeError, "[", op, "] only one dim can be -1; got ", shape_str(shape),
                   ".");
      infer = i;
    } else {
      STRIDE_CHECK(out[i] >= 0, ShapeError, "[", op, "] invalid size ", out[i], " in ",
                   shape_str(shape), ".");
      known *= out[i];
    }
  }
  if (infer) {
    STRIDE_CHECK(known != 0 && numel % known == 0, ShapeError, "[", op, "] shape ",
                 shape_str(shape), " is invalid for a tensor of ", numel, " elements.");
    out[*infer] = numel / known;
  }
  STRIDE_CHECK(numel_of(out) == numel, ShapeError, "[", op, "] shape ", shape_str(shape),
               " is invalid for a tensor of ", numel, " elements.");
  return out;
}

// Strides that let `new_shape` view memory laid out as (old_shape, old_strides),
// or nullopt when no such strides exist (PyTorch's computeStride).
std::optional<DimVector> view_strides(IntArrayRef old_shape,
                                      IntArrayRef old_strides,
                                      IntArrayRef new_shape) {
  DimVector new_strides(new_shape.size());
  if (old_shape.empty()) {
    for (auto& s : new_strides) s = 1;
    return new_strides;
  }
  if (numel_of(old_shape) == 0) {
    checked_numel(new_shape, "view");
    return contiguous_strides(new_shape);
  }
  int64_t view_d = int64_t(new_shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.back();
  int64_t tensor_numel = 1;
  int64_t view_numel = 1;
  for (int64_t tensor_d = int64_t(old_shape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= old_shape[size_t(tensor_d)];
    if (tensor_d == 0 || (old_shape[size_t(tensor_d - 1)] != 1 &&
                          old_strides[size_t(tensor_d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[size_t(view_d)] == 1)) {
        new_strides[size_t(view_d)] = view_numel * chunk_base_stride;
        view_numel *= new_shape[size_t(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = old_strides[size_t(tensor_d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return new_strides;
}

}  // namespace

Tensor Tensor::view(IntArrayRef shape) const {
  DimVector new_shape = infer_size(shape, numel(), "view");
  auto st = view_strides(sizes(), strides(), new_shape);
  STRIDE_CHECK(st.has_value(), ShapeError, "[view] cannot view a tensor of shape ",
               shape_str(sizes()), " and strides ", shape_str(strides()), " as ",
               shape_str(new_shape),
               ": its memory is not laid out compatibly. Hint: use .reshape(...), which copies "
               "when it must, or .contiguous().view(...).");
  return record_view(Op::view, *this, make_view(*this, new_shape, *st, storage_offset()),
                     [shape = sizes().dims()](const Tensor& g) { return g.reshape(shape); });
}

Tensor Tensor::reshape(IntArrayRef shape) const {
  DimVector new_shape = infer_size(shape, numel(), "reshape");
  if (auto st = view_strides(sizes(), strides(), new_shape)) {
    return record_view(Op::reshape, *this, make_view(*this, new_shape, *st, storage_offset()),
                       [shape = sizes().dims()](const Tensor& g) { return g.reshape(shape); });
  }
  return contiguous().view(new_shape);
}

Tensor Tensor::transpose(int64_t dim0, int64_t dim1) const {
  const int64_t n = dim();
  dim0 = wrap_dim(dim0, n, "transpose");
  dim1 = wrap_dim(dim1, n, "transpose");
  if (n == 0)
    return record_view(Op::transpose, *this, make_view(*this, sizes(), strides(), storage_offset()),
                       [](const Tensor& g) { return g; });
  DimVector sz = sizes().dims(), st = strides().dims();
  std::swap(sz[size_t(dim0)], sz[size_t(dim1)]);
  std::swap(st[size_t(dim0)], st[size_t(dim1)]);
  return record_view(Op::transpose, *this, make_view(*this, sz, st, storage_offset()),
                     [dim0, dim1](const Tensor& g) { return g.transpose(dim0, dim1); });
}

Tensor Tensor::t() const {
  STRIDE_CHECK(dim() <= 2, ShapeError, "[t] expects a tensor with at most 2 dims; got shape ",
               shape_str(sizes()), ". Hint: use transpose(dim0, dim1).");
  return dim() < 2 ? transpose(0, 0) : transpose(0, 1);
}

Tensor Tensor::permute(IntArrayRef dims) const {
  const int64_t n = dim();
  STRIDE_CHECK(int64_t(dims.size()) == n, ShapeError, "[permute] expected ", n,
               " dims for a tensor of shape ", shape_str(sizes()), "; got ", shape_str(dims), ".");
  DimVector sz(size_t(n), 0), st(size_t(n), 0);
  SmallVector<bool, 8> seen(size_t(n), false);
  for (int64_t i = 0; i < n; ++i) {
    int64_t d = wrap_dim(dims[size_t(i)], n, "permute");
    STRIDE_CHECK(!seen[size_t(d)], ShapeError, "[permute] dim ", d, " repeats in ", shape_str(dims),
                 ".");
    seen[size_t(d)] = true;
    sz[size_t(i)] = sizes()[size_t(d)];
    st[size_t(i)] = strides()[size_t(d)];
  }
  DimVector inverse(size_t(n), 0);
  for (int64_t i = 0; i < n; ++i) inverse[size_t(wrap_dim(dims[size_t(i)], n, "permute"))] = i;
  return record_view(Op::permute, *this, make_view(*this, sz, st, storage_offset()),
                     [inverse](const Tensor& g) { return g.permute(inverse); });
}

Tensor Tensor::narrow(int64_t d, int64_t start, int64_t length) const {
  STRIDE_CHECK(dim() > 0, ShapeError, "[narrow] cannot narrow a 0-d tensor.");
  d = wrap_dim(d, dim(), "narrow");
  const int64_t size = sizes()[size_t(d)];
  if (start < 0) start += size;
  STRIDE_CHECK(start >= 0 && length >= 0 && start + length <= size, IndexError, "[narrow] range [",
               start, ", ", start + length, ") is out of bounds for dim ", d, " of size ", size,
               ".");
  return slice(d, start, start + length);
}

Tensor Tensor::slice(int64_t d,
                     std::optional<int64_t> start_opt,
                     std::optional<int64_t> end_opt,
                     int64_t step) const {
  STRIDE_CHECK(dim() > 0, ShapeError, "[slice] cannot slice a 0-d tensor.");
  d = wrap_dim(d, dim(), "slice");
  STRIDE_CHECK(step > 0, ValueError, "[slice] step must be positive; got ", step, ".");
  const int64_t size = sizes()[size_t(d)];
  // Python slice semantics: negative indices count from the end, then clamp.
  auto norm = [size](int64_t i) { return std::clamp<int64_t>(i < 0 ? i + size : i, 0, size); };
  const int64_t start = norm(start_opt.value_or(0));
  const int64_t end = std::max(start, norm(end_opt.value_or(size)));
  DimVector sz = sizes().dims(), st = strides().dims();
  sz[size_t(d)] = (end - start + step - 1) / step;
  st[size_t(d)] *= step;
  return record_view(
      Op::slice, *this, make_view(*this, sz, st, storage_offset() + start * strides()[size_t(d)]),
      [shape = sizes().dims(), d, start, end, step](const Tensor& g) {
        return embed(g, shape, [=](const Tensor& t) { return t.slice(d, start, end, step); });
      });
}

Tensor Tensor::select(int64_t d, int64_t index) const {
  STRIDE_CHECK(dim() > 0, ShapeError, "[select] cannot select from a 0-d tensor.");
  d = wrap_dim(d, dim(), "select");
  const int64_t size = sizes()[size_t(d)];
  STRIDE_CHECK(index >= -size && index < size, IndexError, "[select] index ", index,
               " is out of range for dim ", d, " of size ", size, ".");
  if (index < 0) index += size;
  DimVector sz = sizes().dims(), st = strides().dims();
  sz.erase(sz.begin() + d);
  st.erase(st.begin() + d);
  return record_view(Op::select, *this,
                     make_view(*this, sz, st, storage_offset() + index * strides()[size_t(d)]),
                     [shape = sizes().dims(), d, index](const Tensor& g) {
                       return embed(g, shape, [=](const Tensor& t) { return t.select(d, index); });
                     });
}

Tensor Tensor::unsqueeze(int64_t d) const {
  d = wrap_dim(d, dim() + 1, "unsqueeze");
  DimVector sz = sizes().dims(), st = strides().dims();
  const int64_t new_stride = d < dim() ? sizes()[size_t(d)] * strides()[size_t(d)] : 1;
  sz.insert(sz.begin() + d, 1);
  st.insert(st.begin() + d, new_stride);
  return record_view(Op::unsqueeze, *this, make_view(*this, sz, st, storage_offset()),
                     [d](const Tensor& g) { return g.squeeze(d); });
}

Tensor Tensor::squeeze() const {
  DimVector sz, st;
  for (size_t i = 0; i < size_t(dim()); ++i) {
    if (sizes()[i] != 1) {
      sz.push_back(sizes()[i]);
      st.push_back(strides()[i]);
    }
  }
  return record_view(Op::squeeze, *this, make_view(*this, sz, st, storage_offset()),
                     [shape = sizes().dims()](const Tensor& g) { return g.reshape(shape); });
}

Tensor Tensor::squeeze(int64_t d) const {
  if (dim() == 0)
    return record_view(Op::squeeze, *this, make_view(*this, sizes(), strides(), storage_offset()),
                       [shape = sizes().dims()](const Tensor& g) { return g.reshape(shape); });
  d = wrap_dim(d, dim(), "squeeze");
  if (sizes()[size_t(d)] != 1)
    return record_view(Op::squeeze, *this, make_view(*this, sizes(), strides(), storage_offset()),
                       [shape = sizes().dims()](const Tensor& g) { return g.reshape(shape); });
  DimVector sz = sizes().dims(), st = strides().dims();
  sz.erase(sz.begin() + d);
  st.erase(st.begin() + d);
  return record_view(Op::squeeze, *this, make_view(*this, sz, st, storage_offset()),
                     [shape = sizes().dims()](const Tensor& g) { return g.reshape(shape); });
}

Tensor Tensor::expand(IntArrayRef shape) const {
  const int64_t n = int64_t(shape.size());
  STRIDE_CHECK(n >= dim(), ShapeError, "[expand] cannot expand shape ", shape_str(sizes()), " to ",
               shape_str(shape), ": the target has fewer dims.");
  DimVector sz(size_t(n), 0), st(size_t(n), 0);
  const int64_t lead = n - dim();
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t target = shape[size_t(i)];
    if (i < lead) {
      STRIDE_CHECK(target >= 0, ShapeError, "[expand] -1 is not allowed for new leading dim ", i,
                   " in ", shape_str(shape), ".");
      sz[size_t(i)] = target;
      st[size_t(i)] = 0;
      continue;
    }
    const int64_t have = sizes()[size_t(i - lead)];
    if (target == -1 || target == have) {
      sz[size_t(i)] = have;
      st[size_t(i)] = strides()[size_t(i - lead)];
    } else {
      STRIDE_CHECK(have == 1, ShapeError, "[expand] cannot expand shape ", shape_str(sizes()),
                   " to ", shape_str(shape), ": dim ", i, " has size ", have,
                   ", only size-1 dims can be expanded.");
      sz[size_t(i)] = target;
      st[size_t(i)] = 0;
    }
  }
  checked_numel(sz, "expand");
  return record_view(
      Op::expand, *this, make_view(*this, sz, st, storage_offset()),
      [shape = sizes().dims()](const Tensor& g) { return detail::sum_to(g, shape); });
}

Tensor Tensor::expand_as(const Tensor& other) const {
  return expand(other.sizes());
}

Tensor Tensor::flatten(int64_t start_dim, int64_t end_dim) const {
  if (dim() == 0) return reshape({1});
  start_dim = wrap_dim(start_dim, dim(), "flatten");
  end_dim = wrap_dim(end_dim, dim(), "flatten");
  STRIDE_CHECK(start_dim <= end_dim, ShapeError, "[flatten] start_dim ", start_dim,
               " must not come after end_dim ", end_dim, ".");
  DimVector shape;
  for (int64_t i = 0; i < start_dim; ++i) shape.push_back(sizes()[size_t(i)]);
  int64_t flat = 1;
  for (int64_t i = start_dim; i <= end_dim; ++i) flat *= sizes()[size_t(i)];
  shape.push_back(flat);
  for (int64_t i = end_dim + 1; i < dim(); ++i) shape.push_back(sizes()[size_t(i)]);
  return reshape(shape);
}

Tensor Tensor::as_strided(IntArrayRef new_sizes,
                          IntArrayRef new_strides,
                          std::optional<int64_t> offset_opt) const {
  STRIDE_CHECK(new_sizes.size() == new_strides.size(), ShapeError, "[as_strided] sizes ",
               shape_str(new_sizes), " and strides ", shape_str(new_strides), " differ in length.");
  const int64_t offset = offset_opt.value_or(storage_offset());
  STRIDE_CHECK(offset >= 0, ValueError, "[as_strided] negative storage offset ", offset, ".");
  int64_t max_index = offset;
  for (size_t i = 0; i < new_sizes.size(); ++i) {
    STRIDE_CHECK(new_sizes[i] >= 0 && new_strides[i] >= 0, ValueError,
                 "[as_strided] sizes and strides must be non-negative; got ", shape_str(new_sizes),
                 " and ", shape_str(new_strides), ".");
    if (new_sizes[i] == 0) {
      max_index = -1;
      break;
    }
    max_index += (new_sizes[i] - 1) * new_strides[i];
  }
  const int64_t capacity = int64_t(storage()->nbytes() / element_size());
  STRIDE_CHECK(max_index < capacity, IndexError, "[as_strided] sizes ", shape_str(new_sizes),
               ", strides ", shape_str(new_strides), " and offset ", offset, " reach element ",
               max_index, " but the storage holds only ", capacity, ".");
  return record_view(
      Op::as_strided, *this, make_view(*this, new_sizes, new_strides, offset),
      [self_geom = std::make_tuple(sizes().dims(), strides().dims(), storage_offset()),
       out_geom = std::make_tuple(new_sizes.dims(), new_strides.dims(), offset), capacity](
          const Tensor& g) { return as_strided_backward(g, self_geom, out_geom, capacity); });
}

std::vector<Tensor> Tensor::split(int64_t split_size, int64_t d) const {
  d = wrap_dim(d, dim(), "split");
  STRIDE_CHECK(split_size > 0 || sizes()[size_t(d)] == 0, ValueError,
               "[split] split_size must be positive; got ", split_size, ".");
  const int64_t size = sizes()[size_t(d)];
  std::vector<Tensor> out;
  for (int64_t start = 0; start < size || (size == 0 && out.empty()); start += split_size) {
    out.push_back(narrow(d, start, std::min(split_size, size - start)));
    if (size == 0) break;
  }
  return out;
}

std::vector<Tensor> Tensor::unbind(int64_t d) const {
  d = wrap_dim(d, dim(), "unbind");
  std::vector<Tensor> out;
  out.reserve(size_t(size(d)));
  for (int64_t i = 0; i < size(d); ++i) out.push_back(select(d, i));
  return out;
}

std::vector<Tensor> Tensor::chunk(int64_t chunks, int64_t d) const {
  STRIDE_CHECK(chunks > 0, ValueError, "[chunk] chunks must be positive; got ", chunks, ".");
  d = wrap_dim(d, dim(), "chunk");
  const int64_t size = sizes()[size_t(d)];
  return split(std::max<int64_t>((size + chunks - 1) / chunks, 1), d);
}

Tensor Tensor::diagonal(int64_t offset, int64_t dim1, int64_t dim2) const {
  dim1 = wrap_dim(dim1, dim(), "diagonal");
  dim2 = wrap_dim(dim2, dim(), "diagonal");
  STRIDE_CHECK(dim1 != dim2, ShapeError, "[diagonal] dim1 and dim2 must differ; both are ", dim1,
               ".");
  const int64_t s1 = sizes()[size_t(dim1)], s2 = sizes()[size_t(dim2)];
  int64_t len, start = storage_offset();
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(s1, s2 - offset), 0);
    if (len > 0) start += offset * strides()[size_t(dim2)];
  } else {
    len = std::max<int64_t>(std::min(s1 + offset, s2), 0);
    if (len > 0) start -= offset * strides()[size_t(dim1)];
  }
  DimVector sz, st;
  for (int64_t i = 0; i < dim(); ++i) {
    if (i == dim1 || i == dim2) continue;
    sz.push_back(sizes()[size_t(i)]);
    st.push_back(strides()[size_t(i)]);
  }
  sz.push_back(len);
  st.push_back(strides()[size_t(dim1)] + strides()[size_t(dim2)]);
  return record_view(
      Op::diagonal, *this, make_view(*this, sz, st, start),
      [shape = sizes().dims(), offset, dim1, dim2](const Tensor& g) {
        return embed(g, shape, [=](const Tensor& t) { return t.diagonal(offset, dim1, dim2); });
      });
}

namespace {

// The gradient of unfold: each input element gets the sum of the gradients
// of every window element that is it. Windows overlap when step < size, so
// the gradient is scatter-added at the input positions the windows read
// (an op, so double backward works: its gradient is unfold again).
Tensor unfold_backward(
    const Tensor& g, const DimVector& shape, int64_t d, int64_t size, int64_t step) {
  const int64_t n = numel_of(shape);
  Tensor positions = arange(n).to(g.device()).view(shape).unfold(d, size, step);
  return zeros({n}, g.options())
      .scatter_add(0, positions.reshape({-1}), g.reshape({-1}))
      .view(shape);
}

}  // namespace

Tensor Tensor::unfold(int64_t d, int64_t size, int64_t step) const {
  // A 0-d tensor unfolds as one of shape (1,) would, as PyTorch's.
  d = wrap_dim(d, std::max<int64_t>(dim(), 1), "unfold");
  const int64_t extent = dim() == 0 ? 1 : sizes()[size_t(d)];
  const int64_t stride_d = dim() == 0 ? 1 : strides()[size_t(d)];
  STRIDE_CHECK(size >= 0 && size <= extent, ShapeError, "[unfold] size ", size,
               " must be between 0 and the size of dim ", d, ", ", extent,
               ". Hint: pick a smaller window size.");
  STRIDE_CHECK(step > 0, ValueError, "[unfold] step must be positive; got ", step, ".");
  DimVector sz = sizes().dims(), st = strides().dims();
  if (dim() > 0) {
    sz[size_t(d)] = (extent - size) / step + 1;
    st[size_t(d)] = stride_d * step;
  }
  sz.push_back(size);
  st.push_back(stride_d);
  return record_view(Op::unfold_view, *this, make_view(*this, sz, st, storage_offset()),
                     [shape = sizes().dims(), d, size, step](const Tensor& g) {
                       return unfold_backward(g, shape, d, size, step);
                     });
}

Tensor& Tensor::resize_(IntArrayRef new_sizes) {
  STRIDE_CHECK(!requires_grad(), ValueError,
               "[resize_] cannot resize a tensor that requires grad. Hint: resize a detach()ed "
               "tensor, or use reshape.");
  for (int64_t s : new_sizes) {
    STRIDE_CHECK(s >= 0, ValueError, "[resize_] size ", shape_str(new_sizes),
                 " has a negative dim.");
  }
  const int64_t needed = storage_offset() + numel_of(new_sizes);
  const int64_t capacity = int64_t(storage()->nbytes() / element_size());
  Storage memory = storage();
  if (needed > capacity) {
    // Grows into new memory whose first `capacity` elements are the old ones,
    // as PyTorch's realloc keeps them; other views keep the old memory.
    Tensor grown = empty({needed}, options());
    grown.narrow(0, 0, capacity).copy_(make_view(*this, {capacity}, {1}, 0));
    memory = grown.storage();
  }
  impl()->set_geometry(memory, new_sizes, contiguous_strides(new_sizes), storage_offset());
  return *this;
}

Tensor& Tensor::resize_as_(const Tensor& other) {
  return resize_(other.sizes());
}

// ---- complex views (the complex family's, src/ops/complex.cpp) ----

namespace {

// A real tensor that view_as_complex accepts: `g` itself when its layout
// allows, else a contiguous copy (gradients of view_as_real come in any
// layout).
Tensor complex_viewable(const Tensor& g) {
  bool ok = g.dim() > 0 && g.stride(-1) == 1 && g.storage_offset() % 2 == 0;
  for (int64_t d = 0; ok && d + 1 < g.dim(); ++d) ok = g.stride(d) % 2 == 0;
  return ok ? g : g.contiguous();
}

}  // namespace

Tensor view_as_real(const Tensor& z) {
  STRIDE_CHECK(z.is_complex(), DTypeError, "[view_as_real] expects a complex tensor; got ",
               to_string(z.dtype()), ". Hint: a real tensor's values are already real.");
  DimVector sz = z.sizes().dims(), st;
  for (const int64_t s : z.strides()) st.push_back(s * 2);
  sz.push_back(2);
  st.push_back(1);
  const Tensor view =
      detail::make_tensor(z.storage(), to_real_dtype(z.dtype()), sz, st, z.storage_offset() * 2);
  return record_view(Op::view_as_real, z, view,
                     [](const Tensor& g) { return view_as_complex(complex_viewable(g)); });
}

Tensor view_as_complex(const Tensor& x) {
  STRIDE_CHECK(x.dtype() == kFloat32 || x.dtype() == kFloat64, DTypeError,
               "[view_as_complex] expects a float32 or float64 tensor; got ", to_string(x.dtype()),
               ".");
  STRIDE_CHECK(x.dim() > 0 && x.size(-1) == 2, ShapeError,
               "[view_as_complex] the last dim must have size 2 (real and imaginary parts); got "
               "shape ",
               shape_str(x.sizes()), ".");
  STRIDE_CHECK(x.stride(-1) == 1, ShapeError,
               "[view_as_complex] the last dim must have stride 1; got ", x.stride(-1),
               ". Hint: call contiguous() first.");
  for (int64_t d = 0; d + 1 < x.dim(); ++d) {
    STRIDE_CHECK(x.stride(d) % 2 == 0, ShapeError, "[view_as_complex] dim ", d, " has stride ",
                 x.stride(d),
                 "; every stride but the last must be even. Hint: call contiguous() "
                 "first.");
  }
  STRIDE_CHECK(x.storage_offset() % 2 == 0, ShapeError,
               "[view_as_complex] the storage offset must be even; got ", x.storage_offset(),
               ". Hint: call contiguous() first.");
  DimVector sz = x.sizes().dims(), st = x.strides().dims();
  sz.pop_back();
  st.pop_back();
  for (int64_t& s : st) s /= 2;
  const Tensor view =
      detail::make_tensor(x.storage(), to_complex_dtype(x.dtype()), sz, st, x.storage_offset() / 2);
  return record_view(Op::view_as_complex, x, view, [](const Tensor& g) { return view_as_real(g); });
}

}  // namespace stride
