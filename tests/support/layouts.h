// Test helpers: tensors in every memory layout, sentinel-filled output
// buffers, and comparisons that say what differs.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <stride/stride.h>

namespace stride::testing {

enum class Layout { Contiguous, Transposed, Step2, Offset, Expanded };
inline constexpr Layout kAllLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Step2,
                                         Layout::Offset, Layout::Expanded};
// Layouts an output (or an in-place self) may have: no expanded views.
inline constexpr Layout kOutputLayouts[] = {Layout::Contiguous, Layout::Transposed, Layout::Step2,
                                            Layout::Offset};
const char* layout_name(Layout l);

enum class Domain { Any, Positive, Unit, AboveOne, Probability };

// A view of `shape` in `layout` over a larger buffer, holding random values
// drawn from `domain` (Any: N(0, 1); Positive: [0.1, 3); Unit: [-0.9, 0.9);
// AboveOne: [1.1, 4); Probability: [0.05, 0.95); integers in [-5, 6), [1, 6)
// or [2, 6); Probability's are 0 and 1).
Tensor make_input(
    IntArrayRef shape, ScalarType dtype, Layout layout, Domain domain, Generator& gen);

// An output view of `shape` in `layout` inside a buffer filled with a
// sentinel (NaN for floats). `base` receives the whole buffer.
Tensor make_output(IntArrayRef shape, ScalarType dtype, Layout layout, Tensor& base);

// Storage offsets (relative to the buffer start) of every element of `view`.
std::vector<int64_t> element_offsets(const Tensor& view);

// Expects `view` to equal `expected` and every element of `base` outside the
// view to still hold its sentinel (`before` is a copy of base taken earlier).
void expect_written_only_inside(const Tensor& view,
                                const Tensor& expected,
                                const Tensor& base,
                                const Tensor& before,
                                double rtol,
                                const std::string& what);

// allclose with NaN == NaN, and a message naming the max difference.
::testing::AssertionResult close(const Tensor& got,
                                 const Tensor& want,
                                 double rtol = 1e-6,
                                 double atol = 1e-7);

}  // namespace stride::testing
