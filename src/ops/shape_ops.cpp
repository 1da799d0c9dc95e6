// Shape ops: the stacks, splits, dim moves, diagonals, grids and repeats of
// torch.*, written with views, cat, index_select and where. They are
// composites as PyTorch's are (CompositeImplicitAutograd): no kernel and no
// node of their own, so their gradients are those of the ops they use, and
// results that PyTorch returns as views are views here too.
#include <algorithm>
#include <numeric>
#include <string>

#include "core/check.h"
#include "ops/apply.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

namespace {

// The dtype rule of a list's op on its first tensor, the operand PyTorch's
// type checks name; an empty list is left to the op's own error.
void check_dtype_rule_of_first(Op op, const std::vector<Tensor>& tensors) {
  detail::check_dtype_rule(op, detail::op_name(op), tensors.empty() ? nullptr : &tensors.front());
}

// The dims of `dims` wrapped into [0, ndim), each at most once.
std::vector<int64_t> wrapped_unique_dims(IntArrayRef dims, int64_t ndim, const char* op) {
  std::vector<int64_t> out;
  out.reserve(dims.size());
  for (const int64_t d : dims) {
    const int64_t w = wrap_dim(d, ndim, op);
    STRIDE_CHECK(std::find(out.begin(), out.end(), w) == out.end(), ValueError, "[", op,
                 "] repeats dim ", d, "; name each dim once.");
    out.push_back(w);
  }
  return out;
}

std::vector<Tensor> each_of(const std::vector<Tensor>& tensors,
                            const char* op,
                            Tensor (*f)(const Tensor&)) {
  STRIDE_CHECK(!tensors.empty(), ValueError, "[", op, "] expects at least one tensor.");
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(f(t));
  return out;
}

// Zeros of x's dtype and device in `shape`.
Tensor zeros_of(const Tensor& x, IntArrayRef shape) {
  return zeros(shape, x.options());
}

// x with `before` zeros prepended and `after` zeros appended along dim.
Tensor zero_padded(const Tensor& x, int64_t dim, int64_t before, int64_t after) {
  if (before == 0 && after == 0) return x;
  DimVector shape = x.sizes().dims();
  std::vector<Tensor> parts;
  shape[size_t(dim)] = before;
  if (before > 0) parts.push_back(zeros_of(x, shape));
  parts.push_back(x);
  shape[size_t(dim)] = after;
  if (after > 0) parts.push_back(zeros_of(x, shape));
  return cat(parts, dim);
}

int64_t checked_sections(const Tensor& x, int64_t sections, int64_t dim, const char* op) {
  STRIDE_CHECK(sections > 0 && x.size(dim) % sections == 0, ValueError, "[", op,
               "] cannot split dim ", dim, " of size ", x.size(dim), " into ", sections,
               " equal sections; pass a number of sections that divides it, or split indices.");
  return sections;
}

void check_min_dims(const Tensor& x, int64_t ndim, const char* op) {
  STRIDE_CHECK(x.dim() >= ndim, ShapeError, "[", op, "] expects a tensor of at least ", ndim,
               " dims; got shape ", shape_str(x.sizes()), ".");
}

}  // namespace

Tensor atleast_1d(const Tensor& x) {
  detail::check_dtype_rule(Op::atleast_1d, x);
  return x.dim() == 0 ? x.reshape({1}) : x;
}

Tensor atleast_2d(const Tensor& x) {
  detail::check_dtype_rule(Op::atleast_2d, x);
  if (x.dim() == 0) return x.reshape({1, 1});
  return x.dim() == 1 ? x.unsqueeze(0) : x;
}

Tensor atleast_3d(const Tensor& x) {
  detail::check_dtype_rule(Op::atleast_3d, x);
  if (x.dim() == 0) return x.reshape({1, 1, 1});
  if (x.dim() == 1) return x.unsqueeze(0).unsqueeze(2);
  return x.dim() == 2 ? x.unsqueeze(2) : x;
}

Tensor broadcast_to(const Tensor& x, IntArrayRef shape) {
  detail::check_dtype_rule(Op::broadcast_to, x);
  return x.expand(shape);
}

std::vector<Tensor> broadcast_tensors(const std::vector<Tensor>& tensors) {
  check_dtype_rule_of_first(Op::broadcast_tensors, tensors);
  DimVector shape;
  for (const Tensor& t : tensors) shape = broadcast_shapes(shape, t.sizes(), "broadcast_tensors");
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(t.expand(shape));
  return out;
}

Tensor hstack(const std::vector<Tensor>& tensors) {
  check_dtype_rule_of_first(Op::hstack, tensors);
  const std::vector<Tensor> parts = each_of(tensors, "hstack", atleast_1d);
  return cat(parts, parts[0].dim() == 1 ? 0 : 1);
}

Tensor vstack(const std::vector<Tensor>& tensors) {
  check_dtype_rule_of_first(Op::vstack, tensors);
  return cat(each_of(tensors, "vstack", atleast_2d), 0);
}

Tensor dstack(const std::vector<Tensor>& tensors) {
  check_dtype_rule_of_first(Op::dstack, tensors);
  return cat(each_of(tensors, "dstack", atleast_3d), 2);
}

Tensor column_stack(const std::vector<Tensor>& tensors) {
  check_dtype_rule_of_first(Op::column_stack, tensors);
  const auto as_column = [](const Tensor& t) {
    return t.dim() <= 1 ? t.reshape({t.numel(), 1}) : t;
  };
  return cat(each_of(tensors, "column_stack", +as_column), 1);
}

std::vector<Tensor> tensor_split(const Tensor& x, int64_t sections, int64_t dim) {
  detail::check_dtype_rule(Op::tensor_split, x);
  check_min_dims(x, 1, "tensor_split");
  STRIDE_CHECK(sections > 0, ValueError, "[tensor_split] needs a positive number of sections; got ",
               sections, ".");
  const int64_t d = wrap_dim(dim, x.dim(), "tensor_split");
  const int64_t small = x.size(d) / sections;
  const int64_t larger = x.size(d) % sections;  // the first `larger` parts get one more
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t i = 0; i < sections; ++i) {
    const int64_t n = small + (i < larger ? 1 : 0);
    parts.push_back(x.narrow(d, start, n));
    start += n;
  }
  return parts;
}

std::vector<Tensor> tensor_split_at(const Tensor& x, IntArrayRef indices, int64_t dim) {
  detail::check_dtype_rule(Op::tensor_split, x);
  check_min_dims(x, 1, "tensor_split");
  const int64_t d = wrap_dim(dim, x.dim(), "tensor_split");
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (const int64_t end : indices) {
    parts.push_back(x.slice(d, start, end));
    start = end;
  }
  parts.push_back(x.slice(d, start, std::nullopt));
  return parts;
}

std::vector<Tensor> split_with_sizes(const Tensor& x, IntArrayRef sizes, int64_t dim) {
  detail::check_dtype_rule(Op::split_with_sizes, x);
  const int64_t d = wrap_dim(dim, x.dim(), "split_with_sizes");
  const int64_t total = std::accumulate(sizes.begin(), sizes.end(), int64_t{0});
  STRIDE_CHECK(total == x.size(d), ShapeError, "[split_with_sizes] the sizes ", shape_str(sizes),
               " add up to ", total, " but dim ", d, " has ", x.size(d),
               " elements; pass sizes that add up to it.");
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (const int64_t n : sizes) {
    STRIDE_CHECK(n >= 0, ValueError, "[split_with_sizes] got the negative size ", n, ".");
    parts.push_back(x.narrow(d, start, n));
    start += n;
  }
  return parts;
}

std::vector<Tensor> hsplit(const Tensor& x, int64_t sections) {
  detail::check_dtype_rule(Op::hsplit, x);
  check_min_dims(x, 1, "hsplit");
  const int64_t d = x.dim() == 1 ? 0 : 1;
  return tensor_split(x, checked_sections(x, sections, d, "hsplit"), d);
}

std::vector<Tensor> vsplit(const Tensor& x, int64_t sections) {
  detail::check_dtype_rule(Op::vsplit, x);
  check_min_dims(x, 2, "vsplit");
  return tensor_split(x, checked_sections(x, sections, 0, "vsplit"), 0);
}

std::vector<Tensor> dsplit(const Tensor& x, int64_t sections) {
  detail::check_dtype_rule(Op::dsplit, x);
  check_min_dims(x, 3, "dsplit");
  return tensor_split(x, checked_sections(x, sections, 2, "dsplit"), 2);
}

std::vector<Tensor> hsplit_at(const Tensor& x, IntArrayRef indices) {
  detail::check_dtype_rule(Op::hsplit, x);
  check_min_dims(x, 1, "hsplit");
  return tensor_split_at(x, indices, x.dim() == 1 ? 0 : 1);
}

std::vector<Tensor> vsplit_at(const Tensor& x, IntArrayRef indices) {
  detail::check_dtype_rule(Op::vsplit, x);
  check_min_dims(x, 2, "vsplit");
  return tensor_split_at(x, indices, 0);
}

std::vector<Tensor> dsplit_at(const Tensor& x, IntArrayRef indices) {
  detail::check_dtype_rule(Op::dsplit, x);
  check_min_dims(x, 3, "dsplit");
  return tensor_split_at(x, indices, 2);
}

Tensor movedim(const Tensor& x, IntArrayRef source, IntArrayRef destination) {
  detail::check_dtype_rule(Op::movedim, x);
  STRIDE_CHECK(source.size() == destination.size(), ValueError, "[movedim] got ", source.size(),
               " source dims and ", destination.size(),
               " destination dims; pass one destination per source.");
  const int64_t n = x.dim();
  const std::vector<int64_t> src = wrapped_unique_dims(source, n, "movedim");
  const std::vector<int64_t> dst = wrapped_unique_dims(destination, n, "movedim");
  std::vector<int64_t> order(size_t(n), -1);
  std::vector<bool> moved(size_t(n), false);
  for (size_t i = 0; i < src.size(); ++i) {
    order[size_t(dst[i])] = src[i];
    moved[size_t(src[i])] = true;
  }
  int64_t next = 0;  // the dims not moved fill the free places in their order
  for (int64_t& o : order) {
    if (o != -1) continue;
    while (moved[size_t(next)]) ++next;
    o = next++;
  }
  return x.permute(order);
}

Tensor ravel(const Tensor& x) {
  detail::check_dtype_rule(Op::ravel, x);
  return x.reshape({-1});
}

Tensor fliplr(const Tensor& x) {
  detail::check_dtype_rule(Op::fliplr, x);
  check_min_dims(x, 2, "fliplr");
  return flip(x, {1});
}

Tensor flipud(const Tensor& x) {
  detail::check_dtype_rule(Op::flipud, x);
  check_min_dims(x, 1, "flipud");
  return flip(x, {0});
}

Tensor rot90(const Tensor& x, int64_t k, IntArrayRef dims) {
  detail::check_dtype_rule(Op::rot90, x);
  STRIDE_CHECK(dims.size() == 2, ValueError, "[rot90] takes two dims; got ", dims.size(), ".");
  check_min_dims(x, 2, "rot90");
  const std::vector<int64_t> d = wrapped_unique_dims(dims, x.dim(), "rot90");
  switch (((k % 4) + 4) % 4) {
    case 1:
      return flip(x, {d[1]}).transpose(d[0], d[1]);
    case 2:
      return flip(x, {d[0], d[1]});
    case 3:
      return flip(x, {d[0]}).transpose(d[0], d[1]);
    default:
      return x.clone();
  }
}

Tensor diag_embed(const Tensor& x, int64_t offset, int64_t dim1, int64_t dim2) {
  detail::check_dtype_rule(Op::diag_embed, x);
  const int64_t rank = x.dim() + 1;
  const std::vector<int64_t> d = wrapped_unique_dims({dim1, dim2}, rank, "diag_embed");
  check_min_dims(x, 1, "diag_embed");
  const int64_t n = x.size(-1);
  // where, not a product with the identity, so that an inf of x leaves zeros
  // (not NaNs) off the diagonal.
  const Tensor on_diagonal = eye(n, std::nullopt, TensorOptions(kBool).device(x.device()));
  Tensor square = where(on_diagonal, x.unsqueeze(-1), zeros_of(x, {}));
  const int64_t k = offset < 0 ? -offset : offset;
  // Element i sits at (i, i + offset): zeros before the columns and after
  // the rows for a positive offset, the other way round for a negative one.
  square = zero_padded(square, rank - 1, offset > 0 ? k : 0, offset > 0 ? 0 : k);
  square = zero_padded(square, rank - 2, offset > 0 ? 0 : k, offset > 0 ? k : 0);
  return movedim(square, {rank - 2, rank - 1}, {d[0], d[1]});
}

Tensor diag(const Tensor& x, int64_t diagonal) {
  detail::check_dtype_rule(Op::diag, x);
  STRIDE_CHECK(x.dim() == 1 || x.dim() == 2, ShapeError,
               "[diag] takes a 1-d tensor (to put on a diagonal) or a 2-d one (to read one); got "
               "shape ",
               shape_str(x.sizes()), ".");
  return x.dim() == 1 ? diag_embed(x, diagonal, 0, 1) : x.diagonal(diagonal).clone();
}

Tensor diagflat(const Tensor& x, int64_t offset) {
  detail::check_dtype_rule(Op::diagflat, x);
  return diag_embed(x.reshape({-1}), offset, 0, 1);
}

Tensor block_diag(const std::vector<Tensor>& tensors) {
  check_dtype_rule_of_first(Op::block_diag, tensors);
  std::vector<Tensor> blocks;
  ScalarType dtype = tensors.empty() ? kFloat32 : tensors[0].dtype();
  int64_t cols = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    STRIDE_CHECK(t.dim() <= 2, ShapeError, "[block_diag] takes tensors of at most 2 dims; tensor ",
                 i, " has shape ", shape_str(t.sizes()), ".");
    blocks.push_back(t.dim() == 2 ? t : t.reshape({1, t.numel()}));
    dtype = promote_types(dtype, t.dtype());
    cols += blocks.back().size(1);
  }
  if (blocks.empty()) return zeros({1, 0});
  std::vector<Tensor> rows;
  int64_t before = 0;
  for (const Tensor& b : blocks) {
    const int64_t width = b.size(1);
    rows.push_back(zero_padded(b.to(dtype), 1, before, cols - before - width));
    before += width;
  }
  return cat(rows, 0);
}

std::vector<Tensor> meshgrid(const std::vector<Tensor>& tensors, std::string_view indexing) {
  check_dtype_rule_of_first(Op::meshgrid, tensors);
  STRIDE_CHECK(indexing == "ij" || indexing == "xy", ValueError,
               "[meshgrid] indexing must be \"ij\" or \"xy\"; got \"", indexing, "\".");
  STRIDE_CHECK(!tensors.empty(), ValueError, "[meshgrid] expects at least one tensor.");
  DimVector shape;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    STRIDE_CHECK(t.dim() <= 1, ShapeError, "[meshgrid] takes 0-d or 1-d tensors; tensor ", i,
                 " has shape ", shape_str(t.sizes()), ".");
    STRIDE_CHECK(t.dtype() == tensors[0].dtype() && t.device() == tensors[0].device(), DTypeError,
                 "[meshgrid] takes tensors of one dtype and device; tensor ", i, " is ",
                 to_string(t.dtype()), " on ", t.device().str(), ", tensor 0 ",
                 to_string(tensors[0].dtype()), " on ", tensors[0].device().str(), ".");
    shape.push_back(t.numel());
  }
  // "xy" swaps the first two dims: tensor 0 varies along dim 1, tensor 1 along dim 0.
  const bool swap = indexing == "xy" && tensors.size() >= 2;
  if (swap) std::swap(shape[0], shape[1]);
  std::vector<Tensor> grids;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const size_t axis = swap && i < 2 ? 1 - i : i;
    DimVector along(shape.size(), 1);
    along[axis] = shape[axis];
    grids.push_back(tensors[i].reshape(along).expand(shape));
  }
  return grids;
}

Tensor cartesian_prod(const std::vector<Tensor>& tensors) {
  check_dtype_rule_of_first(Op::cartesian_prod, tensors);
  for (size_t i = 0; i < tensors.size(); ++i) {
    STRIDE_CHECK(tensors[i].dim() == 1, ShapeError, "[cartesian_prod] takes 1-d tensors; tensor ",
                 i, " has shape ", shape_str(tensors[i].sizes()), ".");
  }
  if (tensors.size() == 1) return tensors[0];
  std::vector<Tensor> columns = meshgrid(tensors, "ij");
  for (Tensor& c : columns) c = c.reshape({-1});
  return stack(columns, 1);
}

namespace {

// The index tuples of r elements out of n, in lexicographic order: strictly
// increasing, or non-decreasing with replacement; column j of the result
// holds the j-th index of every tuple.
std::vector<std::vector<int64_t>> combination_columns(int64_t n, int64_t r, bool replacement) {
  std::vector<std::vector<int64_t>> columns(static_cast<size_t>(r));
  std::vector<int64_t> tuple(static_cast<size_t>(r));
  const auto fill = [&](auto& self, int64_t pos, int64_t first) -> void {
    if (pos == r) {
      for (size_t j = 0; j < size_t(r); ++j) columns[j].push_back(tuple[j]);
      return;
    }
    for (int64_t i = first; i < n; ++i) {
      tuple[size_t(pos)] = i;
      self(self, pos + 1, replacement ? i : i + 1);
    }
  };
  fill(fill, 0, 0);
  return columns;
}

}  // namespace

Tensor combinations(const Tensor& x, int64_t r, bool with_replacement) {
  detail::check_dtype_rule(Op::combinations, x);
  STRIDE_CHECK(x.dim() == 1, ShapeError, "[combinations] takes a 1-d tensor; got shape ",
               shape_str(x.sizes()), ".");
  STRIDE_CHECK(r >= 0, ValueError, "[combinations] takes r >= 0; got ", r, ".");
  if (r == 0) return zeros_of(x, {0});
  std::vector<Tensor> columns;
  for (const std::vector<int64_t>& idx : combination_columns(x.numel(), r, with_replacement)) {
    columns.push_back(x.index_select(0, tensor(idx).to(x.device())));
  }
  return stack(columns, 1);
}

Tensor repeat(const Tensor& x, IntArrayRef repeats) {
  detail::check_dtype_rule(Op::repeat, x);
  STRIDE_CHECK(int64_t(repeats.size()) >= x.dim(), ShapeError, "[repeat] got ", repeats.size(),
               " repeats for a tensor of ", x.dim(), " dims; pass at least one per dim.");
  const size_t lead = repeats.size() - size_t(x.dim());
  // x viewed as (1, s0, 1, s1, ...), expanded to (r0, s0, r1, s1, ...) and
  // merged pairwise: copy k of dim i reads x at the same place.
  DimVector spread;
  DimVector expanded;
  DimVector merged;
  for (size_t i = 0; i < repeats.size(); ++i) {
    STRIDE_CHECK(repeats[i] >= 0, ValueError, "[repeat] got the negative repeat ", repeats[i], ".");
    const int64_t s = i < lead ? 1 : x.size(int64_t(i - lead));
    spread.push_back(1);
    spread.push_back(s);
    expanded.push_back(repeats[i]);
    expanded.push_back(s);
    merged.push_back(repeats[i] * s);
  }
  return x.reshape(spread).expand(expanded).reshape(merged);
}

Tensor tile(const Tensor& x, IntArrayRef repeats) {
  detail::check_dtype_rule(Op::tile, x);
  std::vector<int64_t> padded(size_t(std::max<int64_t>(x.dim() - int64_t(repeats.size()), 0)), 1);
  padded.insert(padded.end(), repeats.begin(), repeats.end());
  return repeat(x, padded);
}

Tensor repeat_interleave(const Tensor& x, int64_t repeats, std::optional<int64_t> dim) {
  detail::check_dtype_rule(Op::repeat_interleave, x);
  STRIDE_CHECK(repeats >= 0, ValueError, "[repeat_interleave] got the negative repeat ", repeats,
               ".");
  const Tensor src = dim ? x : x.reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  std::vector<int64_t> expanded = src.sizes().vec();
  expanded.insert(expanded.begin() + d + 1, repeats);
  return src.unsqueeze(d + 1).expand(expanded).flatten(d, d + 1);
}

Tensor repeat_interleave(const Tensor& x, const Tensor& repeats, std::optional<int64_t> dim) {
  detail::check_dtype_rule(Op::repeat_interleave, x);
  STRIDE_CHECK(repeats.dim() <= 1, ShapeError,
               "[repeat_interleave] takes repeats as a 0-d or 1-d tensor; got shape ",
               shape_str(repeats.sizes()), ".");
  STRIDE_CHECK(!is_floating_point(repeats.dtype()) && repeats.dtype() != kBool, DTypeError,
               "[repeat_interleave] takes integer repeats; got ", to_string(repeats.dtype()), ".");
  const Tensor src = dim ? x : x.reshape({-1});
  const int64_t d = dim ? wrap_dim(*dim, x.dim(), "repeat_interleave") : 0;
  const std::vector<int64_t> counts = repeats.to(kInt64).to_vector<int64_t>();
  if (repeats.dim() == 0 || counts.size() == 1) return repeat_interleave(x, counts[0], dim);
  STRIDE_CHECK(int64_t(counts.size()) == src.size(d), ShapeError, "[repeat_interleave] got ",
               counts.size(), " repeats for dim ", d, " of size ", src.size(d),
               "; pass one repeat per element.");
  std::vector<int64_t> index;
  for (size_t i = 0; i < counts.size(); ++i) {
    STRIDE_CHECK(counts[i] >= 0, ValueError, "[repeat_interleave] got the negative repeat ",
                 counts[i], ".");
    index.insert(index.end(), size_t(counts[i]), int64_t(i));
  }
  return src.index_select(d, tensor(index).to(x.device()));
}

Tensor unflatten(const Tensor& x, int64_t dim, IntArrayRef sizes) {
  detail::check_dtype_rule(Op::unflatten, x);
  STRIDE_CHECK(!sizes.empty(), ValueError, "[unflatten] needs at least one size.");
  check_min_dims(x, 1, "unflatten");
  const int64_t d = wrap_dim(dim, x.dim(), "unflatten");
  std::vector<int64_t> shape = x.sizes().vec();
  shape.erase(shape.begin() + d);
  shape.insert(shape.begin() + d, sizes.begin(), sizes.end());
  return x.view(shape);
}

Tensor sum_to_size(const Tensor& x, IntArrayRef shape) {
  detail::check_dtype_rule(Op::sum_to_size, x);
  const DimVector target = broadcast_shapes(shape, x.sizes(), "sum_to_size");
  STRIDE_CHECK(IntArrayRef(target) == x.sizes(), ShapeError, "[sum_to_size] shape ",
               shape_str(shape), " does not broadcast to x's shape ", shape_str(x.sizes()), ".");
  if (shape.empty()) return sum(x);  // PyTorch's sum_to: an empty shape always sums
  const int64_t lead = x.dim() - int64_t(shape.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < x.dim(); ++i) {
    if (i < lead || (shape[size_t(i - lead)] == 1 && x.size(i) != 1)) dims.push_back(i);
  }
  return dims.empty() ? x : sum(x, dims, true).view(shape);
}

}  // namespace stride
