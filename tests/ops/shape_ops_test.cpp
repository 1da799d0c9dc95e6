// The shape ops and composite products of src/ops/shape_ops.cpp and
// linalg.cpp beyond their PyTorch goldens (tests/ops/golden_test.cpp) and
// gradchecks: which results are views, the edge cases (empty dims, zero
// repeats, more picks than elements) and the errors for bad arguments.
#include <gtest/gtest.h>

#include <limits>

#include <stride/stride.h>

namespace stride {
namespace {

bool shares_memory(const Tensor& a, const Tensor& b) {
  return a.storage() == b.storage();
}

TEST(ShapeOps, ViewsShareTheInputsMemory) {
  const Tensor x = arange(24).view({2, 3, 4}).to(kFloat32);
  EXPECT_TRUE(shares_memory(movedim(x, {0}, {2}), x));
  EXPECT_TRUE(shares_memory(broadcast_to(x.select(0, 0), {5, 3, 4}), x));
  EXPECT_TRUE(shares_memory(unflatten(x, -1, {2, 2}), x));
  EXPECT_TRUE(shares_memory(atleast_3d(x.select(0, 0)), x));
  for (const Tensor& part : tensor_split(x, 2, 2)) EXPECT_TRUE(shares_memory(part, x));
  for (const Tensor& grid : meshgrid({x.select(0, 0).select(0, 0), x.select(1, 0).select(0, 0)})) {
    EXPECT_TRUE(shares_memory(grid, x));
  }
  EXPECT_FALSE(shares_memory(diag(x.select(0, 0)), x));  // diag of a matrix copies, as PyTorch's
  EXPECT_FALSE(shares_memory(rot90(x, 0), x));           // as does rot90 by a whole turn
}

TEST(ShapeOps, EmptyDimsAndZeroRepeats) {
  const Tensor x = zeros({0, 3});
  EXPECT_EQ(tensor_split(x, 4, 0).size(), 4u);
  EXPECT_EQ(tensor_split(x, 4, 0)[3].sizes(), IntArrayRef({0, 3}));
  EXPECT_EQ(repeat(ones({2, 3}), {0, 2}).sizes(), IntArrayRef({0, 6}));
  EXPECT_EQ(repeat_interleave(ones({3}), 0).sizes(), IntArrayRef({0}));
  EXPECT_EQ(combinations(ones({2}), 3).sizes(), IntArrayRef({0, 3}));
  EXPECT_EQ(combinations(ones({2}), 0).sizes(), IntArrayRef({0}));
  EXPECT_EQ(diag(zeros({0}), 2).sizes(), IntArrayRef({2, 2}));
  EXPECT_EQ(kron(zeros({0, 2}), ones({3})).sizes(), IntArrayRef({0, 6}));
  EXPECT_EQ(block_diag({zeros({0, 2}), ones({1})}).sizes(), IntArrayRef({1, 3}));
}

TEST(ShapeOps, DiagonalsOfInfinitiesHaveZerosOffTheDiagonal) {
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor d = diag(tensor<double>({inf, -inf}));
  EXPECT_TRUE(equal(d, tensor<double>({inf, 0, 0, -inf}, {2, 2})));
}

TEST(ShapeOps, MeshgridXySwapsTheFirstTwoDims) {
  const std::vector<Tensor> g = meshgrid({arange(2), arange(3), arange(4)}, "xy");
  for (const Tensor& t : g) EXPECT_EQ(t.sizes(), IntArrayRef({3, 2, 4}));
  EXPECT_TRUE(equal(g[0].select(2, 0), tensor<int64_t>({0, 1, 0, 1, 0, 1}, {3, 2})));
}

TEST(ShapeOps, BadArgumentsNameTheOp) {
  const Tensor m = ones({4, 6});
  EXPECT_THROW(hsplit(m, 4), ValueError);                 // 6 columns in 4 parts
  EXPECT_THROW(vsplit(ones({4}), 2), ShapeError);         // needs 2 dims
  EXPECT_THROW(dsplit(m, 2), ShapeError);                 // needs 3 dims
  EXPECT_THROW(tensor_split(m, 0), ValueError);           // no sections
  EXPECT_THROW(split_with_sizes(m, {1, 2}), ShapeError);  // 3 of 4 rows
  EXPECT_THROW(movedim(m, {0, 0}, {0, 1}), ValueError);   // a dim twice
  EXPECT_THROW(movedim(m, {0}, {0, 1}), ValueError);      // lengths differ
  EXPECT_THROW(rot90(m, 1, {0, 0}), ValueError);
  EXPECT_THROW(diag(ones({2, 2, 2})), ShapeError);
  EXPECT_THROW(diag_embed(m, 0, 1, -2), ValueError);  // dim1 and dim2 are one dim
  EXPECT_THROW(meshgrid({ones({2}), ones({2, 2})}), ShapeError);
  EXPECT_THROW(meshgrid({ones({2}), arange(2)}), DTypeError);
  EXPECT_THROW(meshgrid({ones({2})}, "ji"), ValueError);
  EXPECT_THROW(repeat(m, {2}), ShapeError);  // fewer repeats than dims
  EXPECT_THROW(repeat_interleave(m, tensor<int64_t>({1, 2}), 0), ShapeError);
  EXPECT_THROW(repeat_interleave(m, ones({4}), 0), DTypeError);
  EXPECT_THROW(sum_to_size(m, {3, 1}), ShapeError);
  EXPECT_THROW(dot(ones({3}), ones({4})), ShapeError);
  EXPECT_THROW(dot(ones({3}), arange(3)), DTypeError);
  EXPECT_THROW(mv(m, ones({4})), ShapeError);
  EXPECT_THROW(tensordot(m, m, {0}, {1}), ShapeError);
  EXPECT_THROW(tensordot(m, m, 3), ValueError);
}

}  // namespace
}  // namespace stride
