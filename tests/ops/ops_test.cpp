// Op semantics beyond the golden files: determinism across thread counts,
// edge cases (NaN, ties, -inf, empty), and GEMM layouts against a naive loop.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include <stride/stride.h>

#include "support/layouts.h"
#include "support/thread_count.h"

namespace stride {
namespace {

using testing::close;

using testing::ThreadCount;

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

// ---- float sums: the vectorised kernels (Note [Deterministic reductions]) ----

// Raw bits of a floating tensor (NaN payloads and the sign of 0 included).
std::vector<uint64_t> bits_of(const Tensor& t) {
  std::vector<uint64_t> out;
  if (t.dtype() == kFloat32) {
    for (float v : t.to_vector<float>()) {
      uint32_t b;
      std::memcpy(&b, &v, sizeof(b));
      out.push_back(b);
    }
  } else {
    for (double v : t.to_vector<double>()) {
      uint64_t b;
      std::memcpy(&b, &v, sizeof(b));
      out.push_back(b);
    }
  }
  return out;
}

// Sum over `dims` (all when empty) in double by a plain loop over logical
// indices, and the sum of magnitudes (the scale of the rounding error).
std::pair<std::vector<double>, std::vector<double>> reference_sum(const Tensor& x,
                                                                  const DimVector& dims) {
  const int64_t n = x.dim();
  std::vector<bool> reduced(size_t(n), dims.empty());
  for (int64_t d : dims) reduced[size_t((d + n) % n)] = true;
  DimVector keep;
  for (int64_t d = 0; d < n; ++d) keep.push_back(reduced[size_t(d)] ? 1 : x.size(d));
  std::vector<double> sum(size_t(numel_of(keep)), 0.0), abs_sum(sum.size(), 0.0);
  DimVector idx(size_t(n), 0);
  for (double v : x.to_vector<double>()) {
    int64_t o = 0;
    for (int64_t d = 0; d < n; ++d)
      o = o * keep[size_t(d)] + (reduced[size_t(d)] ? 0 : idx[size_t(d)]);
    sum[size_t(o)] += v;
    abs_sum[size_t(o)] += std::abs(v);
    for (int64_t d = n - 1; d >= 0 && ++idx[size_t(d)] == x.size(d); --d) idx[size_t(d)] = 0;
  }
  return {sum, abs_sum};
}

// `shape` in a named layout: the test support's, plus rows taken with step 2
// and columns narrowed out of wider rows (rows contiguous, not the matrix).
Tensor sum_input(const DimVector& shape,
                 ScalarType dtype,
                 const std::string& layout,
                 Generator& g) {
  if (layout == "rows_step2") {
    DimVector tall = shape;
    tall[0] = 2 * tall[0];
    return randn(tall, dtype, &g).slice(0, 1, std::nullopt, 2);
  }
  if (layout == "narrowed") {
    DimVector wide = shape;
    wide.back() += 5;
    return randn(wide, dtype, &g).narrow(-1, 2, shape.back());
  }
  using testing::Layout;
  const Layout l = layout == "contiguous"   ? Layout::Contiguous
                   : layout == "transposed" ? Layout::Transposed
                   : layout == "step2"      ? Layout::Step2
                                            : Layout::Offset;
  return testing::make_input(shape, dtype, l, testing::Domain::Any, g);
}

TEST(Reductions, FloatSumsSameBitsForEveryThreadCount) {
  // Lengths around the 8- and 64-element lane blocks, rows and columns longer
  // than the 16384-element chunk, and every kernel's layout: inner (dim -1,
  // all), outer (dim 0), and the general strided one (step2).
  struct Case {
    DimVector shape;
    std::vector<DimVector> dims;
  };
  const std::vector<Case> cases = {
      {{1}, {{}, {0}}},
      {{15}, {{}, {0}}},
      {{17}, {{}}},
      {{70001}, {{}}},
      {{1000, 3}, {{0}, {1}, {}}},
      {{3, 1000}, {{0}, {1}, {}}},
      {{513, 1027}, {{0}, {1}, {}}},
      {{20000, 3}, {{0}}},
      {{3, 40000}, {{1}}},
      {{6, 7, 130}, {{-1}, {0, 2}, {0, 1}, {}}},
  };
  const char* layouts[] = {"contiguous", "transposed", "step2", "offset", "rows_step2", "narrowed"};
  Generator g(17);
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    for (const Case& c : cases) {
      for (const char* layout : layouts) {
        const Tensor x = sum_input(c.shape, dtype, layout, g);
        for (const DimVector& dims : c.dims) {
          for (bool keepdim : {false, true}) {
            std::string what = std::string(to_string(dtype)) + " " + shape_str(c.shape) + " " +
                               layout + " dims " + shape_str(dims) + (keepdim ? " keepdim" : "");
            std::vector<std::vector<uint64_t>> bits;
            Tensor first;
            for (int threads = 1; threads <= 4; ++threads) {
              ThreadCount t(threads);
              const Tensor s = sum(x, dims, keepdim);
              std::vector<uint64_t> b = bits_of(s), m = bits_of(mean(x, dims, keepdim));
              b.insert(b.end(), m.begin(), m.end());
              bits.push_back(b);
              if (threads == 1) first = s;
            }
            for (size_t i = 1; i < bits.size(); ++i)
              EXPECT_EQ(bits[0], bits[i]) << what << ": 1 vs " << i + 1 << " threads";
            const auto [want, scale] = reference_sum(x, dims);
            const std::vector<double> got = first.to_vector<double>();
            ASSERT_EQ(got.size(), want.size()) << what;
            const double eps = dtype == kFloat32 ? 1e-6 : 1e-14;
            for (size_t i = 0; i < got.size(); ++i)
              ASSERT_LE(std::abs(got[i] - want[i]), eps * scale[i] + 1e-30)
                  << what << " [" << i << "]";
          }
        }
      }
    }
  }
}

TEST(Reductions, Float32SumsMatchAFloat64Reference) {
  // 1e5 positive values per output on each kernel: lane sums (all, dim 1),
  // column sums (dim 0), both with 16384-element chunks merged in order.
  Generator g(3);
  struct Case {
    DimVector shape;
    DimVector dims;
  };
  for (const Case& c : std::vector<Case>{{{100000}, {}},
                                         {{3, 100000}, {1}},
                                         {{100000, 3}, {0}},
                                         {{100000, 70}, {0}},
                                         {{1000, 100}, {}}}) {
    const Tensor x = rand(c.shape, kFloat32, &g);
    const std::vector<double> got = sum(x, c.dims).to_vector<double>();
    const std::vector<double> want = reference_sum(x, c.dims).first;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_LE(std::abs(got[i] - want[i]), 1e-6 * want[i])
          << shape_str(c.shape) << " [" << i << "]";
  }
}

TEST(Reductions, FloatSumsPropagateNanAndInf) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::nanf("");
  // Specials in the zero-padded tail of a lane sum, in a full lane block, in
  // a later chunk, and in the narrow tail of a column strip.
  for (int64_t n : {5, 77, 40000}) {
    for (int64_t at : {int64_t(0), n - 1}) {
      Tensor x = ones({n});
      x.narrow(0, at, 1).fill_(nan);
      EXPECT_TRUE(std::isnan(x.sum().item<double>())) << n << " " << at;
      x.fill_(1);
      x.narrow(0, at, 1).fill_(inf);
      EXPECT_EQ(x.sum().item<double>(), double(inf)) << n << " " << at;
      x.narrow(0, n / 2, 1).fill_(-inf);
      EXPECT_TRUE(std::isnan(x.sum().item<double>())) << n << " " << at;
    }
  }
  // 78 columns: a 64-column strip, an 8-column one, and 6 through masked
  // loads (and, along a row, 64 lanes, a block of 8 and a partial one).
  Tensor m = ones({20000, 78});
  m.narrow(0, 19999, 1).narrow(1, 77, 1).fill_(nan);
  m.narrow(0, 3, 1).narrow(1, 5, 1).fill_(inf);
  m.narrow(0, 7, 1).narrow(1, 66, 1).fill_(-inf);
  m.narrow(0, 8, 1).narrow(1, 66, 1).fill_(inf);
  const std::vector<float> cols = m.sum({0}).to_vector<float>();
  EXPECT_TRUE(std::isnan(cols[77]));
  EXPECT_EQ(cols[5], inf);
  EXPECT_TRUE(std::isnan(cols[66]));
  EXPECT_EQ(cols[0], 20000.0f);
  const std::vector<float> rows = m.sum({1}).to_vector<float>();
  EXPECT_TRUE(std::isnan(rows[19999]));
  EXPECT_EQ(rows[3], inf);
  EXPECT_EQ(rows[7], -inf);
  EXPECT_EQ(rows[8], inf);
  EXPECT_EQ(rows[0], 78.0f);
  // Summed in double, rounded to float32 once: an overflow only at the end.
  EXPECT_EQ(tensor<float>({3e38f, 3e38f, -3e38f}).sum().item<float>(), 3e38f);
  EXPECT_EQ(tensor<float>({3e38f, 3e38f}).sum().item<float>(), inf);
}

TEST(Reductions, BroadcastGradientsSameBitsForEveryThreadCount) {
  // The backward of a broadcast sums the gradient over the broadcast dims
  // (sum_to): dim 0 for the row b, dim 1 for the column c.
  Generator g(23);
  const Tensor a = randn({513, 1027}, kFloat32, &g);
  const Tensor b = randn({1027}, kFloat32, &g).requires_grad_();
  const Tensor c = randn({513, 1}, kFloat32, &g).requires_grad_();
  const Tensor gy = randn({513, 1027}, kFloat32, &g);
  std::vector<std::vector<uint64_t>> bits;
  std::vector<Tensor> first;
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadCount t(threads);
    const std::vector<Tensor> gs = autograd::grad({a * b + c}, {b, c}, {gy});
    std::vector<uint64_t> all = bits_of(gs[0]), gc = bits_of(gs[1]);
    all.insert(all.end(), gc.begin(), gc.end());
    bits.push_back(all);
    if (threads == 1) first = gs;
  }
  for (size_t i = 1; i < bits.size(); ++i) EXPECT_EQ(bits[0], bits[i]) << "1 vs " << i + 1;
  NoGradGuard no_grad;
  EXPECT_TRUE(close(first[0], (gy * a).to(kFloat64).sum({0}).to(kFloat32), 1e-5));
  EXPECT_TRUE(close(first[1], gy.sum({1}, true), 1e-5));
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

// float32 rows sum their exps in float lanes, 16 blocks at a time, then in
// double: rows around and far past those blocks stay within a few float
// roundings of the float64 softmax, and their bits do not depend on the
// thread count. Rows spanning more than 87 (one value 95 below the row's
// max: its probability is subnormal) take the general e^x, the others the
// one without special cases.
TEST(Softmax, Float32RowsOfAnyLengthMatchFloat64) {
  Generator g(11);
  for (int64_t len : {1, 15, 16, 17, 65, 255, 256, 257, 4099, 70000}) {
    for (bool wide : {false, true}) {
      Tensor x = randn({3, len}, kFloat32, &g) * 4.0;
      if (wide && len > 1) {
        std::vector<float> v = x.to_vector<float>();
        for (int64_t r = 0; r < 3; ++r) {
          float* row = v.data() + r * len;
          row[len / 2] = *std::max_element(row, row + len) - 95.0f;
        }
        x = tensor<float>(v, {3, len});
      }
      const Tensor want = x.to(kFloat64).softmax(-1).to(kFloat32);
      std::vector<uint32_t> bits1;
      for (int threads : {1, 2}) {
        ThreadCount t(threads);
        const Tensor s = x.softmax(-1);
        std::vector<uint32_t> bits;
        for (float v : s.to_vector<float>()) bits.push_back(std::bit_cast<uint32_t>(v));
        if (threads == 1) bits1 = bits;
        EXPECT_EQ(bits, bits1) << len;
        // Each probability within the rounding of x - max (|x - max| < 64 here)
        // and of exp; each row's sum, taken exactly, within 2^-22 of 1.
        const std::vector<float> got = s.to_vector<float>(), ref = want.to_vector<float>();
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_NEAR(got[i], ref[i], 8e-6f * ref[i] + 3e-45f) << len << " [" << i << "]";
        const std::vector<double> sums = s.to(kFloat64).sum({1}).to_vector<double>();
        for (double sum : sums) EXPECT_NEAR(sum, 1.0, std::ldexp(1.0, -22)) << len;
        EXPECT_TRUE(close(x.log_softmax(-1), x.to(kFloat64).log_softmax(-1).to(kFloat32), 1e-5))
            << len;
      }
    }
  }
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

// PyTorch's legacy rule lets a (0,) tensor join tensors of any shape; it
// stays in the graph, with an empty gradient, whatever the others' rank.
TEST(Indexing, CatKeepsALegacyEmptyOperandInTheGraph) {
  const Tensor empty_row = zeros({0}, kFloat64).requires_grad_(true);
  for (const Tensor& other : {randn({3}, kFloat64), randn({2, 3}, kFloat64)}) {
    const Tensor joined = cat({other, empty_row, empty_row.to(kFloat32)});
    EXPECT_EQ(joined.sizes(), other.sizes());
    const std::vector<Tensor> gs = autograd::grad({joined.sum()}, {empty_row});
    EXPECT_EQ(gs[0].sizes(), IntArrayRef({0}));
  }
}

// Note [Indexed runs] against the element loop: the same gathers and
// scatter-adds with the indexed operand column-major, so that no inner run is
// contiguous. Repeated, int32 and strided ids, bit for bit, on one and two
// threads; a recorded backward (create_graph) gives the same gradient.
TEST(Indexing, IndexedRunsMatchTheElementLoop) {
  Generator gen(21);
  for (int threads : {1, 2}) {
    ThreadCount guard(threads);
    for (ScalarType dtype : {kFloat32, kFloat64}) {
      const Tensor w = randn({11, 37}, dtype, &gen).requires_grad_(true);
      const Tensor w_columns = w.detach().t().contiguous().t();  // same values, rows strided
      const Tensor ids64 = tensor<int64_t>({3, 7, 3, 0, 10, 3, 7, 1, 9, 0, 3, 5}, {2, 6});
      // Every other element: ids {3, 7, 3, 0, 10} with stride 2.
      const Tensor strided = tensor<int64_t>({3, 99, 7, 99, 3, 99, 0, 99, 10, 99}).view({5, 2});
      for (const Tensor& ids : {ids64, ids64.to(kInt32), strided.select(1, 0)}) {
        const Tensor flat = ids.reshape({-1});
        const Tensor y = embedding(w, ids);
        EXPECT_TRUE(equal(y, embedding(w_columns, ids))) << to_string(dtype);
        EXPECT_TRUE(equal(w.detach().index_select(0, flat), w_columns.index_select(0, flat)));
        DimVector gshape = ids.sizes().dims();
        gshape.push_back(37);
        const Tensor g = randn(gshape, dtype, &gen);
        const Tensor gw = autograd::grad({y}, {w}, {g})[0];
        Tensor ref = zeros({37, 11}, dtype).t();  // column-major: element by element
        ref.scatter_add_(0, flat.to(kInt64).view({-1, 1}).expand({flat.numel(), 37}),
                         g.reshape({-1, 37}));
        EXPECT_TRUE(equal(gw, ref)) << to_string(dtype);
        const Tensor recorded =
            autograd::grad({embedding(w, ids)}, {w}, {g}, std::nullopt, true)[0];
        EXPECT_TRUE(equal(recorded, ref)) << to_string(dtype);
      }
    }
  }
  EXPECT_THROW((void)embedding(ones({4, 3}), tensor<int32_t>({1, 4})), IndexError);
  EXPECT_THROW((void)zeros({4, 3}).scatter_add(
                   0, tensor<int64_t>({0, 4}).view({2, 1}).expand({2, 3}), ones({2, 3})),
               IndexError);
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
  // sign keeps a bool tensor; square promotes it to int64, as PyTorch's.
  const Tensor mask = tensor<int64_t>({1, 0}).to(kBool);
  EXPECT_EQ(sign(mask).dtype(), kBool);
  EXPECT_EQ(sign(mask).to(kInt64).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(square(mask).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  // A bool add is x or (alpha and y).
  const Tensor other = tensor<int64_t>({1, 1}).to(kBool);
  EXPECT_EQ(add(mask, other, false).to(kInt64).to_vector<int64_t>(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(add(mask, other, true).to(kInt64).to_vector<int64_t>(), (std::vector<int64_t>{1, 1}));
  // A tensor of negative exponents gives PyTorch's truncated integer values.
  EXPECT_EQ(pow(tensor<int64_t>({2, 1, -1, -1, 0}), tensor<int64_t>({-1, -3, -3, -2, -1}))
                .to_vector<int64_t>(),
            (std::vector<int64_t>{0, 1, -1, 1, 0}));
  EXPECT_EQ((1.0 - tensor<float>({0.25f})).to_vector<float>()[0], 0.75f);
  EXPECT_EQ((2.0 / tensor<float>({4.f})).to_vector<float>()[0], 0.5f);
  EXPECT_NEAR(gelu(tensor<double>({1.0})).item<double>(), 0.8413447460685429, 1e-12);
}

// A number keeps a 16-bit tensor's dtype, 0-d tensors and in-place ops
// included (PyTorch's wrapped numbers never promote).
TEST(Elementwise, ANumberKeepsA16BitTensorsDtype) {
  for (const ScalarType t : {kBFloat16, kFloat16}) {
    for (const Tensor& x : {ones({3}, t), scalar_tensor(2.0, t)}) {
      EXPECT_EQ((x * 0.3).dtype(), t);
      EXPECT_EQ((x / 0.3).dtype(), t);
      EXPECT_EQ((0.3 * x).dtype(), t);
      Tensor y = x.clone();
      y.mul_(0.5).div_(0.25);
      EXPECT_EQ(y.dtype(), t);
      EXPECT_TRUE(allclose(y, x * 2.0));
    }
  }
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
