// What an error says, for tests that check the sentence.
#pragma once

#include <exception>
#include <string>
#include <utility>

namespace stride::testing {

// The what() of the E that calling f throws; "wrong exception type: ..."
// for another exception, "no exception" when it returns.
template <class E = std::exception, class F>
std::string message_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const std::exception& e) {
    if (dynamic_cast<const E*>(&e) != nullptr) return e.what();
    return std::string("wrong exception type: ") + e.what();
  }
  return "no exception";
}

}  // namespace stride::testing
