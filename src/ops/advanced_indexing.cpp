// Advanced indexing: index (x[i, :, j]) and index_put (x[i, :, j] = v), with
// PyTorch's semantics (include/stride/ops.h), nonzero and nonzero_static.
//
// Note [Advanced indexing]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// The index tensors are first reduced to one tensor of byte offsets of the
// broadcast index shape B: offsets = sum_k index_k * stride_k * itemsize,
// one TensorIter pass per index (the index_offsets kernel, which also wraps
// negative indices and checks bounds). When whole dims separate the indexed
// dims, self is permuted so that they come first (PyTorch's rule for where
// B goes). Then, as in Note [Restrided indexing], self is viewed with the
// result's shape and stride 0 along B's dims, and the offsets with stride 0
// along the other dims, so one TensorIter of three operands walks the result
// (or the values), self and the offsets together in any layout, however many
// dims are indexed; the kernel adds each element's offset to self's pointer.
#include <algorithm>

#include "backends/kernels.h"
#include "core/overlap.h"
#include "core/tensor_impl_utils.h"
#include "core/tensor_iter.h"
#include "ops/apply.h"
#include "ops/reduce.h"
#include "stride/ops.h"

namespace stride {

using detail::Op;

namespace {

bool is_mask(const Tensor& index) {
  return index.dtype() == kBool || index.dtype() == kUInt8;
}

// The positions of a mask's true entries, one int64 tensor (nnz,) per mask
// dim (PyTorch's nonzero().unbind(1)). The count decides the result's shape,
// so the mask's values are read here, on the host.
std::vector<Tensor> true_positions(const Tensor& mask) {
  STRIDE_CHECK(!mask.device().is_meta(), DeviceError,
               "[index] a boolean mask on meta has no values to select by. Hint: index with "
               "integer tensors.");
  const std::vector<uint8_t> bits = mask.to(kBool).contiguous().to_vector<uint8_t>();
  const DimVector strides = contiguous_strides(mask.sizes());
  std::vector<std::vector<int64_t>> positions(size_t(mask.dim()));
  for (size_t flat = 0; flat < bits.size(); ++flat) {
    if (!bits[flat]) continue;
    int64_t rest = int64_t(flat);
    for (size_t d = 0; d < positions.size(); ++d) {
      positions[d].push_back(rest / strides[d]);
      rest %= strides[d];
    }
  }
  std::vector<Tensor> out;
  for (auto& p : positions) {
    const int64_t n = int64_t(p.size());
    out.push_back(tensor<int64_t>(std::move(p), {n}).to(mask.device()));
  }
  return out;
}

// PyTorch's expandTensors: one entry per dim of self (undefined = whole
// dim), masks replaced by the positions of their true entries.
std::vector<Tensor> expand_indices(const Tensor& self,
                                   const std::vector<Tensor>& indices,
                                   const char* op) {
  int64_t consumed = 0;
  for (const Tensor& index : indices) {
    consumed += index.defined() && is_mask(index) ? index.dim() : 1;
  }
  STRIDE_CHECK(consumed <= self.dim(), IndexError, "[", op,
               "] too many indices for tensor of dimension ", self.dim(), " (got ", consumed, ").");
  std::vector<Tensor> out;
  for (const Tensor& index : indices) {
    const int64_t d = int64_t(out.size());
    if (!index.defined()) {
      out.emplace_back();
      continue;
    }
    STRIDE_CHECK(index.device() == self.device(), DeviceError, "[", op,
                 "] indices must be on self's device ", self.device().str(), "; got ",
                 index.device().str(), ".");
    if (!is_mask(index)) {
      STRIDE_CHECK(index.dtype() == kInt64 || index.dtype() == kInt32, IndexError, "[", op,
                   "] tensors used as indices must be long, int, byte or bool tensors; got ",
                   to_string(index.dtype()), ".");
      out.push_back(index);
      continue;
    }
    STRIDE_CHECK(index.dim() > 0, IndexError, "[", op,
                 "] a 0-d boolean index has no dim to select along. Hint: unsqueeze self "
                 "first (Python's x[True] does).");
    for (int64_t k = 0; k < index.dim(); ++k) {
      STRIDE_CHECK(index.size(k) == self.size(d + k), IndexError, "[", op,
                   "] the shape of the mask ", shape_str(index.sizes()), " at index ", k,
                   " does not match the shape of the indexed tensor ", shape_str(self.sizes()),
                   " at index ", d + k, ".");
    }
    for (Tensor& p : true_positions(index)) out.push_back(std::move(p));
  }
  out.resize(size_t(self.dim()));
  return out;
}

// Where the indexed elements are: self (permuted), the broadcast index shape
// B, the result's shape and the byte offsets (Note [Advanced indexing]).
struct IndexPlan {
  Tensor src;       // self viewed with the result's shape, stride 0 along B
  Tensor offsets;   // int64 byte offsets viewed with the result's shape
  DimVector shape;  // the result's shape
};

DimVector broadcast_index_shape(const std::vector<Tensor>& indices, const char* op) {
  DimVector shape;
  bool first = true;
  for (const Tensor& index : indices) {
    if (!index.defined()) continue;
    if (first) {
      shape = index.sizes().dims();
      first = false;
      continue;
    }
    try {
      shape = broadcast_shapes(shape, index.sizes(), op);
    } catch (const ShapeError&) {
      std::string shapes;
      for (const Tensor& i : indices) {
        if (i.defined()) shapes += (shapes.empty() ? "" : ", ") + shape_str(i.sizes());
      }
      throw IndexError(detail::str_cat("[", op,
                                       "] shape mismatch: indexing tensors could not be "
                                       "broadcast together with shapes ",
                                       shapes, "."));
    }
  }
  return shape;
}

// Byte offsets of B's shape: sum over indexed dims of index * stride.
Tensor byte_offsets(const Tensor& self,
                    const std::vector<Tensor>& indices,
                    const std::vector<int64_t>& dims,
                    IntArrayRef b_shape) {
  Tensor offsets = zeros(b_shape, TensorOptions(kInt64).device(self.device()));
  const int64_t itemsize = int64_t(self.element_size());
  for (size_t k = 0; k < dims.size(); ++k) {
    const int64_t d = dims[k];
    TensorIter iter = TensorIterConfig("index")
                          .add_output(offsets)
                          .add_input(offsets)
                          .add_input(indices[size_t(d)].expand(b_shape))
                          .check_all_same_dtype(false)
                          .build();
    kernels::index_offsets(self.device(), iter, indices[size_t(d)].dtype(), d, self.size(d),
                           self.stride(d) * itemsize);
  }
  return offsets;
}

IndexPlan plan_index(const Tensor& self, const std::vector<Tensor>& indices, const char* op) {
  std::vector<int64_t> dims;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (indices[size_t(d)].defined()) dims.push_back(d);
  }
  STRIDE_CHECK(!dims.empty(), ValueError, "[", op, "] needs at least one index tensor.");
  const DimVector b_shape = broadcast_index_shape(indices, op);
  const Tensor offsets = byte_offsets(self, indices, dims, b_shape);

  // PyTorch's rule: B replaces adjacent indexed dims in place; indexed dims
  // separated by a whole dim are moved to the front.
  const bool adjacent = dims.back() - dims.front() + 1 == int64_t(dims.size());
  DimVector order;
  if (adjacent) {
    for (int64_t d = 0; d < self.dim(); ++d) order.push_back(d);
  } else {
    order.assign(dims.begin(), dims.end());
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (!indices[size_t(d)].defined()) order.push_back(d);
    }
  }
  const int64_t first = adjacent ? dims.front() : 0;
  const int64_t after = first + int64_t(dims.size());  // first whole dim after B

  IndexPlan plan;
  DimVector src_strides, offset_strides;
  const DimVector b_strides = offsets.strides().dims();
  for (int64_t k = 0; k < first; ++k) {
    plan.shape.push_back(self.size(order[size_t(k)]));
    src_strides.push_back(self.stride(order[size_t(k)]));
    offset_strides.push_back(0);
  }
  for (size_t k = 0; k < b_shape.size(); ++k) {
    plan.shape.push_back(b_shape[k]);
    src_strides.push_back(0);
    offset_strides.push_back(b_strides[k]);
  }
  for (int64_t k = after; k < self.dim(); ++k) {
    plan.shape.push_back(self.size(order[size_t(k)]));
    src_strides.push_back(self.stride(order[size_t(k)]));
    offset_strides.push_back(0);
  }
  plan.src = detail::make_view(self, plan.shape, src_strides, self.storage_offset());
  plan.offsets = detail::make_view(offsets, plan.shape, offset_strides, offsets.storage_offset());
  return plan;
}

Tensor index_kernel(const Tensor& self, const std::vector<Tensor>& indices) {
  IndexPlan plan = plan_index(self, indices, "index");
  Tensor out = empty(plan.shape, self.options());
  TensorIter iter = TensorIterConfig("index")
                        .add_output(out)
                        .add_input(plan.src)
                        .add_input(plan.offsets)
                        .check_all_same_dtype(false)
                        .build();
  kernels::index_gather(self.device(), iter);
  return out;
}

bool shares_memory(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0 || b.numel() == 0) return false;
  const auto [alo, ahi] = detail::byte_span(a);
  const auto [blo, bhi] = detail::byte_span(b);
  return alo < bhi && blo < ahi;
}

// `values` without leading dims of size 1 beyond the result's rank (x[i] = v
// accepts v of shape (1, n) for a result of shape (n,), as PyTorch does).
Tensor strip_leading_ones(const Tensor& values, int64_t rank) {
  Tensor v = values;
  while (v.dim() > rank && v.size(0) == 1) v = v.squeeze(0);
  return v;
}

// self[indices] = values (or +=), in place, not recorded.
void index_put_kernel(Tensor& self,
                      const std::vector<Tensor>& indices,
                      const Tensor& values,
                      bool accumulate) {
  STRIDE_CHECK(values.dtype() == self.dtype(), DTypeError,
               "[index_put_] values must have self's dtype ", to_string(self.dtype()), "; got ",
               to_string(values.dtype()), ". Hint: convert them with .to(self.dtype()).");
  IndexPlan plan = plan_index(self, indices, "index_put_");
  Tensor v = strip_leading_ones(values, int64_t(plan.shape.size()));
  bool broadcastable = v.dim() <= int64_t(plan.shape.size());
  for (int64_t k = 1; broadcastable && k <= v.dim(); ++k) {
    const int64_t want = plan.shape[plan.shape.size() - size_t(k)];
    broadcastable = v.size(-k) == 1 || v.size(-k) == want;
  }
  STRIDE_CHECK(broadcastable, ShapeError, "[index_put_] shape mismatch: value tensor of shape ",
               shape_str(values.sizes()), " cannot be broadcast to indexing result of shape ",
               shape_str(plan.shape), ".");
  // Values read from self (x[i] = x[j]) must be read before any is written.
  if (shares_memory(v, self)) v = v.clone();
  Tensor dst = plan.src;
  TensorIter iter = TensorIterConfig("index_put_")
                        .add_output(dst)
                        .add_input(v.expand(plan.shape))
                        .add_input(plan.offsets)
                        .check_all_same_dtype(false)
                        .check_mem_overlap(false)
                        .build();
  kernels::index_put(self.device(), iter, self.dtype(), accumulate);
}

// The gradient of values: the result's gradient at the indexed places,
// summed to values' shape where they were broadcast.
Tensor values_grad(const Tensor& g, const std::vector<Tensor>& indices, IntArrayRef values_shape) {
  Tensor picked = index(g, indices);
  while (picked.dim() < int64_t(values_shape.size())) picked = picked.unsqueeze(0);
  return detail::sum_to(picked, values_shape);
}

}  // namespace

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  std::vector<Tensor> expanded;
  auto forward = [&] {
    expanded = expand_indices(self, indices, "index");
    return index_kernel(self, expanded);
  };
  auto backward = [&](const Tensor&) {
    // Duplicated indices send their gradients to one element: they add up.
    return [shape = self.sizes().dims(), expanded](const autograd::Grads& gs) {
      return autograd::Grads{zeros(shape, gs[0].options()).index_put(expanded, gs[0], true)};
    };
  };
  return detail::apply(Op::index, {&self}, forward, backward);
}

Tensor index_put(const Tensor& self,
                 const std::vector<Tensor>& indices,
                 const Tensor& values,
                 bool accumulate) {
  std::vector<Tensor> expanded;
  auto forward = [&] {
    expanded = expand_indices(self, indices, "index_put_");
    Tensor out = self.clone();
    index_put_kernel(out, expanded, values, accumulate);
    return out;
  };
  auto backward = [&](const Tensor&) {
    return [expanded, accumulate, need_values = autograd::requires_grad(values),
            vshape = values.sizes().dims()](const autograd::Grads& gs) {
      const Tensor& g = gs[0];
      // Without accumulate the indexed elements of self were overwritten.
      Tensor self_grad = accumulate ? g : g.index_put(expanded, zeros({}, g.options()));
      return autograd::Grads{self_grad, need_values ? values_grad(g, expanded, vshape) : Tensor()};
    };
  };
  return detail::apply(Op::index_put, {&self, &values}, forward, backward);
}

// The positions of x's non-zero elements, read on the host as a mask's
// (their count is the result's shape): one row per element, in row-major
// order.
Tensor nonzero(const Tensor& x) {
  return detail::apply_without_grad(Op::nonzero, {&x}, [&] {
    const Tensor mask = x.ne(Scalar(0));
    if (x.dim() == 0) {
      const int64_t count = mask.item<bool>() ? 1 : 0;
      return empty({count, 0}, x.options().dtype(kInt64));
    }
    const std::vector<Tensor> positions = true_positions(mask);
    if (positions[0].numel() == 0) return empty({0, x.dim()}, x.options().dtype(kInt64));
    return stack(positions, 1);
  });
}

Tensor nonzero_static(const Tensor& x, int64_t size, int64_t fill_value) {
  detail::check_dtype_rule(Op::nonzero_static, x);
  STRIDE_CHECK(size >= 0, ValueError, "[nonzero_static] size must be non-negative; got ", size,
               ".");
  const TensorOptions index = x.options().dtype(kInt64);
  // The shape is (size, x.dim()) whatever the values: meta has no values to find.
  if (x.device().is_meta()) return empty({size, x.dim()}, index);
  const Tensor found = nonzero(x);
  const int64_t kept = std::min(size, found.size(0));
  return cat({found.narrow(0, 0, kept), full({size - kept, x.dim()}, fill_value, index)});
}

Tensor argwhere(const Tensor& x) {
  detail::check_dtype_rule(Op::argwhere, x);
  return nonzero(x);
}

Tensor Tensor::index(const std::vector<Tensor>& indices) const {
  return stride::index(*this, indices);
}

Tensor Tensor::index_put(const std::vector<Tensor>& indices,
                         const Tensor& values,
                         bool accumulate) const {
  return stride::index_put(*this, indices, values, accumulate);
}

Tensor& Tensor::index_put_(const std::vector<Tensor>& indices,
                           const Tensor& values,
                           bool accumulate) {
  return detail::apply_inplace(
      Op::index_put, *this, {&values},
      [&] { return stride::index_put(*this, indices, values, accumulate); },
      [&] {
        index_put_kernel(*this, expand_indices(*this, indices, "index_put_"), values, accumulate);
      });
}

}  // namespace stride
