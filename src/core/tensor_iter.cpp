#include "core/tensor_iter.h"

#include <algorithm>

#include "core/check.h"
#include "core/overlap.h"
#include "stride/factory.h"
#include "stride/parallel.h"

namespace stride {

TensorIterConfig& TensorIterConfig::add_output(Tensor& out) {
  STRIDE_ASSERT(ninputs_ == 0, "outputs must be added before inputs");
  STRIDE_ASSERT(noutputs_ < kMaxIterOperands, "too many operands");
  outputs_[size_t(noutputs_++)] = &out;
  return *this;
}

TensorIterConfig& TensorIterConfig::add_input(const Tensor& in) {
  STRIDE_ASSERT(noutputs_ + ninputs_ < kMaxIterOperands, "too many operands");
  STRIDE_CHECK(in.defined(), ValueError, "[", op_, "] an input tensor is undefined.");
  inputs_[size_t(ninputs_++)] = in;
  return *this;
}

TensorIter TensorIterConfig::build() {
  TensorIter iter;
  iter.build(*this);
  return iter;
}

// What build() works out before the iterator's own members are final; it
// lives on build()'s stack, so the steps share it without allocating.
struct TensorIter::Plan {
  DimVector shape;  // the broadcast shape, outermost dim first
  ScalarType common_dtype = kFloat32;
  Device device = Device(kCPU);
  // Outputs that build() allocates: undefined ones and empty out= tensors.
  std::array<bool, kMaxIterOperands> allocate{};
  SmallVector<size_t, 8> perm;  // iteration dim i is dim perm[i] of shape_ before reordering
};

// The shape comes from the inputs only; outputs must match it.
inline void TensorIter::compute_shape(const TensorIterConfig& c, Plan& plan) {
  const char* op = c.op_;
  DimVector& shape = plan.shape;
  if (c.static_shape_) {
    shape = *c.static_shape_;
    for (int i = 0; i < c.ninputs_; ++i) {
      const Tensor& in = c.inputs_[size_t(i)];
      STRIDE_CHECK(broadcast_shapes(shape, in.sizes(), op) == shape, ShapeError, "[", op,
                   "] input ", shape_str(in.sizes()), " cannot be broadcast to ", shape_str(shape),
                   ".");
    }
  } else if (c.ninputs_ == 0) {
    STRIDE_ASSERT(c.outputs_[0]->defined(), "no inputs and no shape");
    shape = c.outputs_[0]->sizes().dims();
  } else if (c.is_reduction_) {
    shape = c.inputs_[0].sizes().dims();
  } else {
    shape = c.inputs_[0].sizes().dims();
    for (int i = 1; i < c.ninputs_; ++i)
      shape = broadcast_shapes(shape, c.inputs_[size_t(i)].sizes(), op);
  }
}

// Every defined operand must be on one device, which allocated outputs then
// share. Which devices have kernels is the kernels' business, not this one's.
inline void TensorIter::compute_device(const TensorIterConfig& c, Plan& plan) {
  bool found = false;
  auto check = [&](const Tensor& t) {
    if (!found) {
      plan.device = t.device();
      found = true;
      return;
    }
    STRIDE_CHECK(t.device() == plan.device, DeviceError, "[", c.op_,
                 "] expected all tensors on one device; got ", plan.device.str(), " and ",
                 t.device().str(), ". Hint: move them to one device with .to(device).");
  };
  for (int i = 0; i < c.ninputs_; ++i) check(c.inputs_[size_t(i)]);
  for (int i = 0; i < noutputs_; ++i) {
    if (c.outputs_[size_t(i)]->defined()) check(*c.outputs_[size_t(i)]);
  }
}

// Checks that inputs share a dtype (unless the op asked not to) and picks the
// dtype of the result.
inline void TensorIter::compute_types(const TensorIterConfig& c, Plan& plan) {
  for (int i = 0; c.check_same_dtype_ && i < c.ninputs_; ++i) {
    const Tensor& in = c.inputs_[size_t(i)];
    STRIDE_CHECK(in.dtype() == c.inputs_[0].dtype(), DTypeError, "[", c.op_,
                 "] expected inputs of one dtype; got ", to_string(c.inputs_[0].dtype()), " and ",
                 to_string(in.dtype()), ". Hint: convert with .to(dtype).");
  }
  plan.common_dtype = c.output_dtype_
                          ? *c.output_dtype_
                          : (c.ninputs_ > 0 ? c.inputs_[0].dtype() : c.outputs_[0]->dtype());
}

// Checks the shape and dtype of given outputs, or marks them for allocation
// (Note [Output layout]); a given output is about to be written, so its
// version moves.
inline void TensorIter::check_outputs(const TensorIterConfig& c, Plan& plan) {
  const char* op = c.op_;
  const DimVector& shape = plan.shape;
  const ScalarType common = plan.common_dtype;
  for (int i = 0; i < noutputs_; ++i) {
    Tensor& out = *c.outputs_[size_t(i)];
    if (!out.defined()) {
      STRIDE_ASSERT(!c.is_reduction_, "reduction outputs are allocated by the op");
      plan.allocate[size_t(i)] = true;
      continue;
    }
    if (c.check_same_dtype_ || c.output_dtype_) {
      STRIDE_CHECK(out.dtype() == common, DTypeError, "[", op, "] out has dtype ",
                   to_string(out.dtype()), " but the result is ", to_string(common),
                   ". Hint: pass an out tensor of dtype ", to_string(common), ".");
    }
    if (c.is_reduction_) {
      bool ok = out.dim() == int64_t(shape.size());
      for (size_t d = 0; ok && d < shape.size(); ++d) {
        ok = out.sizes()[d] == shape[d] || out.sizes()[d] == 1;
      }
      STRIDE_ASSERT(ok, "reduction output ", shape_str(out.sizes()), " does not fit input ",
                    shape_str(shape));
    } else if (!(out.sizes() == IntArrayRef(shape))) {
      STRIDE_CHECK(out.numel() == 0, ShapeError, "[", op, "] out ", shape_str(out.sizes()),
                   " does not match the broadcast shape ", shape_str(shape),
                   "; outputs with elements are never resized (in-place ops cannot broadcast "
                   "their self). Hint: pass an out of shape ",
                   shape_str(shape), ".");
      plan.allocate[size_t(i)] = true;  // resized later, like a new output
      continue;
    }
    out.storage()->bump_version();  // a write to an existing tensor
  }
}

// Outputs about to be allocated overlap nothing, so only given ones are checked.
inline void TensorIter::check_overlap(const TensorIterConfig& c, const Plan& plan) const {
  const char* op = c.op_;
  for (int i = 0; i < noutputs_; ++i) {
    if (plan.allocate[size_t(i)]) continue;
    const Tensor& out = *c.outputs_[size_t(i)];
    STRIDE_CHECK(!detail::has_internal_overlap(out), OverlapError, "[", op, "] the output (shape ",
                 shape_str(out.sizes()), ", strides ", shape_str(out.strides()),
                 ") has several elements at one memory location (e.g. an expanded view), so "
                 "writing it is ill-defined. Hint: clone() it first.");
    for (int j = 0; j < c.ninputs_; ++j) {
      STRIDE_CHECK(!detail::partially_overlap(out, c.inputs_[size_t(j)]), OverlapError, "[", op,
                   "] the output partially overlaps input ", j,
                   " in memory, so results would depend on the order of writes. Hint: clone() "
                   "the input first.");
    }
  }
}

// Fills operands_ and their byte strides aligned to the shape, innermost dim
// first, 0 for broadcast dims. An output still to be allocated gets zeros
// here and its strides once the dim order is known.
inline void TensorIter::compute_strides(const TensorIterConfig& c, const Plan& plan) {
  const DimVector& shape = plan.shape;
  const size_t n = shape.size();
  for (int k = 0; k < ntensors_; ++k) {
    DimVector st(n);
    if (k < noutputs_ && plan.allocate[size_t(k)]) {
      strides_[size_t(k)] = std::move(st);
      continue;
    }
    operands_[size_t(k)] =
        k < noutputs_ ? *c.outputs_[size_t(k)] : c.inputs_[size_t(k - noutputs_)];
    const Tensor& t = operands_[size_t(k)];
    const int64_t elsize = int64_t(t.element_size());
    const size_t lead = n - size_t(t.dim());
    for (size_t i = 0; i < n; ++i) {
      const size_t d = n - 1 - i;  // reverse: innermost first
      if (d < lead) {
        st[i] = 0;
      } else {
        const size_t j = d - lead;
        st[i] = (t.sizes()[j] == 1 && shape[d] != 1) ? 0 : t.strides()[j] * elsize;
      }
    }
    strides_[size_t(k)] = std::move(st);
  }
  shape_ = DimVector(shape.rbegin(), shape.rend());
  numel_ = numel_of(shape_);
}

inline bool TensorIter::is_reduced(size_t d) const {
  return is_reduction_ && strides_[0][d] == 0;
}

// For dim a placed inside dim b: > 0 when b should be inside a instead, < 0
// when a is rightly inside, 0 when undecided. The first operand whose strides
// tell the dims apart decides (outputs still to be allocated have no say,
// broadcast dims tell nothing); equal strides put the smaller dim inside.
inline int TensorIter::compare_dims(const Plan& plan, size_t a, size_t b) const {
  if (is_reduced(a) != is_reduced(b)) return is_reduced(b) ? 1 : -1;
  const int first = is_reduced(a) ? noutputs_ : 0;  // reduced dims follow the input
  for (int k = first; k < ntensors_; ++k) {
    if (k < noutputs_ && plan.allocate[size_t(k)]) continue;
    const int64_t sa = strides_[size_t(k)][a], sb = strides_[size_t(k)][b];
    if (sa == 0 || sb == 0) continue;
    if (sa != sb) return sa < sb ? -1 : 1;
    if (shape_[a] > shape_[b]) return 1;
  }
  return 0;
}

// Orders dims as PyTorch's reorder_dimensions: reduced dims innermost
// (reductions), then by strides (compare_dims); undecided pairs keep the
// row-major order. Records the permutation for allocate_or_resize_outputs.
inline void TensorIter::reorder_dimensions(Plan& plan) {
  const size_t n = shape_.size();
  SmallVector<size_t, 8>& perm = plan.perm;
  for (size_t i = 0; i < n; ++i) perm.push_back(i);
  // PyTorch's insertion sort: it steps over undecided dims (the comparison
  // need not be a strict weak order), swapping with the first dim that decides.
  for (size_t i = 1; i < n; ++i) {
    size_t at = i;
    for (size_t j = i; j-- > 0;) {
      const int cmp = compare_dims(plan, perm[j], perm[at]);
      if (cmp > 0) {
        std::swap(perm[j], perm[at]);
        at = j;
      } else if (cmp < 0) {
        break;
      }
    }
  }
  DimVector sh(n);
  for (size_t i = 0; i < n; ++i) sh[i] = shape_[perm[i]];
  for (int k = 0; k < ntensors_; ++k) {
    DimVector st(n);
    for (size_t i = 0; i < n; ++i) st[i] = strides_[size_t(k)][perm[i]];
    strides_[size_t(k)] = std::move(st);
  }
  shape_ = std::move(sh);
}

// Allocates outputs dense in the chosen dim order (Note [Output layout]); an
// out= with no elements is resized in place so every handle to it sees the
// result.
inline void TensorIter::allocate_or_resize_outputs(TensorIterConfig& c, const Plan& plan) {
  const DimVector& shape = plan.shape;
  const SmallVector<size_t, 8>& perm = plan.perm;
  const size_t n = shape.size();
  bool row_major = true;
  for (size_t i = 0; i < n; ++i) row_major = row_major && perm[i] == i;
  for (int k = 0; k < noutputs_; ++k) {
    if (!plan.allocate[size_t(k)]) continue;
    Tensor& out = *c.outputs_[size_t(k)];
    const TensorOptions options =
        TensorOptions(out.defined() ? out.dtype() : plan.common_dtype).device(plan.device);
    Tensor fresh;
    if (row_major || numel_ == 0) {
      fresh = empty(shape, options);
    } else {
      DimVector st(n);
      int64_t next = 1;
      for (size_t i = 0; i < n; ++i) {
        st[n - 1 - perm[i]] = next;
        next *= shape_[i];
      }
      fresh = empty_strided(shape, st, options);
    }
    if (out.defined()) {
      out.impl()->set_geometry(fresh.storage(), fresh.sizes(), fresh.strides(), 0);
      out.storage()->bump_version();
    } else {
      out = fresh;
    }
    operands_[size_t(k)] = out;
    for (size_t i = 0; i < n; ++i)
      strides_[size_t(k)][i] = out.strides()[n - 1 - perm[i]] * int64_t(out.element_size());
  }
}

// Size-1 dims move no pointer, so they are dropped (unless the iteration is
// empty, where shapes still tell the kernel nothing runs).
inline void TensorIter::drop_size_one_dimensions() {
  if (numel_ > 0) {
    size_t w = 0;
    for (size_t i = 0; i < shape_.size(); ++i) {
      if (shape_[i] == 1) continue;
      shape_[w] = shape_[i];
      for (int k = 0; k < ntensors_; ++k) strides_[size_t(k)][w] = strides_[size_t(k)][i];
      ++w;
    }
    shape_.resize(w);
    for (int k = 0; k < ntensors_; ++k) strides_[size_t(k)].resize(w);
  }
  nreduce_ = 0;
  for (size_t i = 0; i < shape_.size(); ++i) nreduce_ += is_reduced(i) ? 1 : 0;
}

// Merges neighbouring dims that every operand walks as one, so kernels see
// as few and as long runs as possible.
inline void TensorIter::coalesce_dimensions() {
  if (numel_ == 0 || shape_.size() <= 1) return;
  size_t w = 0;
  int nreduce = is_reduced(0) ? 1 : 0;
  for (size_t i = 1; i < shape_.size(); ++i) {
    bool can = is_reduced(i) == is_reduced(w);
    for (int k = 0; can && k < ntensors_; ++k) {
      can = strides_[size_t(k)][i] == shape_[w] * strides_[size_t(k)][w];
    }
    if (can) {
      shape_[w] *= shape_[i];
      continue;
    }
    ++w;
    shape_[w] = shape_[i];
    for (int k = 0; k < ntensors_; ++k) strides_[size_t(k)][w] = strides_[size_t(k)][i];
    nreduce += is_reduced(w) ? 1 : 0;
  }
  shape_.resize(w + 1);
  for (int k = 0; k < ntensors_; ++k) strides_[size_t(k)].resize(w + 1);
  nreduce_ = nreduce;
}

// Splits the elements into output elements and reduced blocks; a single
// element still gets one dim, since kernels walk at least one.
inline void TensorIter::compute_reduction_sizes() {
  if (shape_.empty()) {
    shape_.push_back(1);
    for (int k = 0; k < ntensors_; ++k)
      strides_[size_t(k)].push_back(int64_t(operands_[size_t(k)].element_size()));
  }
  reduce_numel_ = 1;
  output_numel_ = 1;
  for (int d = 0; d < int(shape_.size()); ++d)
    (d < nreduce_ ? reduce_numel_ : output_numel_) *= shape_[size_t(d)];
}

// The steps above are `inline` because the library is built as position-
// independent code, where an exported member function is never inlined and
// the calls cost small ops about a tenth of their time.
//
// The order follows PyTorch's TensorIteratorBase::build: shape and types
// first, then outputs (checked or marked for allocation), overlap, operand
// strides, dim order, allocation in that order, and last the simplification
// of the dims that the kernels walk.
void TensorIter::build(TensorIterConfig& c) {
  noutputs_ = c.noutputs_;
  ntensors_ = c.noutputs_ + c.ninputs_;
  is_reduction_ = c.is_reduction_;
  STRIDE_ASSERT(noutputs_ > 0, "a TensorIter needs an output");
  Plan plan;
  compute_shape(c, plan);
  compute_device(c, plan);
  compute_types(c, plan);
  check_outputs(c, plan);
  if (c.check_overlap_) check_overlap(c, plan);
  compute_strides(c, plan);
  reorder_dimensions(plan);
  allocate_or_resize_outputs(c, plan);
  for (int k = 0; k < ntensors_; ++k)
    data_[size_t(k)] = static_cast<char*>(operands_[size_t(k)].data_ptr());
  drop_size_one_dimensions();
  coalesce_dimensions();
  compute_reduction_sizes();
}

bool TensorIter::is_contiguous() const {
  if (shape_.size() != 1) return false;
  for (int k = 0; k < ntensors_; ++k) {
    if (strides_[size_t(k)][0] != int64_t(operands_[size_t(k)].element_size())) return false;
  }
  return true;
}

void TensorIter::serial_for_each(Loop loop, int64_t begin, int64_t end) const {
  if (begin >= end) return;
  std::array<char*, kMaxIterOperands> ptrs;
  std::array<int64_t, kMaxIterOperands> inner;
  for (int k = 0; k < ntensors_; ++k) inner[size_t(k)] = strides_[size_t(k)][0];
  const size_t nd = shape_.size();
  if (nd == 1) {
    for (int k = 0; k < ntensors_; ++k)
      ptrs[size_t(k)] = data_[size_t(k)] + begin * inner[size_t(k)];
    loop(ptrs.data(), inner.data(), end - begin);
    return;
  }
  DimVector idx(nd);
  int64_t rem = begin;
  for (size_t d = 0; d < nd; ++d) {
    idx[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    for (int k = 0; k < ntensors_; ++k) {
      char* p = data_[size_t(k)];
      const int64_t* st = strides_[size_t(k)].data();
      for (size_t d = 0; d < nd; ++d) p += idx[d] * st[d];
      ptrs[size_t(k)] = p;
    }
    const int64_t cnt = std::min(shape_[0] - idx[0], end - pos);
    loop(ptrs.data(), inner.data(), cnt);
    pos += cnt;
    idx[0] += cnt;
    for (size_t d = 0; d + 1 < nd && idx[d] == shape_[d]; ++d) {
      idx[d] = 0;
      ++idx[d + 1];
    }
  }
}

void TensorIter::for_each(Loop loop, int64_t grain) const {
  if (numel_ == 0) return;
  parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { serial_for_each(loop, b, e); });
}

void TensorIter::reduction_ptrs(int64_t o, char** out_ptrs, const char** in_ptr) const {
  std::array<char*, kMaxIterOperands> ptrs = data_;
  for (size_t d = size_t(nreduce_); d < shape_.size(); ++d) {
    const int64_t i = o % shape_[d];
    o /= shape_[d];
    for (int k = 0; k <= noutputs_; ++k) ptrs[size_t(k)] += i * strides_[size_t(k)][d];
  }
  for (int k = 0; k < noutputs_; ++k) out_ptrs[k] = ptrs[size_t(k)];
  *in_ptr = ptrs[size_t(noutputs_)];
}

void TensorIter::for_each_run(const char* in_ptr,
                              int64_t begin,
                              int64_t end,
                              FunctionRef<void(const char*, int64_t, int64_t)> run) const {
  if (begin >= end) return;
  const int64_t* st = strides_[size_t(noutputs_)].data();
  if (nreduce_ == 0) {  // one element per output
    run(in_ptr, 0, end - begin);
    return;
  }
  const size_t nd = size_t(nreduce_);
  if (nd == 1) {
    run(in_ptr + begin * st[0], st[0], end - begin);
    return;
  }
  DimVector idx(nd);
  int64_t rem = begin;
  for (size_t d = 0; d < nd; ++d) {
    idx[d] = rem % shape_[d];
    rem /= shape_[d];
  }
  int64_t pos = begin;
  while (pos < end) {
    const char* p = in_ptr;
    for (size_t d = 0; d < nd; ++d) p += idx[d] * st[d];
    const int64_t cnt = std::min(shape_[0] - idx[0], end - pos);
    run(p, st[0], cnt);
    pos += cnt;
    idx[0] += cnt;
    for (size_t d = 0; d + 1 < nd && idx[d] == shape_[d]; ++d) {
      idx[d] = 0;
      ++idx[d + 1];
    }
  }
}

}  // namespace stride
