// Tensor: a cheap, shared handle to a TensorImpl, which is a view (sizes,
// strides, storage offset, dtype) into a Storage. Copying a Tensor copies the
// handle, never the data; views share storage and version counter.
//
// Names follow libtorch so that a PyTorch user needs no manual for the basics.
// Methods are thin forwards to the free functions of ops.h.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "stride/device.h"
#include "stride/dtype.h"
#include "stride/scalar.h"
#include "stride/shape.h"
#include "stride/storage.h"

namespace stride {

class Generator;
class HookHandle;
class Tensor;
namespace autograd {
class Node;
}  // namespace autograd

struct TensorOptions {
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}   // NOLINT: zeros({2}, kFloat64)
  TensorOptions(Device d) : device_(d) {}      // NOLINT
  TensorOptions(DeviceType d) : device_(d) {}  // NOLINT

  TensorOptions dtype(ScalarType t) const {
    TensorOptions o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    TensorOptions o = *this;
    o.device_ = d;
    return o;
  }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return device_; }

 private:
  ScalarType dtype_ = kFloat32;
  Device device_ = default_device();
};

// A tensor's autograd state as core sees it (c10's AutogradMetaInterface):
// core owns it and frees it with the tensor, and only autograd, whose
// AutogradMeta implements it, knows what it holds; so core needs no autograd
// header. Core reads nothing through it yet, hence no virtuals beyond the
// destructor.
class AutogradMetaInterface {
 public:
  virtual ~AutogradMetaInterface() = default;
};

class TensorImpl {
 public:
  TensorImpl(Storage storage,
             ScalarType dtype,
             IntArrayRef sizes,
             IntArrayRef strides,
             int64_t storage_offset);
  TensorImpl(const TensorImpl&) = delete;
  TensorImpl& operator=(const TensorImpl&) = delete;

  const Storage& storage() const { return storage_; }
  ScalarType dtype() const { return dtype_; }
  Device device() const { return storage_->device(); }
  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t storage_offset() const { return storage_offset_; }
  int64_t numel() const { return numel_; }
  int64_t dim() const { return int64_t(sizes_.size()); }
  bool is_contiguous() const { return is_contiguous_; }
  // First element of this view; null on meta, which has no memory.
  void* data() const {
    char* base = static_cast<char*>(storage_->data());
    return base == nullptr ? nullptr : base + storage_offset_ * int64_t(element_size(dtype_));
  }
  // Re-points this impl at new memory; used to resize an empty out= tensor
  // in place so that every handle to it sees the result.
  void set_geometry(Storage storage,
                    IntArrayRef sizes,
                    IntArrayRef strides,
                    int64_t storage_offset);
  // Makes this impl view `src`'s memory with src's dtype and geometry,
  // keeping its own autograd state (PyTorch's Variable::set_data): how
  // Module::to(dtype) converts parameters that optimizers already hold.
  void set_data(const TensorImpl& src);

  // Autograd state; null for tensors that never took part in autograd.
  // Autograd reads it as its AutogradMeta (autograd::get_autograd_meta).
  AutogradMetaInterface* autograd_meta() const { return autograd_meta_.get(); }
  void set_autograd_meta(std::unique_ptr<AutogradMetaInterface> meta) {
    autograd_meta_ = std::move(meta);
  }
  // True for tensors made by a view op: they alias another tensor's memory.
  bool is_view() const { return is_view_; }
  void set_is_view(bool v) { is_view_ = v; }

 private:
  std::unique_ptr<AutogradMetaInterface> autograd_meta_;
  Storage storage_;
  DimVector sizes_;
  DimVector strides_;  // in elements
  int64_t storage_offset_;
  int64_t numel_;
  ScalarType dtype_;
  bool is_contiguous_;
  bool is_view_ = false;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return impl_ != nullptr; }
  TensorImpl* impl() const { return impl_.get(); }
  // True when both handles refer to the same TensorImpl.
  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }
  // Handles sharing this TensorImpl (libtorch's use_count): 1 means no one
  // else can see an in-place change made through this handle.
  long use_count() const { return impl_.use_count(); }

  // ---- metadata ----
  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return dim(); }
  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef shape() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t numel() const { return impl_->numel(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  ScalarType dtype() const { return impl_->dtype(); }
  Device device() const { return impl_->device(); }
  TensorOptions options() const { return TensorOptions(dtype()).device(device()); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_floating_point() const { return stride::is_floating_point(dtype()); }
  bool is_complex() const { return stride::is_complex(dtype()); }
  size_t element_size() const { return stride::element_size(dtype()); }
  size_t nbytes() const { return size_t(numel()) * element_size(); }
  const Storage& storage() const { return impl_->storage(); }
  uint64_t version() const { return impl_->storage()->version(); }

  void* data_ptr() const { return impl_->data(); }
  // Typed pointer to the first element; throws DTypeError if T is not the dtype.
  template <class T>
  T* data_ptr() const {
    check_dtype(scalar_type_of<T>, "data_ptr");
    return static_cast<T*>(impl_->data());
  }
  // The value of a one-element tensor.
  Scalar item() const;
  template <class T>
  T item() const {
    return item().to<T>();
  }
  // All elements in row-major order, converted to T.
  template <class T>
  std::vector<T> to_vector() const;

  std::string str() const;  // PyTorch-like printout

  // ---- autograd (see autograd.h) ----
  bool requires_grad() const;
  // Makes this leaf record (or stop recording) operations on it.
  Tensor& requires_grad_(bool requires_grad = true);
  // True for tensors not produced by a recorded op (user-created tensors).
  bool is_leaf() const;
  // The accumulated gradient of a leaf (or of a non-leaf after retain_grad());
  // undefined until a backward reaches it.
  const Tensor& grad() const;
  Tensor& mutable_grad();
  std::shared_ptr<autograd::Node> grad_fn() const;
  uint32_t output_nr() const;
  // A tensor sharing storage (and version counter) but outside the graph.
  Tensor detach() const;
  Tensor& detach_();
  // Keeps the gradient of this non-leaf in .grad during backward.
  void retain_grad();
  bool retains_grad() const;
  // Backpropagates from this tensor; `gradient` may be omitted for scalars.
  void backward(const Tensor& gradient = {},
                std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  // Calls `hook(grad)` when the gradient of this tensor is computed; a
  // defined return value replaces the gradient. Hooks run in registration
  // order.
  HookHandle register_hook(std::function<Tensor(const Tensor&)> hook);
  // Leaves only: calls `hook(*this)` each time backward has accumulated a
  // gradient into this tensor's .grad (torch's
  // register_post_accumulate_grad_hook), e.g. to start reducing it.
  HookHandle register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook);
  bool is_view() const { return impl_->is_view(); }

  // ---- views (never copy) ----
  Tensor view(IntArrayRef shape) const;
  Tensor reshape(IntArrayRef shape) const;  // a view when strides allow, else a copy
  Tensor transpose(int64_t dim0, int64_t dim1) const;
  Tensor t() const;
  Tensor permute(IntArrayRef dims) const;
  Tensor narrow(int64_t dim, int64_t start, int64_t length) const;
  Tensor slice(int64_t dim,
               std::optional<int64_t> start = std::nullopt,
               std::optional<int64_t> end = std::nullopt,
               int64_t step = 1) const;
  Tensor select(int64_t dim, int64_t index) const;
  Tensor operator[](int64_t index) const { return select(0, index); }
  Tensor unsqueeze(int64_t dim) const;
  Tensor squeeze() const;
  Tensor squeeze(int64_t dim) const;
  Tensor expand(IntArrayRef shape) const;
  Tensor expand_as(const Tensor& other) const;
  Tensor flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor as_strided(IntArrayRef sizes,
                    IntArrayRef strides,
                    std::optional<int64_t> storage_offset = std::nullopt) const;
  std::vector<Tensor> chunk(int64_t chunks, int64_t dim = 0) const;
  std::vector<Tensor> split(int64_t split_size, int64_t dim = 0) const;
  // The views x.select(dim, i) for every i, as torch.unbind.
  std::vector<Tensor> unbind(int64_t dim = 0) const;
  Tensor diagonal(int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1) const;
  // Every window of `size` elements along `dim`, `step` apart, as a new last
  // dim of that size (torch.Tensor.unfold); windows may overlap.
  Tensor unfold(int64_t dim, int64_t size, int64_t step) const;
  // Reshapes this tensor in place to a contiguous `size`, keeping its memory
  // where it holds enough elements, else moving to new memory that starts
  // with a copy of the old (torch.Tensor.resize_). Refuses tensors that
  // require grad, as PyTorch does.
  Tensor& resize_(IntArrayRef size);
  Tensor& resize_as_(const Tensor& other);

  // ---- copies ----
  Tensor contiguous() const;  // self when already contiguous
  Tensor clone() const;
  Tensor& copy_(const Tensor& src);   // broadcasts and converts src into self
  Tensor to(ScalarType dtype) const;  // self when already that dtype
  Tensor to(Device device) const;

  // ---- elementwise ----
  Tensor add(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor add(const Scalar& other) const;
  Tensor sub(const Tensor& other, const Scalar& alpha = 1) const;
  Tensor sub(const Scalar& other) const;
  Tensor mul(const Tensor& other) const;
  Tensor mul(const Scalar& other) const;
  Tensor div(const Tensor& other) const;
  Tensor div(const Scalar& other) const;
  Tensor pow(const Tensor& exponent) const;
  Tensor pow(const Scalar& exponent) const;
  Tensor maximum(const Tensor& other) const;
  Tensor minimum(const Tensor& other) const;
  Tensor fmod(const Tensor& other) const;
  Tensor fmod(const Scalar& other) const;
  Tensor remainder(const Tensor& other) const;
  Tensor remainder(const Scalar& other) const;
  std::pair<Tensor, Tensor> frexp() const;
  Tensor& add_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& add_(const Scalar& other);
  Tensor& sub_(const Tensor& other, const Scalar& alpha = 1);
  Tensor& sub_(const Scalar& other);
  Tensor& mul_(const Tensor& other);
  Tensor& mul_(const Scalar& other);
  Tensor& div_(const Tensor& other);
  Tensor& div_(const Scalar& other);
  Tensor& pow_(const Scalar& exponent);
  Tensor& fmod_(const Tensor& other);
  Tensor& fmod_(const Scalar& other);
  Tensor& remainder_(const Tensor& other);
  Tensor& remainder_(const Scalar& other);

#define STRIDE_UNARY_METHODS(name) \
  Tensor name() const;             \
  Tensor& name##_();
  STRIDE_UNARY_METHODS(neg)
  STRIDE_UNARY_METHODS(abs)
  STRIDE_UNARY_METHODS(exp)
  STRIDE_UNARY_METHODS(log)
  STRIDE_UNARY_METHODS(sqrt)
  STRIDE_UNARY_METHODS(rsqrt)
  STRIDE_UNARY_METHODS(sin)
  STRIDE_UNARY_METHODS(cos)
  STRIDE_UNARY_METHODS(tanh)
  STRIDE_UNARY_METHODS(sigmoid)
  STRIDE_UNARY_METHODS(relu)
  STRIDE_UNARY_METHODS(silu)
  STRIDE_UNARY_METHODS(gelu)
  STRIDE_UNARY_METHODS(square)
  STRIDE_UNARY_METHODS(reciprocal)
  STRIDE_UNARY_METHODS(expm1)
  STRIDE_UNARY_METHODS(log1p)
  STRIDE_UNARY_METHODS(log2)
  STRIDE_UNARY_METHODS(log10)
  STRIDE_UNARY_METHODS(exp2)
  STRIDE_UNARY_METHODS(tan)
  STRIDE_UNARY_METHODS(asin)
  STRIDE_UNARY_METHODS(acos)
  STRIDE_UNARY_METHODS(atan)
  STRIDE_UNARY_METHODS(sinh)
  STRIDE_UNARY_METHODS(cosh)
  STRIDE_UNARY_METHODS(asinh)
  STRIDE_UNARY_METHODS(acosh)
  STRIDE_UNARY_METHODS(atanh)
  STRIDE_UNARY_METHODS(erf)
  STRIDE_UNARY_METHODS(erfc)
  STRIDE_UNARY_METHODS(sign)
  STRIDE_UNARY_METHODS(floor)
  STRIDE_UNARY_METHODS(ceil)
  STRIDE_UNARY_METHODS(round)
  STRIDE_UNARY_METHODS(trunc)
  STRIDE_UNARY_METHODS(frac)
  STRIDE_UNARY_METHODS(lgamma)
  STRIDE_UNARY_METHODS(digamma)
  STRIDE_UNARY_METHODS(erfinv)
  STRIDE_UNARY_METHODS(i0)
  STRIDE_UNARY_METHODS(sinc)
#undef STRIDE_UNARY_METHODS

  Tensor clamp(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt) const;
  Tensor& clamp_(std::optional<Scalar> min, std::optional<Scalar> max = std::nullopt);
  Tensor masked_fill(const Tensor& mask, const Scalar& value) const;
  Tensor& masked_fill_(const Tensor& mask, const Scalar& value);
  Tensor isnan() const;
  Tensor isinf() const;
  Tensor isfinite() const;
  Tensor tril(int64_t diagonal = 0) const;
  Tensor triu(int64_t diagonal = 0) const;
  Tensor& tril_(int64_t diagonal = 0);
  Tensor& triu_(int64_t diagonal = 0);

  Tensor atan2(const Tensor& other) const;
  Tensor hypot(const Tensor& other) const;
  Tensor logaddexp(const Tensor& other) const;
  Tensor logaddexp2(const Tensor& other) const;
  Tensor copysign(const Tensor& other) const;
  Tensor xlogy(const Tensor& other) const;
  Tensor igamma(const Tensor& other) const;
  Tensor igammac(const Tensor& other) const;
  Tensor nextafter(const Tensor& other) const;
  Tensor polygamma(int64_t n) const;
  // The integer ops (ops.h), with a tensor or a number on the right.
  Tensor bitwise_and(const Tensor& other) const;
  Tensor bitwise_or(const Tensor& other) const;
  Tensor bitwise_xor(const Tensor& other) const;
  Tensor bitwise_left_shift(const Tensor& other) const;
  Tensor bitwise_right_shift(const Tensor& other) const;
  Tensor gcd(const Tensor& other) const;
  Tensor lcm(const Tensor& other) const;
  Tensor bitwise_and(const Scalar& other) const;
  Tensor bitwise_or(const Scalar& other) const;
  Tensor bitwise_xor(const Scalar& other) const;
  Tensor bitwise_left_shift(const Scalar& other) const;
  Tensor bitwise_right_shift(const Scalar& other) const;
  Tensor gcd(const Scalar& other) const;
  Tensor lcm(const Scalar& other) const;
  Tensor bitwise_not() const;
  Tensor& bitwise_and_(const Tensor& other);
  Tensor& bitwise_or_(const Tensor& other);
  Tensor& bitwise_xor_(const Tensor& other);
  Tensor& bitwise_left_shift_(const Tensor& other);
  Tensor& bitwise_right_shift_(const Tensor& other);
  Tensor& gcd_(const Tensor& other);
  Tensor& lcm_(const Tensor& other);
  Tensor& bitwise_and_(const Scalar& other);
  Tensor& bitwise_or_(const Scalar& other);
  Tensor& bitwise_xor_(const Scalar& other);
  Tensor& bitwise_left_shift_(const Scalar& other);
  Tensor& bitwise_right_shift_(const Scalar& other);
  Tensor& gcd_(const Scalar& other);
  Tensor& lcm_(const Scalar& other);
  Tensor& bitwise_not_();
  Tensor eq(const Tensor& other) const;
  Tensor ne(const Tensor& other) const;
  Tensor lt(const Tensor& other) const;
  Tensor le(const Tensor& other) const;
  Tensor gt(const Tensor& other) const;
  Tensor ge(const Tensor& other) const;
  Tensor eq(const Scalar& other) const;
  Tensor ne(const Scalar& other) const;
  Tensor lt(const Scalar& other) const;
  Tensor le(const Scalar& other) const;
  Tensor gt(const Scalar& other) const;
  Tensor ge(const Scalar& other) const;

  // In-place updates used by optimizers; correct for every layout of self.
  Tensor& lerp_(const Tensor& end, const Scalar& weight);
  Tensor& addcmul_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
  Tensor& addcdiv_(const Tensor& t1, const Tensor& t2, const Scalar& value = 1);

  // Fills (in place, every layout).
  Tensor& fill_(const Scalar& value);
  Tensor& zero_();
  Tensor& uniform_(double from = 0, double to = 1, Generator* gen = nullptr);
  Tensor& normal_(double mean = 0, double std = 1, Generator* gen = nullptr);
  // Integers uniform in [from, to).
  Tensor& random_(int64_t from, int64_t to, Generator* gen = nullptr);
  Tensor& bernoulli_(double p = 0.5, Generator* gen = nullptr);

  // ---- reductions ----
  Tensor sum(std::optional<ScalarType> dtype = std::nullopt) const;
  Tensor sum(IntArrayRef dims, bool keepdim = false) const;
  Tensor mean() const;
  Tensor mean(IntArrayRef dims, bool keepdim = false) const;
  // Sample variance over all elements. (No var(int64_t) overload: with one,
  // x.var({2}) would silently mean "correction 2"; write x.var({}, 0).)
  Tensor var() const;
  Tensor var(IntArrayRef dims, double correction = 1, bool keepdim = false) const;
  Tensor max() const;
  std::pair<Tensor, Tensor> max(int64_t dim, bool keepdim = false) const;  // (values, indices)
  Tensor min() const;
  std::pair<Tensor, Tensor> min(int64_t dim, bool keepdim = false) const;
  Tensor amax(IntArrayRef dims, bool keepdim = false) const;
  Tensor amin(IntArrayRef dims, bool keepdim = false) const;
  Tensor argmax(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor argmin(std::optional<int64_t> dim = std::nullopt, bool keepdim = false) const;
  Tensor logsumexp(IntArrayRef dims, bool keepdim = false) const;
  Tensor norm(double p = 2) const;
  Tensor norm(double p, IntArrayRef dims, bool keepdim = false) const;

  // ---- linear algebra ----
  Tensor matmul(const Tensor& other) const;
  Tensor mm(const Tensor& other) const;
  Tensor bmm(const Tensor& other) const;

  // ---- indexing ----
  Tensor index_select(int64_t dim, const Tensor& index) const;
  Tensor flip(IntArrayRef dims) const;
  Tensor roll(IntArrayRef shifts, IntArrayRef dims = {}) const;
  Tensor outer(const Tensor& other) const;
  Tensor all(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor any(IntArrayRef dims = {}, bool keepdim = false) const;
  Tensor cumsum(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  // ---- complex (ops.h has the free forms) ----
  Tensor real() const;
  Tensor imag() const;
  Tensor conj() const;
  Tensor angle() const;
  Tensor cumprod(int64_t dim, std::optional<ScalarType> dtype = std::nullopt) const;
  std::pair<Tensor, Tensor> sort(int64_t dim = -1,
                                 bool descending = false,
                                 bool stable = false) const;
  Tensor argsort(int64_t dim = -1, bool descending = false, bool stable = false) const;
  std::pair<Tensor, Tensor> topk(int64_t k,
                                 int64_t dim = -1,
                                 bool largest = true,
                                 bool sorted = true) const;
  Tensor multinomial(int64_t num_samples, bool replacement = false, Generator* gen = nullptr) const;
  Tensor gather(int64_t dim, const Tensor& index) const;
  Tensor scatter_add(int64_t dim, const Tensor& index, const Tensor& src) const;
  Tensor& scatter_add_(int64_t dim, const Tensor& index, const Tensor& src);
  // Advanced indexing (stride::index, stride::index_put in ops.h); index_put_
  // writes into self.
  Tensor index(const std::vector<Tensor>& indices) const;
  Tensor index_put(const std::vector<Tensor>& indices,
                   const Tensor& values,
                   bool accumulate = false) const;
  Tensor& index_put_(const std::vector<Tensor>& indices,
                     const Tensor& values,
                     bool accumulate = false);

  Tensor softmax(int64_t dim) const;
  Tensor log_softmax(int64_t dim) const;

 private:
  void check_dtype(ScalarType expected, const char* op) const;
  std::shared_ptr<TensorImpl> impl_;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

}  // namespace stride
