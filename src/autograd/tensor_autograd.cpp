// Tensor's autograd methods.
#include "autograd/node.h"
#include "core/check.h"
#include "core/tensor_impl_utils.h"
#include "stride/autograd.h"

namespace stride {

using autograd::AutogradMeta;
using autograd::get_autograd_meta;
using autograd::materialize_autograd_meta;

bool Tensor::requires_grad() const {
  return autograd::requires_grad(*this);
}

Tensor& Tensor::requires_grad_(bool requires_grad) {
  AutogradMeta* m = get_autograd_meta(*impl_);
  STRIDE_CHECK(!(m && m->grad_fn) || requires_grad, Error,
               "[requires_grad_] you can only change requires_grad of leaf tensors. Hint: use "
               "detach() to get a leaf that does not require grad.");
  STRIDE_CHECK(!requires_grad || is_floating_point() || is_complex(), DTypeError,
               "[requires_grad_] only floating-point and complex tensors can require gradients; "
               "got ",
               to_string(dtype()), ".");
  if (!m && !requires_grad) return *this;
  materialize_autograd_meta(*impl_).requires_grad = requires_grad;
  return *this;
}

bool Tensor::is_leaf() const {
  AutogradMeta* m = get_autograd_meta(*impl_);
  return !m || !m->grad_fn;
}

const Tensor& Tensor::grad() const {
  static const Tensor undefined;
  AutogradMeta* m = get_autograd_meta(*impl_);
  return m ? m->grad : undefined;
}

Tensor& Tensor::mutable_grad() {
  return materialize_autograd_meta(*impl_).grad;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  AutogradMeta* m = get_autograd_meta(*impl_);
  return m ? m->grad_fn : nullptr;
}

uint32_t Tensor::output_nr() const {
  AutogradMeta* m = get_autograd_meta(*impl_);
  return m ? m->output_nr : 0;
}

Tensor Tensor::detach() const {
  Tensor t = detail::make_view(*this, sizes(), strides(), storage_offset());
  t.impl()->set_is_view(is_view());
  return t;
}

Tensor& Tensor::detach_() {
  STRIDE_CHECK(!is_view() || !requires_grad(), Error,
               "[detach_] cannot detach a view in place. Hint: use detach().");
  if (AutogradMeta* m = get_autograd_meta(*impl_)) {
    m->grad_fn = nullptr;
    m->requires_grad = false;
    m->output_nr = 0;
  }
  return *this;
}

void Tensor::retain_grad() {
  STRIDE_CHECK(requires_grad(), Error,
               "[retain_grad] can't retain_grad on a tensor that does not require grad.");
  AutogradMeta& m = materialize_autograd_meta(*impl_);
  if (!m.grad_fn || m.retains_grad) return;  // leaves keep their grad anyway
  m.retains_grad = true;
  m.grad_fn->retained.push_back({m.output_nr, std::weak_ptr<TensorImpl>(impl_)});
}

bool Tensor::retains_grad() const {
  AutogradMeta* m = get_autograd_meta(*impl_);
  return m && m->retains_grad;
}

HookHandle Tensor::register_hook(std::function<Tensor(const Tensor&)> hook) {
  STRIDE_CHECK(requires_grad(), Error,
               "[register_hook] cannot register a hook on a tensor that does not require grad.");
  static std::atomic<int> next_id{0};
  const int id = next_id++;
  AutogradMeta& m = materialize_autograd_meta(*impl_);
  if (m.grad_fn) {
    m.grad_fn->pre_hooks.push_back({m.output_nr, id, std::move(hook)});
    std::weak_ptr<autograd::Node> weak = m.grad_fn;
    return HookHandle([weak, id] {
      if (auto n = weak.lock()) {
        std::erase_if(n->pre_hooks, [id](const auto& h) { return h.id == id; });
      }
    });
  }
  m.hooks.push_back({id, std::move(hook)});
  std::weak_ptr<TensorImpl> weak = impl_;
  return HookHandle([weak, id] {
    if (auto impl = weak.lock()) {
      std::erase_if(materialize_autograd_meta(*impl).hooks,
                    [id](const auto& h) { return h.id == id; });
    }
  });
}

HookHandle Tensor::register_post_accumulate_grad_hook(std::function<void(Tensor&)> hook) {
  STRIDE_CHECK(requires_grad() && is_leaf(), Error,
               "[register_post_accumulate_grad_hook] post-accumulate-grad hooks can only be "
               "registered on leaf tensors that require grad.");
  static std::atomic<int> next_id{0};
  const int id = next_id++;
  materialize_autograd_meta(*impl_).post_accumulate_hooks.push_back({id, std::move(hook)});
  std::weak_ptr<TensorImpl> weak = impl_;
  return HookHandle([weak, id] {
    if (auto impl = weak.lock()) {
      std::erase_if(materialize_autograd_meta(*impl).post_accumulate_hooks,
                    [id](const auto& h) { return h.id == id; });
    }
  });
}

}  // namespace stride
