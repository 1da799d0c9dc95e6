// Option structs (nn::functional's ConvOptions, PoolOptions, ...) written in
// a test row as a lambda that sets the fields it needs: with([](auto& o) {
// o.stride = {2}; }) converts to whichever options type the op takes. GCC
// warns about every field a designated initializer leaves out, which WERROR
// makes an error, so the rows do not use them.
#pragma once

#include <utility>

namespace stride::testing {

template <class Set>
struct OptionsSetter {
  Set set;
  template <class Options>
  operator Options() const {  // NOLINT(google-explicit-constructor)
    Options options;
    set(options);
    return options;
  }
};

template <class Set>
OptionsSetter<Set> with(Set set) {
  return {std::move(set)};
}

}  // namespace stride::testing
