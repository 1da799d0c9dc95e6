// Dense layouts that new memory reproduces (core/layout.h): the check behind
// Module::to, optimizer state and the fused kernels' outputs.
#include <gtest/gtest.h>

#include "core/layout.h"
#include "stride/ops.h"

namespace stride {
namespace {

using detail::empty_preserving_strides;
using detail::is_non_overlapping_and_dense;

TEST(Layout, DenseMeansTheElementsTileOneBlockInSomeDimOrder) {
  const Tensor t = zeros({4, 5, 6});
  EXPECT_TRUE(is_non_overlapping_and_dense(t));
  EXPECT_TRUE(is_non_overlapping_and_dense(t.transpose(0, 2)));
  EXPECT_TRUE(is_non_overlapping_and_dense(t.permute({1, 2, 0})));
  EXPECT_TRUE(is_non_overlapping_and_dense(t.select(0, 2)));                    // at an offset
  EXPECT_TRUE(is_non_overlapping_and_dense(t.narrow(0, 1, 2)));                 // leading slice
  EXPECT_TRUE(is_non_overlapping_and_dense(zeros({3, 1, 2}).transpose(0, 1)));  // size-1 dims
  EXPECT_FALSE(is_non_overlapping_and_dense(t.narrow(2, 0, 3)));                // gaps
  EXPECT_FALSE(is_non_overlapping_and_dense(zeros({5}).expand({4, 5})));        // overlap
  EXPECT_FALSE(is_non_overlapping_and_dense(zeros({0, 3})));
}

TEST(Layout, NewMemoryKeepsDenseStridesElseIsRowMajor) {
  const Tensor t = zeros({4, 5, 6}, kFloat64);
  const Tensor permuted = t.permute({2, 0, 1});
  const Tensor a = empty_preserving_strides(permuted, TensorOptions(kFloat32));
  EXPECT_EQ(a.sizes(), permuted.sizes());
  EXPECT_EQ(a.strides(), permuted.strides());
  EXPECT_EQ(a.dtype(), kFloat32);
  const Tensor sliced = t.narrow(2, 1, 3);
  const Tensor b = empty_preserving_strides(sliced, sliced.options());
  EXPECT_EQ(b.sizes(), sliced.sizes());
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_EQ(b.dtype(), kFloat64);
}

}  // namespace
}  // namespace stride
