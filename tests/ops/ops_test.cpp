// Op semantics beyond the golden files: determinism across thread counts,
// edge cases (NaN, ties, -inf, empty), and GEMM layouts against a naive loop.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <stride/stride.h>

#include "support/layouts.h"

namespace stride {
namespace {

using testing::close;

struct ThreadCount {
  explicit ThreadCount(int n) : saved(get_num_threads()) { set_num_threads(n); }
  ~ThreadCount() { set_num_threads(saved); }
  int saved;
};

// run() on one and on two threads gives bit-identical tensors.
template <class Run>
void expect_identical_on_one_and_two_threads(const Run& run) {
  std::vector<Tensor> one, two;
  {
    ThreadCount t(1);
    one = run();
  }
  {
    ThreadCount t(2);
    two = run();
  }
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(equal(one[i], two[i])) << "result " << i;
}

TEST(Determinism, ReductionsAndRandomOpsAreIdenticalOnOneAndTwoThreads) {
  auto run = [] {
    Generator g(42);
    Tensor x = randn({300, 1001}, kFloat32, &g);
    return std::vector<Tensor>{x,
                               x.sum(),
                               x.sum({0}),
                               x.sum({1}),
                               x.mean({0, 1}),
                               x.var({1}),
                               x.norm(),
                               x.amax({0}),
                               x.logsumexp({1}),
                               rand({100003}, kFloat64, &g),
                               randint(0, 7, {5000}, kInt64, &g)};
  };
  expect_identical_on_one_and_two_threads(run);
}

TEST(Determinism, VectorisedFloat32KernelsAreIdenticalOnOneAndTwoThreads) {
  // (33, 251) splits at element 4142 on two threads, inside a 16-lane block:
  // the elements that become a thread's partial tail must get the same bits.
  auto run = [] {
    Generator g(5);
    const Tensor gate = (randn({33, 251}, kFloat32, &g) * 4.0).requires_grad_();
    const Tensor up = randn({33, 251}, kFloat32, &g).requires_grad_();
    const Tensor x = (randn({33, 251}, kFloat32, &g) * 3.0).requires_grad_();
    const Tensor w = randn({251}, kFloat32, &g).requires_grad_();
    const Tensor y = nn::functional::swiglu(gate, up);
    const Tensor n = nn::functional::rms_norm(x, w);
    std::vector<Tensor> out{y, n, softmax(x, -1), log_softmax(x, -1), softmax(x, 0)};
    for (const Tensor& t : autograd::grad({y, n}, {gate, up, x, w}, {ones_like(y), n.detach()})) {
      out.push_back(t);
    }
    return out;
  };
  expect_identical_on_one_and_two_threads(run);
}

TEST(Random, SameSeedSameTensorsAndForksDiffer) {
  manual_seed(7);
  Tensor a = randn({64});
  manual_seed(7);
  Tensor b = randn({64});
  EXPECT_TRUE(equal(a, b));
  EXPECT_FALSE(equal(randn({64}), b));
  Generator g(3);
  Generator f1 = g.fork(1), f2 = g.fork(2), f1_again = g.fork(1);
  Tensor x1 = rand({32}, kFloat32, &f1), x2 = rand({32}, kFloat32, &f2);
  EXPECT_FALSE(equal(x1, x2));
  EXPECT_TRUE(equal(x1, rand({32}, kFloat32, &f1_again)));
}

TEST(Random, RangesAndDistributions) {
  Generator g(11);
  Tensor u = rand({20000}, kFloat32, &g);
  EXPECT_GE(u.min().item<double>(), 0.0);
  EXPECT_LT(u.max().item<double>(), 1.0);
  EXPECT_NEAR(u.mean().item<double>(), 0.5, 0.01);
  Tensor n = randn({20000}, kFloat64, &g);
  EXPECT_NEAR(n.mean().item<double>(), 0.0, 0.03);
  EXPECT_NEAR(n.var().item<double>(), 1.0, 0.05);
  Tensor r = randint(-3, 4, {5000}, kInt64, &g);
  EXPECT_EQ(r.min().item<int64_t>(), -3);
  EXPECT_EQ(r.max().item<int64_t>(), 3);
  Tensor b = empty({20000}).bernoulli_(0.25, &g);
  EXPECT_NEAR(b.mean().item<double>(), 0.25, 0.015);
  EXPECT_THROW(empty({2}).uniform_(1, 0), ValueError);
  EXPECT_THROW(empty({2}, kInt64).normal_(), DTypeError);
}

TEST(Reductions, EdgeCases) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  Tensor x = tensor<double>({1, nan, 3});
  EXPECT_TRUE(std::isnan(x.max().item<double>()));
  EXPECT_EQ(x.argmax().item<int64_t>(), 1);
  Tensor ties = tensor<float>({2, 5, 5, 1, 5});
  EXPECT_EQ(ties.argmax().item<int64_t>(), 1);  // first occurrence
  auto [v, i] = tensor<float>({3, 1, 1, 2}, {2, 2}).min(1);
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{1, 1}));
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  Tensor neg_inf_row = tensor<double>({-inf, -inf, 0, 1}, {2, 2});
  Tensor lse = neg_inf_row.logsumexp({1});
  EXPECT_EQ(lse.to_vector<double>()[0], -inf);
  EXPECT_NEAR(lse.to_vector<double>()[1], std::log(1 + std::exp(1.0)), 1e-12);
  EXPECT_EQ(zeros({0, 3}).sum({0}).to_vector<float>(), (std::vector<float>{0, 0, 0}));
  EXPECT_THROW((void)zeros({0, 3}).amax({0}), ShapeError);
  EXPECT_EQ(ones({2, 3, 4}).sum({0, 2}, true).sizes(), IntArrayRef({1, 3, 1}));
  EXPECT_NEAR(tensor<double>({3, 4}).norm().item<double>(), 5.0, 1e-12);
  EXPECT_NEAR(tensor<double>({3, -4}).norm(1).item<double>(), 7.0, 1e-12);
  EXPECT_NEAR(tensor<double>({3, -4}).norm(inf).item<double>(), 4.0, 1e-12);
  EXPECT_NEAR(tensor<double>({1, 2, 3, 4}).var().item<double>(), 5.0 / 3.0, 1e-12);
  // var({2}) reduces dim 2 (a braced dim list must never be read as a correction).
  EXPECT_EQ(ones({2, 3, 4}).var({2}).sizes(), IntArrayRef({2, 3}));
  EXPECT_NEAR(tensor<double>({1, 2, 3, 4}).var({}, 0).item<double>(), 1.25, 1e-12);
}

TEST(Softmax, StableAndNormalised) {
  Tensor x = tensor<float>({1000, 1001, 1002, -1e30f, 0, 1e30f}, {2, 3});
  Tensor s = x.softmax(1);
  EXPECT_TRUE(close(s.sum({1}), ones({2}), 1e-6));
  EXPECT_NEAR(s.to_vector<float>()[2], 0.66524096f, 1e-6);
  EXPECT_NEAR(x.log_softmax(1).to_vector<float>()[0], -2.40760596f, 1e-5);
  const float inf = std::numeric_limits<float>::infinity();
  Tensor masked = tensor<float>({0, -inf, -inf, 1}, {2, 2}).softmax(-1);
  EXPECT_EQ(masked.to_vector<float>()[0], 1.0f);
  EXPECT_EQ(masked.to_vector<float>()[1], 0.0f);
}

// Naive reference GEMM over logical indices.
Tensor naive_matmul(const Tensor& a, const Tensor& b) {
  const int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>(), c(size_t(n * m), 0);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j)
      for (int64_t p = 0; p < k; ++p)
        c[size_t(i * m + j)] += av[size_t(i * k + p)] * bv[size_t(p * m + j)];
  return tensor<double>(c, {n, m});
}

TEST(Matmul, EveryOperandLayoutMatchesNaive) {
  Generator g(5);
  for (auto la : testing::kAllLayouts) {
    for (auto lb : testing::kAllLayouts) {
      Tensor a = testing::make_input({7, 5}, kFloat64, la, testing::Domain::Any, g);
      Tensor b = testing::make_input({5, 3}, kFloat64, lb, testing::Domain::Any, g);
      EXPECT_TRUE(close(matmul(a, b), naive_matmul(a, b), 1e-12))
          << testing::layout_name(la) << " @ " << testing::layout_name(lb);
      EXPECT_TRUE(
          close(matmul(a.to(kFloat32), b.to(kFloat32)), naive_matmul(a, b).to(kFloat32), 1e-5));
    }
  }
}

TEST(Matmul, ShapesFollowTorchMatmul) {
  EXPECT_EQ(matmul(ones({3}), ones({3})).dim(), 0);
  EXPECT_EQ(matmul(ones({3}), ones({3})).item<double>(), 3.0);
  EXPECT_EQ(matmul(ones({2, 3}), ones({3})).sizes(), IntArrayRef({2}));
  EXPECT_EQ(matmul(ones({3}), ones({3, 4})).sizes(), IntArrayRef({4}));
  EXPECT_EQ(matmul(ones({2, 1, 3, 4}), ones({5, 4, 2})).sizes(), IntArrayRef({2, 5, 3, 2}));
  EXPECT_EQ(matmul(ones({32, 16, 128}), ones({128, 65})).sizes(), IntArrayRef({32, 16, 65}));
  EXPECT_EQ(matmul(ones({2, 3}, kInt64), ones({3, 2}, kInt64)).to_vector<int64_t>(),
            (std::vector<int64_t>{3, 3, 3, 3}));
  EXPECT_EQ(matmul(ones({2, 0}), ones({0, 3})).to_vector<float>(), std::vector<float>(6, 0.0f));
  Tensor x = randn({4, 3, 5}), y = randn({4, 5, 2});
  Tensor z = bmm(x, y);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_TRUE(close(z[i], mm(x[i], y[i]), 1e-5));
  }
}

TEST(Indexing, GatherScatterCatStack) {
  Tensor x = arange(12).view({3, 4});
  EXPECT_EQ(x.index_select(0, tensor<int64_t>({2, 0})).to_vector<int64_t>(),
            (std::vector<int64_t>{8, 9, 10, 11, 0, 1, 2, 3}));
  EXPECT_EQ(x.gather(1, tensor<int64_t>({3, 0, 1, 1, 2, 2}, {3, 2})).to_vector<int64_t>(),
            (std::vector<int64_t>{3, 0, 5, 5, 10, 10}));
  Tensor acc = zeros({2, 3}, kInt64)
                   .scatter_add(1, tensor<int64_t>({0, 0, 2, 1}, {2, 2}),
                                tensor<int64_t>({1, 2, 3, 4}, {2, 2}));
  EXPECT_EQ(acc.to_vector<int64_t>(), (std::vector<int64_t>{3, 0, 0, 0, 4, 3}));
  Tensor c = cat({ones({2, 1}, kInt32), zeros({2, 2}, kInt64)}, 1);
  EXPECT_EQ(c.dtype(), kInt64);
  EXPECT_EQ(c.to_vector<int64_t>(), (std::vector<int64_t>{1, 0, 0, 1, 0, 0}));
  EXPECT_EQ(stack({ones({2}), zeros({2})}, 1).sizes(), IntArrayRef({2, 2}));
  EXPECT_THROW((void)cat({ones({2, 1}), ones({3, 1})}, 1), ShapeError);
  Tensor emb = embedding(arange(6).to(kFloat32).view({3, 2}), tensor<int64_t>({2, 0}, {1, 2}));
  EXPECT_EQ(emb.sizes(), IntArrayRef({1, 2, 2}));
  EXPECT_EQ(emb.to_vector<float>(), (std::vector<float>{4, 5, 0, 1}));
}

TEST(Elementwise, SpecialValues) {
  const float nan = std::nanf("");
  Tensor a = tensor<float>({nan, 1, 2});
  Tensor b = tensor<float>({0, nan, 1});
  auto mx = maximum(a, b).to_vector<float>();
  EXPECT_TRUE(std::isnan(mx[0]) && std::isnan(mx[1]));
  EXPECT_EQ(mx[2], 2.0f);
  EXPECT_TRUE(std::isnan(clamp(a, 0, 1).to_vector<float>()[0]));
  EXPECT_TRUE(std::isnan(relu(a).to_vector<float>()[0]));
  EXPECT_EQ(tril(ones({3, 3})).sum().item<double>(), 6.0);
  EXPECT_EQ(triu(ones({3, 3}), 1).sum().item<double>(), 3.0);
  EXPECT_EQ(pow(tensor<int64_t>({2, 3}), 3).to_vector<int64_t>(), (std::vector<int64_t>{8, 27}));
  EXPECT_THROW((void)pow(tensor<int64_t>({2}), -1), ValueError);
  EXPECT_EQ((1.0 - tensor<float>({0.25f})).to_vector<float>()[0], 0.75f);
  EXPECT_EQ((2.0 / tensor<float>({4.f})).to_vector<float>()[0], 0.5f);
  EXPECT_NEAR(gelu(tensor<double>({1.0})).item<double>(), 0.8413447460685429, 1e-12);
}

TEST(Elementwise, OneBroadcastInputMatchesTheExpandedCopy) {
  // A 0-d operand or a (rows, 1) column has stride 0 along the inner run and
  // takes the hoisted loop; the expanded dense copy takes the plain one.
  Generator g(11);
  const Tensor x = randn({37, 19}, kFloat32, &g);
  const Tensor xi = randint(1, 9, {37, 19}, kInt64, &g);
  const std::vector<Tensor> others{scalar_tensor(0.75, kFloat32), randn({37, 1}, kFloat32, &g),
                                   scalar_tensor(3, kInt64), randint(1, 9, {37, 1}, kInt64, &g)};
  for (size_t k = 0; k < others.size(); ++k) {
    const Tensor& a = k < 2 ? x : xi;
    const Tensor& b = others[k];
    const Tensor dense = b.expand(a.sizes()).contiguous();
    EXPECT_TRUE(equal(a - b, a - dense)) << k;
    EXPECT_TRUE(equal(b - a, dense - a)) << k;
    EXPECT_TRUE(equal(a / b, a / dense)) << k;
    EXPECT_TRUE(equal(b / a, dense / a)) << k;
    EXPECT_TRUE(equal(maximum(b, a), maximum(dense, a))) << k;
  }
}

}  // namespace
}  // namespace stride
