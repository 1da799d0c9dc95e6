// A non-owning reference to a callable: like std::function without the
// allocation, for callbacks that do not outlive the call (parallel_for, loops).
#pragma once

#include <type_traits>
#include <utility>

namespace stride {

template <class Sig>
class FunctionRef;

template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  template <class F,
            std::enable_if_t<!std::is_same_v<std::decay_t<F>, FunctionRef> &&
                                 std::is_invocable_r_v<R, F&, Args...>,
                             int> = 0>
  FunctionRef(F&& f)  // NOLINT: implicit, like std::function
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* obj, Args... args) -> R {
          return (*static_cast<std::remove_reference_t<F>*>(obj))(std::forward<Args>(args)...);
        }) {}

  R operator()(Args... args) const { return call_(obj_, std::forward<Args>(args)...); }

 private:
  void* obj_;
  R (*call_)(void*, Args...);
};

}  // namespace stride
