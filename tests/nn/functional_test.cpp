// nn::functional: the fused ops (cross_entropy, rms_norm, rotary_embedding)
// against their references built from basic ops, in every input layout,
// values and gradients; gradcheck (first and second order) in float64; the
// losses' edge cases and errors; attention against a naive loop; RoPE's
// algebraic properties; and the logging facility that carries warnings.
// PyTorch parity lives in functional_golden_test.cpp.
#include <atomic>
#include <cmath>
#include <numbers>
#include <string>
#include <thread>
#include <vector>

#include "stride/logging.h"
#include "stride/nn/functional.h"
#include "support/layouts.h"
#include "support/thread_count.h"

namespace stride::testing {
namespace {

namespace F = nn::functional;
using F::Reduction;
using testing::ThreadCount;
using Inputs = std::vector<Tensor>;
using Fn = std::function<Tensor(const Inputs&)>;

constexpr Reduction kReductions[] = {Reduction::None, Reduction::Mean, Reduction::Sum};

const char* reduction_name(Reduction r) {
  return r == Reduction::None ? "none" : r == Reduction::Mean ? "mean" : "sum";
}

Tensor idx(std::vector<int64_t> v, IntArrayRef shape = {}) {
  return tensor<int64_t>(v, shape);
}

// Leaves for `shapes` in `layout`, requiring grad.
Inputs leaves(const std::vector<DimVector>& shapes,
              ScalarType dtype,
              Layout layout,
              Generator& gen,
              Domain domain = Domain::Any) {
  Inputs in;
  for (const DimVector& s : shapes) {
    in.push_back(make_input(s, dtype, layout, domain, gen).detach().requires_grad_());
  }
  return in;
}

// Expects fused(in) == reference(in), and equal gradients for a random
// upstream gradient, for every input that requires grad.
void expect_matches_reference(const Fn& fused,
                              const Fn& reference,
                              const Inputs& in,
                              double rtol,
                              double atol,
                              const std::string& what) {
  const Tensor a = fused(in), b = reference(in);
  ASSERT_EQ(a.dtype(), b.dtype()) << what;
  EXPECT_TRUE(close(a, b, rtol, atol)) << what << " (forward)";
  Inputs wrt;
  for (const Tensor& t : in) {
    if (t.requires_grad()) wrt.push_back(t);
  }
  Generator gen(7);
  const Tensor gout = randn(a.sizes(), a.dtype(), &gen);
  const auto ga = autograd::grad({a}, wrt, {gout});
  const auto gb = autograd::grad({b}, wrt, {gout});
  for (size_t i = 0; i < wrt.size(); ++i) {
    EXPECT_TRUE(close(ga[i], gb[i], rtol, atol)) << what << " (gradient of input " << i << ")";
  }
}

// fn(in) and its gradients for the upstream gradient gout, bit-identical at
// 1 and 2 threads.
void expect_thread_count_invariant(const Fn& fn, const Inputs& in, const Tensor& gout) {
  std::vector<Tensor> results[2];
  for (int threads : {1, 2}) {
    ThreadCount guard(threads);
    const Tensor y = fn(in);
    results[threads - 1] = autograd::grad({y}, in, {gout});
    results[threads - 1].push_back(y);
  }
  for (size_t i = 0; i < results[0].size(); ++i) {
    EXPECT_TRUE(equal(results[0][i], results[1][i])) << "result " << i;
  }
}

// gradcheck of the first derivative of fn with respect to in[0] (so the
// backward's own backward is checked), weighted by a fixed upstream gradient.
bool gradgradcheck(const Fn& fn, const Inputs& in) {
  return autograd::gradcheck(
      [&](const Inputs& x) {
        const Tensor y = fn(x);
        Generator gen(11);
        const Tensor gout = randn(y.sizes(), y.dtype(), &gen);
        return autograd::grad({y}, {x[0]}, {gout}, true, true)[0];
      },
      in);
}

// Restores the logging defaults around a test.
class LoggingReset {
 public:
  LoggingReset() { reset(); }
  ~LoggingReset() { reset(); }
  LoggingReset(const LoggingReset&) = delete;
  LoggingReset& operator=(const LoggingReset&) = delete;

 private:
  static void reset() {
    logging::set_warnings_as_errors(false);
    logging::set_warning_handler(nullptr);
    logging::reset_warn_once();
  }
};

// ---- logging ----

TEST(Logging, WarnGoesToTheInstalledHandler) {
  LoggingReset reset;
  std::vector<std::string> got;
  {
    logging::WarningHandlerGuard guard([&](const std::string& m) { got.push_back(m); });
    logging::warn("first");
    logging::warn("second");
  }
  EXPECT_EQ(got, (std::vector<std::string>{"first", "second"}));
}

TEST(Logging, DefaultHandlerPrintsToStderr) {
  LoggingReset reset;
  ::testing::internal::CaptureStderr();
  logging::warn("look here");
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "stride: warning: look here\n");
}

TEST(Logging, WarnOnceFiresOncePerKeyUntilReset) {
  LoggingReset reset;
  int calls = 0;
  logging::WarningHandlerGuard guard([&](const std::string&) { ++calls; });
  EXPECT_TRUE(logging::warn_once("k1", "m"));
  EXPECT_FALSE(logging::warn_once("k1", "m"));
  EXPECT_TRUE(logging::warn_once("k2", "m"));
  EXPECT_EQ(calls, 2);
  logging::reset_warn_once();
  EXPECT_TRUE(logging::warn_once("k1", "m"));
  EXPECT_EQ(calls, 3);
}

TEST(Logging, WarningsAsErrorsThrowEveryTime) {
  LoggingReset reset;
  int calls = 0;
  logging::WarningHandlerGuard guard([&](const std::string&) { ++calls; });
  logging::set_warnings_as_errors(true);
  EXPECT_TRUE(logging::warnings_as_errors());
  try {
    logging::warn("bad thing");
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("bad thing"), std::string::npos) << e.what();
  }
  EXPECT_THROW(logging::warn_once("key", "m"), Error);
  EXPECT_THROW(logging::warn_once("key", "m"), Error);  // not marked as seen by the throw
  logging::set_warnings_as_errors(false);
  EXPECT_TRUE(logging::warn_once("key", "m"));
  EXPECT_EQ(calls, 1);
}

TEST(Logging, WarnOnceIsThreadSafe) {
  LoggingReset reset;
  std::atomic<int> calls{0};
  logging::WarningHandlerGuard guard([&](const std::string&) { ++calls; });
  const std::vector<std::string> keys = {"k0", "k1", "k2", "k3", "k4",
                                         "k5", "k6", "k7", "k8", "k9"};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&keys] {
      for (size_t i = 0; i < 200; ++i) {
        logging::warn_once("shared", "m");
        logging::warn_once(keys[i % keys.size()], "m");
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), 11);
}

TEST(Logging, HandlerMayWarnItself) {
  LoggingReset reset;
  std::vector<std::string> got;
  logging::WarningHandlerGuard guard([&](const std::string& m) {
    got.push_back(m);
    if (m == "outer") logging::warn("inner");
  });
  logging::warn("outer");
  EXPECT_EQ(got, (std::vector<std::string>{"outer", "inner"}));
}

// ---- cross_entropy ----

TEST(CrossEntropy, FusedMatchesReferenceInEveryLayout) {
  Generator gen(1);
  struct Shape {
    DimVector logits;
    std::vector<int64_t> targets;
    DimVector target_shape;
  };
  const std::vector<Shape> shapes = {
      {{6, 5}, {0, 4, -100, 2, 1, 3}, {6}},
      {{3, 5, 4}, {0, 1, 2, 3, -100, 4, 4, 0, 1, 1, -100, 2}, {3, 4}},
      // The vocabulary's 65: four whole vectors of 16 and a tail of 1.
      {{4, 65}, {64, 0, 17, -100}, {4}},
  };
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double rtol = dtype == kFloat64 ? 1e-12 : 2e-5, atol = dtype == kFloat64 ? 1e-12 : 1e-6;
    for (const Shape& s : shapes) {
      const Tensor target = idx(s.targets, s.target_shape);
      for (Layout layout : kAllLayouts) {
        for (Reduction r : kReductions) {
          for (double eps : {0.0, 0.15}) {
            const Inputs in = leaves({s.logits}, dtype, layout, gen);
            expect_matches_reference(
                [&](const Inputs& x) { return F::cross_entropy(x[0], target, -100, r, eps); },
                [&](const Inputs& x) {
                  return F::cross_entropy_reference(x[0], target, -100, r, eps);
                },
                in, rtol, atol,
                std::string(to_string(dtype)) + " " + shape_str(s.logits) + " " +
                    layout_name(layout) + " " + reduction_name(r) + " eps " + std::to_string(eps));
          }
        }
      }
    }
  }
}

// Rows with a NaN, a +inf, a -inf entry and all -inf, at 7 and 65 classes:
// the fused loss is NaN or finite where the composed one is, and equal.
TEST(CrossEntropy, SpecialValuesMatchTheReference) {
  const double inf = std::numeric_limits<double>::infinity(), nan = std::nan("");
  for (int64_t classes : {7, 65}) {
    for (ScalarType dtype : {kFloat32, kFloat64}) {
      Tensor x = randn({5, classes}, dtype);
      x.select(0, 0).narrow(0, 3, 1).fill_(nan);
      x.select(0, 1).narrow(0, classes - 1, 1).fill_(inf);
      x.select(0, 2).narrow(0, 2, 1).fill_(-inf);
      x.select(0, 3).fill_(-inf);
      const Tensor target = idx({1, 0, 1, 2, 4}, {5});
      const std::vector<double> got =
          F::cross_entropy(x, target, -100, Reduction::None).to_vector<double>();
      const std::vector<double> want =
          F::cross_entropy_reference(x, target, -100, Reduction::None).to_vector<double>();
      for (size_t r = 0; r < got.size(); ++r) {
        SCOPED_TRACE("classes " + std::to_string(classes) + " " + std::string(to_string(dtype)) +
                     " row " + std::to_string(r));
        EXPECT_EQ(std::isnan(got[r]), std::isnan(want[r])) << got[r] << " vs " << want[r];
        if (!std::isnan(want[r])) {
          EXPECT_NEAR(got[r], want[r], 1e-5 * (1 + std::abs(want[r])));
        }
      }
    }
  }
}

TEST(CrossEntropy, Gradcheck) {
  Generator gen(2);
  const Tensor t2 = idx({1, -100, 0, 3});
  const Tensor t3 = idx({2, 0, -100, 1, 1, 2}, {2, 3});
  for (Reduction r : kReductions) {
    for (double eps : {0.0, 0.2}) {
      const Inputs a = leaves({{4, 4}}, kFloat64, Layout::Transposed, gen);
      EXPECT_TRUE(autograd::gradcheck(
          [&](const Inputs& x) { return F::cross_entropy(x[0], t2, -100, r, eps); }, a))
          << reduction_name(r) << " " << eps;
      const Inputs b = leaves({{2, 3, 3}}, kFloat64, Layout::Step2, gen);
      EXPECT_TRUE(autograd::gradcheck(
          [&](const Inputs& x) { return F::cross_entropy(x[0], t3, -100, r, eps); }, b))
          << reduction_name(r) << " " << eps;
      EXPECT_TRUE(autograd::gradcheck(
          [&](const Inputs& x) { return F::cross_entropy_reference(x[0], t2, -100, r, eps); }, a));
    }
  }
}

TEST(CrossEntropy, SecondDerivativeGradcheck) {
  Generator gen(3);
  const Tensor t = idx({1, -100, 0, 3, 2});
  for (Reduction r : kReductions) {
    const Inputs in = leaves({{5, 4}}, kFloat64, Layout::Contiguous, gen);
    EXPECT_TRUE(
        gradgradcheck([&](const Inputs& x) { return F::cross_entropy(x[0], t, -100, r, 0.1); }, in))
        << reduction_name(r);
  }
}

TEST(CrossEntropy, MatchesHandComputedValue) {
  // Row [1, 2, 3], target 2: lse = 3 + log(1 + e^-1 + e^-2); loss = lse - 3.
  const Tensor x = tensor<double>({1, 2, 3}, {1, 3});
  const double lse = 3 + std::log(1 + std::exp(-1.0) + std::exp(-2.0));
  EXPECT_NEAR(F::cross_entropy(x, idx({2})).item<double>(), lse - 3, 1e-14);
  // Smoothing 0.3: 0.7 * nll + 0.3 * (lse - mean(x)).
  EXPECT_NEAR(F::cross_entropy(x, idx({2}), -100, Reduction::Mean, 0.3).item<double>(),
              0.7 * (lse - 3) + 0.3 * (lse - 2), 1e-14);
}

TEST(CrossEntropy, ReductionsAndIgnoreIndex) {
  Generator gen(4);
  const Tensor x = randn({5, 3}, kFloat64, &gen);
  const Tensor t = idx({0, 2, -1, 1, -1});
  const Tensor none = F::cross_entropy(x, t, -1, Reduction::None);
  ASSERT_EQ(none.sizes(), IntArrayRef({5}));
  const std::vector<double> v = none.to_vector<double>();
  EXPECT_EQ(v[2], 0.0);
  EXPECT_EQ(v[4], 0.0);
  const double sum = v[0] + v[1] + v[3];
  EXPECT_NEAR(F::cross_entropy(x, t, -1, Reduction::Sum).item<double>(), sum, 1e-12);
  EXPECT_NEAR(F::cross_entropy(x, t, -1, Reduction::Mean).item<double>(), sum / 3, 1e-12);
  // A (N, C, d) input gives the (N, d) per-element losses.
  const Tensor x3 = randn({2, 3, 4}, kFloat64, &gen);
  const Tensor t3 = idx({0, 1, 2, 0, 2, 2, 1, 0}, {2, 4});
  EXPECT_EQ(F::cross_entropy(x3, t3, -100, Reduction::None).sizes(), IntArrayRef({2, 4}));
}

TEST(CrossEntropy, AllIgnoredMeanIsNaNWithZeroGradient) {
  const Tensor x = tensor<double>({1, 2, 3, 4, 5, 6}, {2, 3}).requires_grad_();
  const Tensor loss = F::cross_entropy(x, idx({-100, -100}));
  EXPECT_TRUE(std::isnan(loss.item<double>()));
  loss.backward();
  EXPECT_TRUE(equal(x.grad(), zeros({2, 3}, kFloat64)));
  EXPECT_EQ(F::cross_entropy(x, idx({-100, -100}), -100, Reduction::Sum).item<double>(), 0.0);
}

TEST(CrossEntropy, Int32TargetsEqualInt64) {
  Generator gen(5);
  const Tensor x = randn({4, 6}, kFloat32, &gen);
  const Tensor t = idx({5, 0, 3, 3});
  EXPECT_TRUE(equal(F::cross_entropy(x, t, -100, Reduction::None),
                    F::cross_entropy(x, t.to(kInt32), -100, Reduction::None)));
}

TEST(CrossEntropy, OutOfRangeTargetThrowsNamingItAndC) {
  const Tensor x = zeros({3, 5});
  for (int64_t bad : {5, 7, -1}) {
    try {
      F::cross_entropy(x, idx({0, bad, 1}));
      FAIL() << "no throw for target " << bad;
    } catch (const IndexError& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("target " + std::to_string(bad)), std::string::npos) << m;
      EXPECT_NE(m.find("5 classes"), std::string::npos) << m;
    }
  }
  EXPECT_THROW(F::cross_entropy_reference(x, idx({0, 9, 1})), IndexError);
  EXPECT_THROW(F::nll_loss(x, idx({0, 9, 1})), IndexError);
}

TEST(CrossEntropy, RejectsBadShapesAndDtypes) {
  const Tensor x = zeros({3, 5});
  EXPECT_THROW(F::cross_entropy(x, idx({0, 1})), ShapeError);
  EXPECT_THROW(F::cross_entropy(zeros({2, 5, 3}), idx({0, 1, 2, 0, 1}, {2, 5})), ShapeError);
  EXPECT_THROW(F::cross_entropy(x, zeros({3})), DTypeError);
  EXPECT_THROW(F::cross_entropy(idx({1, 2}, {1, 2}), idx({0})), DTypeError);
  EXPECT_THROW(F::cross_entropy(x, idx({0, 1, 2}), -100, Reduction::Mean, 1.5), ValueError);
}

TEST(CrossEntropy, UnbatchedLogits) {
  const Tensor x = tensor<float>({0.5f, -1.0f, 2.0f});
  const Tensor loss = F::cross_entropy(x, scalar_tensor(1, kInt64));
  EXPECT_EQ(loss.dim(), 0);
  EXPECT_NEAR(loss.item<double>(), F::cross_entropy(x.view({1, 3}), idx({1})).item<double>(), 1e-7);
}

TEST(CrossEntropy, SixteenBitLogitsComputeInFloat32) {
  Generator gen(6);
  const Tensor x = randn({4, 9}, kFloat32, &gen).to(kBFloat16);
  const Tensor t = idx({8, 0, 4, 2});
  const Tensor loss = F::cross_entropy(x, t);
  EXPECT_EQ(loss.dtype(), kBFloat16);
  EXPECT_NEAR(loss.item<double>(), F::cross_entropy(x.to(kFloat32), t).item<double>(), 1e-2);
}

TEST(CrossEntropy, SameBitsForEveryThreadCount) {
  Generator gen(8);
  const Tensor x = randn({300, 67}, kFloat32, &gen);
  const Tensor t = randint(0, 67, {300}, kInt64, &gen);
  auto run = [&](int n) {
    ThreadCount guard(n);
    Tensor xl = x.detach().requires_grad_();
    Tensor loss = F::cross_entropy(xl, t, -100, Reduction::Mean, 0.1);
    loss.backward();
    return std::make_pair(loss.detach(), xl.grad());
  };
  const auto one = run(1);
  const auto many = run(4);
  EXPECT_TRUE(equal(one.first, many.first));
  EXPECT_TRUE(equal(one.second, many.second));
}

TEST(CrossEntropy, WarnsOnceWhenGivenProbabilities) {
  LoggingReset reset;
  std::vector<std::string> warnings;
  logging::WarningHandlerGuard guard([&](const std::string& m) { warnings.push_back(m); });
  Generator gen(9);
  const Tensor logits = randn({8, 10}, kFloat32, &gen);
  const Tensor t = randint(0, 10, {8}, kInt64, &gen);
  F::cross_entropy(logits, t);
  EXPECT_TRUE(warnings.empty()) << "logits must not warn";
  F::cross_entropy(softmax(logits, 1), t);
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("expects logits"), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("Hint: pass the scores before softmax"), std::string::npos);
  F::cross_entropy(softmax(logits, 1), t);
  EXPECT_EQ(warnings.size(), 1u) << "warns once";
  // A (N, C, d) input is checked along its class dim.
  logging::reset_warn_once();
  F::cross_entropy(softmax(randn({2, 5, 3}, kFloat32, &gen), 1), idx({0, 1, 2, 3, 4, 0}, {2, 3}));
  EXPECT_EQ(warnings.size(), 2u);
}

TEST(CrossEntropy, ProbabilityWarningCanBeAnError) {
  LoggingReset reset;
  logging::set_warnings_as_errors(true);
  Generator gen(10);
  const Tensor probs = softmax(randn({4, 6}, kFloat64, &gen), 1);
  EXPECT_THROW(F::cross_entropy(probs, idx({0, 1, 2, 3})), Error);
  EXPECT_NO_THROW(F::cross_entropy(probs * 3.0, idx({0, 1, 2, 3})));  // rows sum to 3
}

// ---- nll_loss, mse_loss ----

TEST(Functional, NllLossOfLogSoftmaxIsCrossEntropy) {
  Generator gen(11);
  const Tensor t = idx({2, -100, 0, 1, 2, 0}, {2, 3});
  for (Reduction r : kReductions) {
    const Inputs in = leaves({{2, 3, 3}}, kFloat64, Layout::Transposed, gen);
    expect_matches_reference(
        [&](const Inputs& x) { return F::nll_loss(F::log_softmax(x[0], 1), t, -100, r); },
        [&](const Inputs& x) { return F::cross_entropy(x[0], t, -100, r); }, in, 1e-12, 1e-12,
        reduction_name(r));
    EXPECT_TRUE(
        autograd::gradcheck([&](const Inputs& x) { return F::nll_loss(x[0], t, -100, r); }, in));
  }
}

TEST(Functional, MseLossReductionsAndGradcheck) {
  Generator gen(12);
  for (Reduction r : kReductions) {
    const Inputs in = leaves({{3, 4}, {3, 4}}, kFloat64, Layout::Step2, gen);
    EXPECT_TRUE(
        autograd::gradcheck([&](const Inputs& x) { return F::mse_loss(x[0], x[1], r); }, in));
  }
  const Tensor a = tensor<double>({1, 2, 3}), b = tensor<double>({1, 0, 0});
  EXPECT_DOUBLE_EQ(F::mse_loss(a, b).item<double>(), 13.0 / 3);
  EXPECT_DOUBLE_EQ(F::mse_loss(a, b, Reduction::Sum).item<double>(), 13.0);
}

TEST(Functional, MseLossWarnsWhenTargetOnlyBroadcasts) {
  LoggingReset reset;
  std::vector<std::string> warnings;
  logging::WarningHandlerGuard guard([&](const std::string& m) { warnings.push_back(m); });
  F::mse_loss(zeros({4}), zeros({4, 1}));
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("(4, 4)"), std::string::npos) << warnings[0];
}

// ---- layer_norm, linear, embedding, activations ----

TEST(Functional, LayerNormGradcheckAndNormalises) {
  Generator gen(13);
  for (Layout layout : kAllLayouts) {
    const Inputs in = leaves({{3, 4, 5}, {4, 5}, {4, 5}}, kFloat64, layout, gen);
    EXPECT_TRUE(autograd::gradcheck(
        [](const Inputs& x) {
          return F::layer_norm(x[0], {4, 5}, x[1], x[2]);
        },
        in))
        << layout_name(layout);
  }
  const Tensor x = randn({6, 32}, kFloat64, &gen) * 3.0 + 2.0;
  const Tensor y = F::layer_norm(x, {32});
  EXPECT_TRUE(close(y.mean({1}), zeros({6}, kFloat64), 0, 1e-12));
  EXPECT_TRUE(close(y.var({1}, 0), ones({6}, kFloat64), 0, 1e-4));  // eps 1e-5 shrinks it
  EXPECT_THROW(F::layer_norm(x, {16}), ShapeError);
  EXPECT_THROW(F::layer_norm(x, {32}, ones({31}, kFloat64)), ShapeError);
}

TEST(Functional, LinearIsMatmulWithTransposedWeightPlusBias) {
  Generator gen(14);
  const Tensor x = randn({2, 3, 4}, kFloat64, &gen), w = randn({5, 4}, kFloat64, &gen);
  const Tensor b = randn({5}, kFloat64, &gen);
  EXPECT_TRUE(close(F::linear(x, w, b), matmul(x, w.t().contiguous()) + b, 1e-14, 1e-14));
  EXPECT_TRUE(close(F::linear(x, w), matmul(x, w.t().contiguous()), 1e-14, 1e-14));
  for (Layout layout : kAllLayouts) {
    const Inputs in = leaves({{3, 4}, {5, 4}, {5}}, kFloat64, layout, gen);
    EXPECT_TRUE(
        autograd::gradcheck([](const Inputs& v) { return F::linear(v[0], v[1], v[2]); }, in))
        << layout_name(layout);
  }
  EXPECT_THROW(F::linear(x, randn({5, 3}, kFloat64, &gen)), ShapeError);
  EXPECT_THROW(F::linear(x, w, zeros({4}, kFloat64)), ShapeError);
}

// With no input features (or no outputs) the gradients are zeros of the
// operands' shapes: the backward counts the rows instead of inferring them.
TEST(Functional, LinearGradientsWithAnEmptyFeatureDim) {
  for (const auto& [in, out] : {std::pair<int64_t, int64_t>{0, 5}, {4, 0}}) {
    const Tensor x = randn({3, 2, in}, kFloat64).requires_grad_(true);
    const Tensor w = randn({out, in}, kFloat64).requires_grad_(true);
    const Tensor b = randn({out}, kFloat64).requires_grad_(true);
    const auto grads = autograd::grad({F::linear(x, w, b).sum()}, {x, w, b});
    EXPECT_TRUE(equal(grads[0], zeros({3, 2, in}, kFloat64)));
    EXPECT_TRUE(equal(grads[1], zeros({out, in}, kFloat64)));
    EXPECT_TRUE(equal(grads[2], full({out}, 6.0, kFloat64)));
  }
}

TEST(Functional, EmbeddingPicksRowsAndChecksIds) {
  const Tensor w = arange(12, kFloat32).view({4, 3});
  const Tensor y = F::embedding(idx({3, 0, 3}, {1, 3}), w);
  ASSERT_EQ(y.sizes(), IntArrayRef({1, 3, 3}));
  EXPECT_EQ(y.to_vector<float>(), (std::vector<float>{9, 10, 11, 0, 1, 2, 9, 10, 11}));
  EXPECT_THROW(F::embedding(idx({4}), w), IndexError);
}

TEST(Functional, ActivationsForwardToTheCoreOps) {
  Generator gen(15);
  const Tensor x = randn({3, 5}, kFloat32, &gen);
  EXPECT_TRUE(equal(F::relu(x), relu(x)));
  EXPECT_TRUE(equal(F::silu(x), silu(x)));
  EXPECT_TRUE(equal(F::gelu(x), gelu(x)));
  EXPECT_TRUE(equal(F::softmax(x, 0), softmax(x, 0)));
  EXPECT_TRUE(equal(F::log_softmax(x, -1), log_softmax(x, -1)));
}

// ---- dropout ----

TEST(Functional, DropoutIsIdentityInEvalAndAtZero) {
  const Tensor x = ones({10, 10});
  EXPECT_TRUE(F::dropout(x, 0.5, false).is_same(x));
  EXPECT_TRUE(F::dropout(x, 0.0, true).is_same(x));
  EXPECT_TRUE(equal(F::dropout(x, 1.0, true), zeros({10, 10})));
  EXPECT_THROW(F::dropout(x, 1.5, true), ValueError);
}

TEST(Functional, DropoutScalesKeptValuesAndIsReproducible) {
  const Tensor x = ones({200, 100}, kFloat64).requires_grad_();
  Generator g1(42), g2(42);
  const Tensor a = F::dropout(x, 0.25, true, &g1);
  const Tensor b = F::dropout(x, 0.25, true, &g2);
  EXPECT_TRUE(equal(a, b));
  const std::vector<double> v = a.to_vector<double>();
  int64_t zeros_seen = 0;
  for (double e : v) {
    if (e == 0) {
      ++zeros_seen;
    } else {
      EXPECT_DOUBLE_EQ(e, 1 / 0.75);
    }
  }
  EXPECT_NEAR(double(zeros_seen) / double(v.size()), 0.25, 0.02);
  a.sum().backward();
  EXPECT_TRUE(equal(x.grad(), a.detach()));  // d/dx (x * mask) = mask
}

// ---- rms_norm ----

TEST(RmsNorm, FusedMatchesReferenceInEveryLayout) {
  Generator gen(20);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double rtol = dtype == kFloat64 ? 1e-12 : 1e-5, atol = dtype == kFloat64 ? 1e-12 : 1e-6;
    for (const DimVector& shape : {DimVector{4, 8}, DimVector{2, 3, 16}, DimVector{7}}) {
      for (Layout layout : kAllLayouts) {
        for (bool weighted : {true, false}) {
          Inputs in = leaves({shape}, dtype, layout, gen);
          if (weighted) in.push_back(leaves({{shape.back()}}, dtype, layout, gen)[0]);
          auto w = [&](const Inputs& x) { return x.size() > 1 ? x[1] : Tensor(); };
          expect_matches_reference(
              [&](const Inputs& x) { return F::rms_norm(x[0], w(x), 1e-5); },
              [&](const Inputs& x) { return F::rms_norm_reference(x[0], w(x), 1e-5); }, in, rtol,
              atol,
              std::string(to_string(dtype)) + " " + shape_str(shape) + " " + layout_name(layout) +
                  (weighted ? " weighted" : ""));
        }
      }
    }
  }
}

TEST(RmsNorm, Gradcheck) {
  Generator gen(21);
  for (Layout layout : kAllLayouts) {
    const Inputs in = leaves({{3, 5}, {5}}, kFloat64, layout, gen);
    EXPECT_TRUE(
        autograd::gradcheck([](const Inputs& x) { return F::rms_norm(x[0], x[1], 1e-3); }, in))
        << layout_name(layout);
    const Inputs in1 = leaves({{2, 2, 4}}, kFloat64, layout, gen);
    EXPECT_TRUE(
        autograd::gradcheck([](const Inputs& x) { return F::rms_norm(x[0], Tensor(), 1e-3); }, in1))
        << layout_name(layout);
  }
}

TEST(RmsNorm, SecondDerivativeGradcheck) {
  Generator gen(22);
  const Inputs in = leaves({{3, 4}, {4}}, kFloat64, Layout::Contiguous, gen);
  EXPECT_TRUE(gradgradcheck([](const Inputs& x) { return F::rms_norm(x[0], x[1], 1e-3); }, in));
  // ... and with respect to the weight, through x's gradient.
  EXPECT_TRUE(autograd::gradcheck(
      [](const Inputs& x) {
        const Tensor y = F::rms_norm(x[0], x[1], 1e-3);
        return autograd::grad({y}, {x[0]}, {ones_like(y)}, true, true)[0];
      },
      in));
}

TEST(RmsNorm, OnlyTheWeightMayRequireGrad) {
  Generator gen(23);
  const Tensor x = randn({4, 6}, kFloat64, &gen);
  const Tensor w = randn({6}, kFloat64, &gen).requires_grad_();
  F::rms_norm(x, w).sum().backward();
  const Tensor wr = w.detach().requires_grad_();
  F::rms_norm_reference(x, wr).sum().backward();
  EXPECT_TRUE(close(w.grad(), wr.grad(), 1e-12, 1e-12));
}

TEST(RmsNorm, WideRowsSameBitsForEveryThreadCount) {
  Generator gen(24);
  const Tensor x = randn({257, 300}, kFloat32, &gen);
  const Tensor w = randn({300}, kFloat32, &gen);
  auto run = [&](int n) {
    ThreadCount guard(n);
    Tensor xl = x.detach().requires_grad_(), wl = w.detach().requires_grad_();
    Tensor y = F::rms_norm(xl, wl);
    (y * y).sum().backward();
    return std::vector<Tensor>{y.detach(), xl.grad(), wl.grad()};
  };
  const auto one = run(1), many = run(4);
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(equal(one[i], many[i])) << i;
}

TEST(RmsNorm, RejectsBadWeight) {
  EXPECT_THROW(F::rms_norm(zeros({2, 4}), zeros({3})), ShapeError);
  EXPECT_THROW(F::rms_norm(zeros({2, 4}), zeros({4}, kFloat64)), DTypeError);
  EXPECT_THROW(F::rms_norm(zeros({2, 4}, kInt64), Tensor()), DTypeError);
}

// ---- scaled_dot_product_attention ----

// Attention by loops in float64: q (B, L, E), k (B, S, E), v (B, S, Ev);
// keep(i, j) false masks a score; add(b, i, j) is added.
Tensor naive_attention(const Tensor& q,
                       const Tensor& k,
                       const Tensor& v,
                       double scale,
                       const std::function<bool(int64_t, int64_t, int64_t)>& keep,
                       const std::function<double(int64_t, int64_t, int64_t)>& add) {
  const int64_t B = q.size(0), L = q.size(1), S = k.size(1), E = q.size(2), Ev = v.size(2);
  const auto qv = q.to_vector<double>(), kv = k.to_vector<double>(), vv = v.to_vector<double>();
  std::vector<double> out(size_t(B * L * Ev), 0.0);
  for (int64_t b = 0; b < B; ++b) {
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(static_cast<size_t>(S));
      double m = -INFINITY;
      for (int64_t j = 0; j < S; ++j) {
        double dot = 0;
        for (int64_t e = 0; e < E; ++e) {
          dot += qv[size_t((b * L + i) * E + e)] * kv[size_t((b * S + j) * E + e)];
        }
        s[size_t(j)] = keep(b, i, j) ? dot * scale + add(b, i, j) : -INFINITY;
        m = std::max(m, s[size_t(j)]);
      }
      double z = 0;
      for (double& e : s) z += (e = std::exp(e - m));
      for (int64_t j = 0; j < S; ++j) {
        for (int64_t e = 0; e < Ev; ++e) {
          out[size_t((b * L + i) * Ev + e)] += s[size_t(j)] / z * vv[size_t((b * S + j) * Ev + e)];
        }
      }
    }
  }
  return tensor<double>(out, {B, L, Ev});
}

TEST(Attention, MatchesNaiveLoopsForEveryMaskKind) {
  Generator gen(30);
  const int64_t B = 2, L = 3, S = 5, E = 4;
  const Tensor q = randn({B, L, E}, kFloat64, &gen), k = randn({B, S, E}, kFloat64, &gen);
  const Tensor v = randn({B, S, 6}, kFloat64, &gen);
  const double sc = 1 / std::sqrt(double(E));
  auto all = [](int64_t, int64_t, int64_t) { return true; };
  auto none = [](int64_t, int64_t, int64_t) { return 0.0; };
  using F::CausalAlignment;
  // plain
  EXPECT_TRUE(close(F::scaled_dot_product_attention(q, k, v),
                    naive_attention(q, k, v, sc, all, none), 1e-12, 1e-12));
  // custom scale
  EXPECT_TRUE(close(F::scaled_dot_product_attention(q, k, v, {}, 0, false, 0.7),
                    naive_attention(q, k, v, 0.7, all, none), 1e-12, 1e-12));
  // causal, both alignments (L = 3 < S = 5)
  EXPECT_TRUE(close(
      F::scaled_dot_product_attention(q, k, v, {}, 0, true, std::nullopt, CausalAlignment::TopLeft),
      naive_attention(
          q, k, v, sc, [](int64_t, int64_t i, int64_t j) { return j <= i; }, none),
      1e-12, 1e-12));
  EXPECT_TRUE(
      close(F::scaled_dot_product_attention(q, k, v, {}, 0, true, std::nullopt,
                                            CausalAlignment::BottomRight),
            naive_attention(
                q, k, v, sc, [&](int64_t, int64_t i, int64_t j) { return j <= i + S - L; }, none),
            1e-12, 1e-12));
  // bool mask (B, 1, S): per-batch key padding
  const Tensor pad =
      tensor<bool>({true, true, true, false, false, true, true, true, true, true}, {B, 1, S});
  const auto padv = pad.to_vector<double>();
  EXPECT_TRUE(
      close(F::scaled_dot_product_attention(q, k, v, pad),
            naive_attention(
                q, k, v, sc,
                [&](int64_t b, int64_t, int64_t j) { return padv[size_t(b * S + j)] != 0; }, none),
            1e-12, 1e-12));
  // float mask (L, S)
  const Tensor bias = randn({L, S}, kFloat64, &gen);
  const auto biasv = bias.to_vector<double>();
  EXPECT_TRUE(close(
      F::scaled_dot_product_attention(q, k, v, bias),
      naive_attention(q, k, v, sc, all,
                      [&](int64_t, int64_t i, int64_t j) { return biasv[size_t(i * S + j)]; }),
      1e-12, 1e-12));
}

TEST(Attention, CausalIsTopLeftWhenLEqualsS) {
  Generator gen(31);
  const Tensor q = randn({2, 4, 3}, kFloat64, &gen), k = randn({2, 4, 3}, kFloat64, &gen);
  const Tensor v = randn({2, 4, 3}, kFloat64, &gen);
  const Tensor keep = ones({4, 4}, kBool).tril();
  EXPECT_TRUE(close(F::scaled_dot_product_attention(q, k, v, {}, 0, true),
                    F::scaled_dot_product_attention(q, k, v, keep), 1e-14, 1e-14));
}

TEST(Attention, BottomRightDecodingMatchesTheFullSequence) {
  // The last m queries against all S keys (a KV-cache step) must equal the
  // last m rows of full causal self-attention.
  Generator gen(32);
  const Tensor q = randn({1, 2, 6, 4}, kFloat64, &gen), k = randn({1, 2, 6, 4}, kFloat64, &gen);
  const Tensor v = randn({1, 2, 6, 4}, kFloat64, &gen);
  const Tensor full = F::scaled_dot_product_attention(q, k, v, {}, 0, true);
  const Tensor step = F::scaled_dot_product_attention(
      q.narrow(2, 4, 2), k, v, {}, 0, true, std::nullopt, F::CausalAlignment::BottomRight);
  EXPECT_TRUE(close(step, full.narrow(2, 4, 2), 1e-14, 1e-14));
}

TEST(Attention, CausalWithUnequalLengthsNeedsAnAlignment) {
  const Tensor q = zeros({1, 2, 4}), k = zeros({1, 5, 4}), v = zeros({1, 5, 4});
  try {
    F::scaled_dot_product_attention(q, k, v, {}, 0, true);
    FAIL() << "no throw";
  } catch (const ValueError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("L = 2 != key length S = 5"), std::string::npos) << m;
    EXPECT_NE(m.find("top-left"), std::string::npos) << m;
    EXPECT_NE(m.find("BottomRight"), std::string::npos) << m;
  }
  EXPECT_THROW(F::scaled_dot_product_attention(q, k, v, ones({2, 5}, kBool), 0, true), ValueError);
}

TEST(Attention, RejectsBadShapesMasksAndDtypes) {
  const Tensor q = zeros({2, 3, 4}), k = zeros({2, 5, 4}), v = zeros({2, 5, 6});
  EXPECT_THROW(F::scaled_dot_product_attention(q, zeros({2, 5, 3}), v), ShapeError);
  EXPECT_THROW(F::scaled_dot_product_attention(q, k, zeros({2, 4, 6})), ShapeError);
  EXPECT_THROW(F::scaled_dot_product_attention(q, k, v, ones({3, 4}, kBool)), ShapeError);
  EXPECT_THROW(F::scaled_dot_product_attention(q, k, v, ones({3, 5}, kInt64)), DTypeError);
  EXPECT_THROW(F::scaled_dot_product_attention(q, k.to(kFloat64), v), DTypeError);
}

TEST(Attention, FullyMaskedRowIsNaN) {
  Generator gen(33);
  const Tensor q = randn({2, 3}, kFloat32, &gen), k = randn({4, 3}, kFloat32, &gen);
  const Tensor v = randn({4, 2}, kFloat32, &gen);
  const Tensor mask = tensor<bool>({1, 1, 0, 0, 0, 0, 0, 0}, {2, 4});
  const std::vector<float> y = F::scaled_dot_product_attention(q, k, v, mask).to_vector<float>();
  EXPECT_FALSE(std::isnan(y[0]));
  EXPECT_TRUE(std::isnan(y[2]) && std::isnan(y[3]));
}

TEST(Attention, Gradcheck) {
  Generator gen(34);
  for (Layout layout : {Layout::Contiguous, Layout::Transposed, Layout::Step2}) {
    const Inputs in = leaves({{2, 3, 4}, {2, 5, 4}, {2, 5, 3}, {3, 5}}, kFloat64, layout, gen);
    EXPECT_TRUE(autograd::gradcheck(
        [](const Inputs& x) { return F::scaled_dot_product_attention(x[0], x[1], x[2], x[3]); },
        in))
        << layout_name(layout);
    EXPECT_TRUE(autograd::gradcheck(
        [](const Inputs& x) {
          return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0, true, 0.5,
                                                 F::CausalAlignment::BottomRight);
        },
        in))
        << layout_name(layout);
  }
}

TEST(Attention, DropoutOnProbabilitiesIsSeededAndScaled) {
  Generator gen(35);
  const Tensor q = randn({2, 4, 8}, kFloat64, &gen), k = randn({2, 4, 8}, kFloat64, &gen);
  const Tensor v = ones({2, 4, 1}, kFloat64);  // output = row sums of the dropped probabilities
  Generator g1(5), g2(5);
  const Tensor a =
      F::scaled_dot_product_attention(q, k, v, {}, 0.5, false, std::nullopt, std::nullopt, &g1);
  const Tensor b =
      F::scaled_dot_product_attention(q, k, v, {}, 0.5, false, std::nullopt, std::nullopt, &g2);
  EXPECT_TRUE(equal(a, b));
  EXPECT_FALSE(close(a, ones({2, 4, 1}, kFloat64), 1e-6, 1e-6));  // something was dropped
  // Kept probabilities are scaled by 1 / (1 - p): row sums average to 1.
  const Tensor qs = randn({1, 2000, 8}, kFloat64, &gen), ks = randn({1, 16, 8}, kFloat64, &gen);
  const Tensor sums = F::scaled_dot_product_attention(qs, ks, ones({1, 16, 1}, kFloat64), {}, 0.5,
                                                      false, std::nullopt, std::nullopt, &g1);
  EXPECT_NEAR(sums.mean().item<double>(), 1.0, 0.05);
}

// ---- views the Llama attention passes to rope and attention ----

enum class HeadLayout { Contiguous, Heads, KvCache };

const char* head_layout_name(HeadLayout l) {
  return l == HeadLayout::Contiguous ? "contiguous" : l == HeadLayout::Heads ? "heads" : "kv-cache";
}

// A (B, H, T, D) leaf: contiguous; the heads view (B, T, H, D).transpose(1, 2)
// of one projection; or the first T positions of a (B, H, T + 3, D) cache.
Tensor head_leaf(IntArrayRef bhtd, HeadLayout layout, ScalarType dtype, Generator& gen) {
  const int64_t B = bhtd[0], H = bhtd[1], T = bhtd[2], D = bhtd[3];
  Tensor t;
  switch (layout) {
    case HeadLayout::Contiguous:
      t = randn({B, H, T, D}, dtype, &gen);
      break;
    case HeadLayout::Heads:
      t = randn({B, T, H, D}, dtype, &gen).transpose(1, 2);
      break;
    case HeadLayout::KvCache:
      t = randn({B, H, T + 3, D}, dtype, &gen).narrow(2, 0, T);
      break;
  }
  return t.detach().requires_grad_();
}

// ---- rotary_embedding ----

// Feature order that maps half-split layout to interleaved: pair i of the
// interleaved convention is (2i, 2i+1); of half-split (i, i + D/2).
Tensor half_split_order(int64_t D) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < D / 2; ++i) order.push_back(2 * i);
  for (int64_t i = 0; i < D / 2; ++i) order.push_back(2 * i + 1);
  return idx(order);
}

TEST(Rope, ConventionsAgreeUpToAPermutationOfTheLastDim) {
  Generator gen(40);
  const int64_t D = 8;
  const Tensor x = randn({2, 5, D}, kFloat64, &gen);
  const Tensor p = half_split_order(D);
  // Interleaved on x equals half-split on x with features reordered.
  const Tensor inter = F::rotary_embedding(x, 3, 10000.0, F::RopeConvention::Interleaved);
  const Tensor half =
      F::rotary_embedding(x.index_select(-1, p), 3, 10000.0, F::RopeConvention::HalfSplit);
  EXPECT_TRUE(close(half, inter.index_select(-1, p), 1e-14, 1e-14));
}

TEST(Rope, DotProductDependsOnlyOnRelativePosition) {
  Generator gen(41);
  const int64_t D = 16;
  const Tensor q = randn({1, D}, kFloat64, &gen), k = randn({1, D}, kFloat64, &gen);
  for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
    auto score = [&](int64_t pq, int64_t pk) {
      return (F::rotary_embedding(q, pq, 10000.0, conv) * F::rotary_embedding(k, pk, 10000.0, conv))
          .sum()
          .item<double>();
    };
    for (int64_t delta : {0, 1, 5, -3}) {
      const double ref = score(10 + delta, 10);
      for (int64_t p : {0, 3, 57, 1000}) {
        if (p + delta < 0) continue;
        EXPECT_NEAR(score(p + delta, p), ref, 1e-10) << "delta " << delta << " p " << p;
      }
    }
    // ... and it does depend on it.
    EXPECT_GT(std::fabs(score(4, 0) - score(0, 0)), 1e-3);
  }
}

TEST(Rope, RotatesByPlusAngle) {
  // D = 2: one pair, theta_0 = 1, so at position p, (1, 0) -> (cos p, sin p).
  const Tensor x = tensor<double>({1, 0, 1, 0, 1, 0}, {3, 2});
  for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
    const std::vector<double> y = F::rotary_embedding(x, 2, 10000.0, conv).to_vector<double>();
    for (int64_t t = 0; t < 3; ++t) {
      EXPECT_NEAR(y[size_t(2 * t)], std::cos(double(t + 2)), 1e-15);
      EXPECT_NEAR(y[size_t(2 * t + 1)], std::sin(double(t + 2)), 1e-15);
    }
  }
}

TEST(Rope, OffsetContinuesTheSequence) {
  // Rotating the last rows with position_offset equals rotating the whole
  // sequence and keeping those rows: what KV-cache decoding relies on.
  Generator gen(42);
  const Tensor x = randn({2, 9, 6}, kFloat32, &gen);
  for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
    const Tensor full = F::rotary_embedding(x, 0, 10000.0, conv);
    EXPECT_TRUE(
        equal(F::rotary_embedding(x.narrow(1, 7, 2), 7, 10000.0, conv), full.narrow(1, 7, 2)));
  }
}

TEST(Rope, FusedMatchesReferenceInEveryLayout) {
  Generator gen(43);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double rtol = dtype == kFloat64 ? 1e-12 : 1e-5, atol = dtype == kFloat64 ? 1e-12 : 1e-6;
    for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
      for (Layout layout : kAllLayouts) {
        const Inputs in = leaves({{2, 3, 5, 8}}, dtype, layout, gen);
        expect_matches_reference(
            [&](const Inputs& x) { return F::rotary_embedding(x[0], 11, 500.0, conv); },
            [&](const Inputs& x) { return F::rotary_embedding_reference(x[0], 11, 500.0, conv); },
            in, rtol, atol,
            std::string(to_string(dtype)) + " " + layout_name(layout) +
                (conv == F::RopeConvention::Interleaved ? " interleaved" : " half-split"));
      }
    }
  }
}

TEST(Rope, GradcheckFirstAndSecondOrder) {
  Generator gen(44);
  for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
    const Inputs in = leaves({{2, 3, 6}}, kFloat64, Layout::Transposed, gen);
    auto fn = [conv](const Inputs& x) { return F::rotary_embedding(x[0], 2, 100.0, conv); };
    EXPECT_TRUE(autograd::gradcheck(fn, in));
    EXPECT_TRUE(gradgradcheck([fn](const Inputs& x) { return fn(x) * fn(x); }, in));
    EXPECT_TRUE(autograd::gradcheck(
        [conv](const Inputs& x) { return F::rotary_embedding_reference(x[0], 2, 100.0, conv); },
        in));
  }
}

TEST(Rope, MatchesTheReferenceOnHeadsAndKvCacheViews) {
  Generator gen(45);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double rtol = dtype == kFloat64 ? 1e-12 : 1e-5, atol = dtype == kFloat64 ? 1e-12 : 1e-6;
    for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
      for (HeadLayout layout : {HeadLayout::Contiguous, HeadLayout::Heads, HeadLayout::KvCache}) {
        expect_matches_reference(
            [&](const Inputs& x) { return F::rotary_embedding(x[0], 4, 500.0, conv); },
            [&](const Inputs& x) { return F::rotary_embedding_reference(x[0], 4, 500.0, conv); },
            {head_leaf({2, 3, 5, 8}, layout, dtype, gen)}, rtol, atol,
            std::string(to_string(dtype)) + " " + head_layout_name(layout) +
                (conv == F::RopeConvention::Interleaved ? " interleaved" : " half-split"));
      }
    }
  }
}

// The heads view is rotated where it lies and stays a heads view, forward
// and backward, so neither direction copies; a view that is not dense (the
// cache) gives a row-major result.
TEST(Rope, OutputAndGradientKeepTheHeadsLayout) {
  Generator gen(46);
  const Tensor x = head_leaf({2, 3, 5, 8}, HeadLayout::Heads, kFloat32, gen);
  const Tensor y = F::rotary_embedding(x, 2);
  EXPECT_EQ(y.strides(), x.strides());
  EXPECT_TRUE(equal(y, F::rotary_embedding(x.contiguous(), 2)));
  const Tensor gy = randn({2, 5, 3, 8}, kFloat32, &gen).transpose(1, 2);
  const Tensor gx = autograd::grad({y}, {x}, {gy})[0];
  EXPECT_EQ(gx.strides(), x.strides());
  EXPECT_TRUE(equal(gx, autograd::grad({F::rotary_embedding(x, 2)}, {x}, {gy.contiguous()})[0]));
  const Tensor cached = head_leaf({2, 3, 5, 8}, HeadLayout::KvCache, kFloat32, gen);
  EXPECT_TRUE(F::rotary_embedding(cached, 2).is_contiguous());
}

TEST(Rope, GradcheckOnTheHeadsView) {
  Generator gen(47);
  for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
    const Inputs in = {head_leaf({2, 3, 4, 6}, HeadLayout::Heads, kFloat64, gen)};
    auto fn = [conv](const Inputs& x) { return F::rotary_embedding(x[0], 3, 100.0, conv); };
    EXPECT_TRUE(autograd::gradcheck(fn, in));
    EXPECT_TRUE(gradgradcheck([fn](const Inputs& x) { return fn(x) * fn(x); }, in));
  }
}

// Angle tables given by the caller: the built-in angles passed as tables
// give the built-in rotation (and -sin its inverse); any layout; gradcheck.
TEST(Rope, TablesGiveTheSameRotation) {
  Generator gen(48);
  const int64_t T = 5, D = 8;
  std::vector<double> cosines, sines;
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < D / 2; ++i) {
      const double angle = double(t + 2) * std::pow(100.0, -2.0 * double(i) / double(D));
      cosines.push_back(std::cos(angle));
      sines.push_back(std::sin(angle));
    }
  }
  const Tensor c = tensor<double>(cosines, {T, D / 2}), s = tensor<double>(sines, {T, D / 2});
  for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
    for (Layout layout : kAllLayouts) {
      const Tensor x = make_input({3, T, D}, kFloat64, layout, Domain::Any, gen);
      const Tensor y = F::rotary_embedding(x, c, s, conv);
      EXPECT_TRUE(close(y, F::rotary_embedding(x, 2, 100.0, conv), 1e-12, 1e-12))
          << layout_name(layout);
      EXPECT_TRUE(close(F::rotary_embedding(y, c, -s, conv), x, 1e-12, 1e-12));
    }
    const Inputs in = leaves({{2, T, D}}, kFloat64, Layout::Transposed, gen);
    EXPECT_TRUE(autograd::gradcheck(
        [&](const Inputs& x) { return F::rotary_embedding(x[0], c, s.to(kFloat32), conv); }, in));
  }
  EXPECT_THROW(F::rotary_embedding(zeros({3, T, D}), c.narrow(0, 0, 4), s), ShapeError);
  EXPECT_THROW(F::rotary_embedding(zeros({3, T, D}), c, Tensor()), ShapeError);
}

// float32 rotates with cos and sin rounded once to float32: the same values
// through the float64 kernel agree to float32 rounding, forward and backward,
// in both forms. D = 2, 6, 18 and 130 leave partial vector blocks; the row
// count (3 * 7 * 11) is odd, and at D = 130 with two or more threads the rows
// split inside a matrix. The contiguous, heads and kv-cache views are read in
// place, the transposed one through a copy.
TEST(Rope, Float32AgreesWithFloat64) {
  Generator gen(49);
  const int64_t B = 3, H = 7, T = 11;
  for (int64_t D : {2, 6, 18, 64, 130}) {
    const Tensor angles = randn({T, D / 2}, kFloat64, &gen) * 100.0;
    const Tensor c = stride::cos(angles), s = stride::sin(angles);
    for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
      const std::vector<std::pair<std::string, Tensor>> inputs = {
          {"contiguous", head_leaf({B, H, T, D}, HeadLayout::Contiguous, kFloat32, gen)},
          {"heads", head_leaf({B, H, T, D}, HeadLayout::Heads, kFloat32, gen)},
          {"kv-cache", head_leaf({B, H, T, D}, HeadLayout::KvCache, kFloat32, gen)},
          {"transposed", make_input({B, H, T, D}, kFloat32, Layout::Transposed, Domain::Any, gen)
                             .detach()
                             .requires_grad_()}};
      for (const auto& [name, x32] : inputs) {
        const Tensor x64 = x32.detach().to(kFloat64).requires_grad_();
        const Tensor gy = randn({B, H, T, D}, kFloat32, &gen);
        for (bool given_tables : {false, true}) {
          auto rope = [&](const Tensor& x) {
            return given_tables ? F::rotary_embedding(x, c, s, conv)
                                : F::rotary_embedding(x, 1000, 10000.0, conv);
          };
          const std::string what =
              "D " + std::to_string(D) + " " + name +
              (conv == F::RopeConvention::Interleaved ? " interleaved" : " half-split") +
              (given_tables ? " tables" : " positions");
          const Tensor y32 = rope(x32), y64 = rope(x64);
          ASSERT_EQ(y32.dtype(), kFloat32) << what;
          EXPECT_TRUE(close(y32.to(kFloat64), y64, 1e-6, 1e-6)) << what << " (forward)";
          const Tensor g32 = autograd::grad({y32}, {x32}, {gy})[0];
          const Tensor g64 = autograd::grad({y64}, {x64}, {gy.to(kFloat64)})[0];
          EXPECT_TRUE(close(g32.to(kFloat64), g64, 1e-6, 1e-6)) << what << " (backward)";
        }
      }
    }
  }
}

// Every element takes the same vector instructions wherever a thread's rows
// start (here inside a matrix), so the bits do not depend on the split.
TEST(Rope, SameBitsForEveryThreadCount) {
  Generator gen(50);
  const Tensor x = head_leaf({3, 7, 11, 130}, HeadLayout::Heads, kFloat32, gen);
  const Tensor gy = randn({3, 7, 11, 130}, kFloat32, &gen);
  for (auto conv : {F::RopeConvention::Interleaved, F::RopeConvention::HalfSplit}) {
    auto run = [&](int n) {
      ThreadCount guard(n);
      const Tensor y = F::rotary_embedding(x, 1000, 10000.0, conv);
      return std::make_pair(y.detach(), autograd::grad({y}, {x}, {gy})[0]);
    };
    const auto one = run(1), many = run(4);
    EXPECT_TRUE(equal(one.first, many.first));
    EXPECT_TRUE(equal(one.second, many.second));
  }
}

TEST(Rope, RejectsOddFeatureDimAndNegativeOffset) {
  EXPECT_THROW(F::rotary_embedding(zeros({3, 5})), ShapeError);
  EXPECT_THROW(F::rotary_embedding(zeros({4})), ShapeError);
  EXPECT_THROW(F::rotary_embedding(zeros({3, 4}), -1), ValueError);
  EXPECT_THROW(F::rotary_embedding(zeros({3, 4}, kInt64)), DTypeError);
}

}  // namespace
}  // namespace stride::testing

// ---- swiglu ----

namespace stride::testing {
namespace {

TEST(SwiGLU, FusedMatchesReferenceInEveryLayout) {
  Generator gen(40);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double rtol = dtype == kFloat64 ? 1e-12 : 1e-5, atol = dtype == kFloat64 ? 1e-12 : 1e-6;
    // Whole vector blocks only, with a partial one, a partial one alone, and
    // several parallel tasks (Note [Register-width swiglu]).
    for (const DimVector& shape : {DimVector{4, 8}, DimVector{2, 3, 16}, DimVector{5, 9},
                                   DimVector{7}, DimVector{3, 3001}}) {
      for (Layout layout : kAllLayouts) {
        const Inputs in = leaves({shape, shape}, dtype, layout, gen);
        expect_matches_reference(
            [](const Inputs& x) { return F::swiglu(x[0], x[1]); },
            [](const Inputs& x) { return F::swiglu_reference(x[0], x[1]); }, in, rtol, atol,
            std::string(to_string(dtype)) + " " + shape_str(shape) + " " + layout_name(layout));
      }
    }
  }
}

TEST(SwiGLU, GradcheckToSecondOrder) {
  Generator gen(41);
  for (Layout layout : kAllLayouts) {
    const Inputs in = leaves({{3, 5}, {3, 5}}, kFloat64, layout, gen);
    EXPECT_TRUE(autograd::gradcheck([](const Inputs& x) { return F::swiglu(x[0], x[1]); }, in))
        << layout_name(layout);
  }
  const Inputs in = leaves({{2, 4}, {2, 4}}, kFloat64, Layout::Contiguous, gen);
  EXPECT_TRUE(gradgradcheck([](const Inputs& x) { return F::swiglu(x[0], x[1]); }, in));
}

TEST(SwiGLU, RefusesMismatchedShapes) {
  EXPECT_THROW(F::swiglu(zeros({2, 3}), zeros({3})), ShapeError);
  EXPECT_THROW(F::swiglu(zeros({2}), zeros({2}, kFloat64)), DTypeError);
  EXPECT_THROW(F::swiglu(zeros({2}), zeros({2}), ones({2})), ShapeError);
  EXPECT_THROW(F::swiglu(zeros({2}), zeros({2}), ones({1}, kFloat64)), DTypeError);
  EXPECT_THROW(F::swiglu(zeros({2}), zeros({2}), Tensor()), ValueError);
}

// A learnable beta, one element, as a leaf of shape (1) or ().
Tensor beta_leaf(double value, ScalarType dtype, bool scalar_shape = false) {
  Tensor b = full(scalar_shape ? DimVector{} : DimVector{1}, value, dtype);
  return b.requires_grad_();
}

TEST(SwiGLU, WithBetaMatchesReferenceInEveryLayout) {
  Generator gen(42);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double rtol = dtype == kFloat64 ? 1e-12 : 1e-5, atol = dtype == kFloat64 ? 1e-12 : 1e-5;
    // 4101 elements: a second block of beta's gradient sum, and a vector tail.
    for (const DimVector& shape : {DimVector{4, 8}, DimVector{2, 3, 16}, DimVector{3, 1367}}) {
      for (Layout layout : kAllLayouts) {
        for (double beta : {0.7, -1.3}) {
          Inputs in = leaves({shape, shape}, dtype, layout, gen);
          in.push_back(beta_leaf(beta, dtype, shape.size() == 3));
          expect_matches_reference(
              [](const Inputs& x) { return F::swiglu(x[0], x[1], x[2]); },
              [](const Inputs& x) { return F::swiglu_reference(x[0], x[1], x[2]); }, in, rtol, atol,
              std::string(to_string(dtype)) + " " + shape_str(shape) + " " + layout_name(layout) +
                  " beta " + std::to_string(beta));
        }
      }
    }
  }
}

TEST(SwiGLU, BetaOneIsSilu) {
  Generator gen(43);
  const Inputs in = leaves({{5, 37}, {5, 37}}, kFloat32, Layout::Transposed, gen);
  const Tensor beta = beta_leaf(1.0, kFloat32);
  const Tensor a = F::swiglu(in[0], in[1]), b = F::swiglu(in[0], in[1], beta);
  EXPECT_TRUE(equal(a, b));
  const Tensor gout = randn(a.sizes(), kFloat32, &gen);
  const auto ga = autograd::grad({a}, {in[0], in[1]}, {gout});
  const auto gb = autograd::grad({b}, {in[0], in[1]}, {gout});
  EXPECT_TRUE(equal(ga[0], gb[0]));
  EXPECT_TRUE(equal(ga[1], gb[1]));
}

TEST(SwiGLU, WithBetaGradcheckToSecondOrder) {
  Generator gen(44);
  for (Layout layout : kAllLayouts) {
    Inputs in = leaves({{3, 5}, {3, 5}}, kFloat64, layout, gen);
    in.push_back(beta_leaf(0.8, kFloat64));
    EXPECT_TRUE(
        autograd::gradcheck([](const Inputs& x) { return F::swiglu(x[0], x[1], x[2]); }, in))
        << layout_name(layout);
  }
  // Second order with respect to each input in turn (gradgradcheck
  // differentiates the first input's gradient).
  Inputs in = leaves({{2, 4}, {2, 4}}, kFloat64, Layout::Contiguous, gen);
  in.push_back(beta_leaf(-0.6, kFloat64));
  for (int first = 0; first < 3; ++first) {
    Inputs rotated = {in[size_t(first)], in[size_t((first + 1) % 3)], in[size_t((first + 2) % 3)]};
    EXPECT_TRUE(gradgradcheck(
        [first](const Inputs& x) {
          const Tensor* args[3];
          for (int i = 0; i < 3; ++i) args[(first + i) % 3] = &x[size_t(i)];
          return F::swiglu(*args[0], *args[1], *args[2]);
        },
        rotated))
        << "second order through input " << first;
  }
}

// beta's gradient sums fixed blocks in a fixed order: the same bits at 1 and
// 2 threads, over several blocks.
TEST(SwiGLU, WithBetaIsThreadCountInvariant) {
  Generator gen(45);
  Inputs in = leaves({{5, 3001}, {5, 3001}}, kFloat32, Layout::Contiguous, gen);
  in.push_back(beta_leaf(1.7, kFloat32));
  expect_thread_count_invariant([](const Inputs& x) { return F::swiglu(x[0], x[1], x[2]); }, in,
                                randn({5, 3001}, kFloat32, &gen));
}

}  // namespace
}  // namespace stride::testing

// ---- fused attention ----

namespace stride::testing {
namespace {

struct AttentionCase {
  DimVector q, k, v;
  bool causal;
  std::optional<F::CausalAlignment> alignment;
};

const std::vector<AttentionCase>& attention_cases() {
  static const std::vector<AttentionCase> cases = {
      {{2, 3, 5, 4}, {2, 3, 5, 4}, {2, 3, 5, 6}, true, std::nullopt},
      {{2, 3, 5, 4}, {2, 3, 5, 4}, {2, 3, 5, 4}, false, std::nullopt},
      {{4, 3, 8}, {4, 7, 8}, {4, 7, 8}, true, F::CausalAlignment::BottomRight},  // KV-cache decode
      {{1, 6, 4}, {1, 4, 4}, {1, 4, 4}, true, F::CausalAlignment::TopLeft},
      {{1, 4}, {1, 4}, {1, 4}, true, std::nullopt},  // one query, one key, no batch dims
      // The backward reads the forward's probabilities while a row of scores
      // is no longer than its q and output rows (S <= E + Ev, all of the
      // above) and recomputes them beyond (Note [Fused attention]).
      {{2, 8, 4}, {2, 8, 4}, {2, 8, 4}, true, std::nullopt},
      {{2, 9, 4}, {2, 9, 4}, {2, 9, 4}, true, std::nullopt},
      // Rows of scores longer than a vector with a partial one after
      // (Note [Register width]), kept and recomputed.
      {{2, 19, 12}, {2, 19, 12}, {2, 19, 12}, true, std::nullopt},
      {{1, 21, 8}, {1, 21, 8}, {1, 21, 8}, false, std::nullopt},
  };
  return cases;
}

// The fused kernel against the composed reference, forward and gradients.
void expect_attention_matches_reference(const AttentionCase& c,
                                        ScalarType dtype,
                                        Layout layout,
                                        Generator& gen) {
  const double tol = dtype == kFloat64 ? 1e-12 : 2e-5;
  const Inputs in = leaves({c.q, c.k, c.v}, dtype, layout, gen);
  expect_matches_reference(
      [&](const Inputs& x) {
        return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, c.causal, std::nullopt,
                                               c.alignment);
      },
      [&](const Inputs& x) {
        return F::scaled_dot_product_attention_reference(x[0], x[1], x[2], {}, 0.0, c.causal,
                                                         std::nullopt, c.alignment);
      },
      in, tol, tol,
      std::string(to_string(dtype)) + " q" + shape_str(c.q) + " k" + shape_str(c.k) + " " +
          layout_name(layout) + (c.causal ? " causal" : ""));
}

TEST(FusedAttention, MatchesTheComposedReferenceInEveryLayout) {
  Generator gen(50);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    for (const AttentionCase& c : attention_cases()) {
      for (Layout layout : kAllLayouts) expect_attention_matches_reference(c, dtype, layout, gen);
    }
  }
}

TEST(FusedAttention, GradcheckToSecondOrder) {
  Generator gen(51);
  for (const AttentionCase& c : attention_cases()) {
    const Inputs in = leaves({c.q, c.k, c.v}, kFloat64, Layout::Transposed, gen);
    auto fn = [&](const Inputs& x) {
      return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, c.causal, 0.7, c.alignment);
    };
    EXPECT_TRUE(autograd::gradcheck(fn, in)) << shape_str(c.q);
  }
  const AttentionCase& c = attention_cases()[0];
  const Inputs in = leaves({{1, 3, 2}, {1, 3, 2}, {1, 3, 2}}, kFloat64, Layout::Contiguous, gen);
  EXPECT_TRUE(gradgradcheck(
      [&](const Inputs& x) {
        return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, c.causal);
      },
      in));
}

// Longer sequences run in blocks of query rows whose GEMMs stop at the last
// visible key: several blocks, blocks straddling the bottom-right diagonal,
// and a block mixing rows without any visible key (NaN) with normal rows.
TEST(FusedAttention, CausalBlocksMatchTheReference) {
  Generator gen(53);
  const std::vector<AttentionCase> cases = {
      {{1, 2, 150, 8}, {1, 2, 150, 8}, {1, 2, 150, 6}, true, std::nullopt},
      {{2, 70, 8}, {2, 100, 8}, {2, 100, 8}, true, F::CausalAlignment::BottomRight},
      {{1, 140, 4}, {1, 100, 4}, {1, 100, 4}, true, F::CausalAlignment::BottomRight},
      {{1, 140, 4}, {1, 100, 4}, {1, 100, 4}, true, F::CausalAlignment::TopLeft},
      // Keys 70-99 are seen by no query: their dk and dv rows are zeros.
      {{2, 70, 8}, {2, 100, 8}, {2, 100, 8}, true, F::CausalAlignment::TopLeft},
      {{1, 130, 8}, {1, 90, 8}, {1, 90, 8}, false, std::nullopt},
  };
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    for (const AttentionCase& c : cases) {
      for (Layout layout : {Layout::Contiguous, Layout::Transposed}) {
        expect_attention_matches_reference(c, dtype, layout, gen);
      }
    }
  }
}

// Bottom-right alignment with more queries than keys leaves the first rows
// without a visible key: NaN there, as the composed path and PyTorch.
TEST(FusedAttention, RowsWithoutVisibleKeysAreNaNLikeTheReference) {
  const Tensor q = randn({1, 5, 4}), k = randn({1, 3, 4}), v = randn({1, 3, 4});
  const Tensor fused = F::scaled_dot_product_attention(q, k, v, {}, 0.0, true, std::nullopt,
                                                       F::CausalAlignment::BottomRight);
  const Tensor ref = F::scaled_dot_product_attention_reference(q, k, v, {}, 0.0, true, std::nullopt,
                                                               F::CausalAlignment::BottomRight);
  for (int64_t i = 0; i < 5; ++i) {
    const bool nan_row = std::isnan(fused[0][i][0].item<double>());
    EXPECT_EQ(nan_row, i < 2) << i;
    EXPECT_EQ(std::isnan(ref[0][i][0].item<double>()), nan_row);
  }
  EXPECT_TRUE(allclose(fused.narrow(1, 2, 3), ref.narrow(1, 2, 3), 1e-5, 1e-6));
}

// q, k, v (B, H, T, Dh) as the Llama attention passes them: heads views of
// the projections, or, when decoding, k and v narrowed from the KV cache
// (L != S, bottom-right aligned).
struct HeadsCase {
  DimVector q, k, v;
  HeadLayout q_layout, kv_layout;
  std::optional<F::CausalAlignment> alignment;
};

const std::vector<HeadsCase>& heads_cases() {
  static const std::vector<HeadsCase> cases = {
      {{2, 3, 5, 4},
       {2, 3, 5, 4},
       {2, 3, 5, 6},
       HeadLayout::Heads,
       HeadLayout::Heads,
       std::nullopt},
      {{2, 3, 2, 4},
       {2, 3, 6, 4},
       {2, 3, 6, 4},
       HeadLayout::Heads,
       HeadLayout::KvCache,
       F::CausalAlignment::BottomRight},
      {{2, 3, 1, 4},
       {2, 3, 6, 4},
       {2, 3, 6, 4},
       HeadLayout::Heads,
       HeadLayout::KvCache,
       F::CausalAlignment::BottomRight},
      {{2, 3, 5, 4},
       {2, 3, 5, 4},
       {2, 3, 5, 4},
       HeadLayout::Contiguous,
       HeadLayout::Contiguous,
       std::nullopt},
  };
  return cases;
}

Inputs heads_leaves(const HeadsCase& c, ScalarType dtype, Generator& gen) {
  return {head_leaf(c.q, c.q_layout, dtype, gen), head_leaf(c.k, c.kv_layout, dtype, gen),
          head_leaf(c.v, c.kv_layout, dtype, gen)};
}

Tensor causal_attention(const Inputs& x, std::optional<F::CausalAlignment> alignment) {
  return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, 0.0, true, std::nullopt, alignment);
}

TEST(FusedAttention, MatchesTheReferenceOnHeadsAndKvCacheViews) {
  Generator gen(52);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 2e-5;
    for (const HeadsCase& c : heads_cases()) {
      expect_matches_reference([&](const Inputs& x) { return causal_attention(x, c.alignment); },
                               [&](const Inputs& x) {
                                 return F::scaled_dot_product_attention_reference(
                                     x[0], x[1], x[2], {}, 0.0, true, std::nullopt, c.alignment);
                               },
                               heads_leaves(c, dtype, gen), tol, tol,
                               std::string(to_string(dtype)) + " q" + shape_str(c.q) + " " +
                                   head_layout_name(c.q_layout) + ", k" + shape_str(c.k) + " " +
                                   head_layout_name(c.kv_layout));
    }
  }
}

// Note [Row layout]: for heads views, out is (B, L, H, Ev) in memory, so the
// model's out.transpose(1, 2).reshape({B, L, H * Ev}) is free, and dq, dk,
// dv are heads views too; a narrowed cache is not dense, so its gradient
// is row-major.
TEST(FusedAttention, OutputAndGradientsFollowTheInputLayouts) {
  Generator gen(53);
  for (const HeadsCase& c : heads_cases()) {
    const Inputs in = heads_leaves(c, kFloat32, gen);
    const Tensor out = causal_attention(in, c.alignment);
    const bool heads = c.q_layout == HeadLayout::Heads;
    EXPECT_TRUE(heads ? out.transpose(1, 2).is_contiguous() : out.is_contiguous())
        << shape_str(out.strides());
    const Tensor gout = randn({c.q[0], c.q[2], c.q[1], c.v[3]}, kFloat32, &gen).transpose(1, 2);
    const auto grads = autograd::grad({out}, in, {gout});
    for (size_t i = 0; i < in.size(); ++i) {
      const bool heads_in = (i == 0 ? c.q_layout : c.kv_layout) == HeadLayout::Heads;
      EXPECT_TRUE(heads_in ? grads[i].transpose(1, 2).is_contiguous() : grads[i].is_contiguous())
          << "gradient " << i << " " << shape_str(grads[i].strides());
    }
  }
}

TEST(FusedAttention, GradcheckOnHeadsAndKvCacheViews) {
  Generator gen(54);
  for (const HeadsCase& c : heads_cases()) {
    const Inputs in = heads_leaves(c, kFloat64, gen);
    EXPECT_TRUE(
        autograd::gradcheck([&](const Inputs& x) { return causal_attention(x, c.alignment); }, in))
        << shape_str(c.q);
  }
}

// ---- fused attention with dropout ----

constexpr double kAttentionDropout = 0.3;

// Expects the fused kernel to drop exactly the elements the composed
// reference drops from the same generator state: equal outputs and
// gradients, and both generators left in the same state.
void expect_dropout_matches_reference(const Inputs& in,
                                      bool causal,
                                      std::optional<F::CausalAlignment> alignment,
                                      double tol,
                                      const std::string& what) {
  Generator fused_gen(60), reference_gen(60);
  expect_matches_reference(
      [&](const Inputs& x) {
        const Tensor y = F::scaled_dot_product_attention(
            x[0], x[1], x[2], {}, kAttentionDropout, causal, std::nullopt, alignment, &fused_gen);
        EXPECT_TRUE(y.grad_fn() && y.grad_fn()->name() == "ScaledDotProductAttentionBackward")
            << what << ": the fused kernel did not run";
        return y;
      },
      [&](const Inputs& x) {
        return F::scaled_dot_product_attention_reference(x[0], x[1], x[2], {}, kAttentionDropout,
                                                         causal, std::nullopt, alignment,
                                                         &reference_gen);
      },
      in, tol, tol, what);
  EXPECT_EQ(fused_gen.get_state().seed, reference_gen.get_state().seed) << what;
  EXPECT_EQ(fused_gen.get_state().offset, reference_gen.get_state().offset) << what;
}

// expect_dropout_matches_reference for every case in every given layout, in
// float64 and float32.
template <class Layouts>
void expect_dropout_cases_match(const std::vector<AttentionCase>& cases,
                                const Layouts& layouts,
                                Generator& gen) {
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 2e-5;
    for (const AttentionCase& c : cases) {
      for (Layout layout : layouts) {
        expect_dropout_matches_reference(
            leaves({c.q, c.k, c.v}, dtype, layout, gen), c.causal, c.alignment, tol,
            std::string(to_string(dtype)) + " q" + shape_str(c.q) + " k" + shape_str(c.k) + " " +
                layout_name(layout) + (c.causal ? " causal" : ""));
      }
    }
  }
}

TEST(FusedAttention, DropoutMatchesTheReferenceInEveryLayout) {
  Generator gen(61);
  expect_dropout_cases_match(attention_cases(), kAllLayouts, gen);
}

// Several causal blocks (L = S = 80 > kCausalBlock), blocks straddling the
// bottom-right diagonal, and rows without a visible key (NaN, as the
// reference, dropout or not).
TEST(FusedAttention, DropoutInCausalBlocksMatchesTheReference) {
  Generator gen(62);
  const std::vector<AttentionCase> cases = {
      {{2, 2, 80, 8}, {2, 2, 80, 8}, {2, 2, 80, 6}, true, std::nullopt},
      {{2, 70, 8}, {2, 100, 8}, {2, 100, 8}, true, F::CausalAlignment::BottomRight},
      {{1, 140, 4}, {1, 100, 4}, {1, 100, 4}, true, F::CausalAlignment::BottomRight},
      {{1, 130, 8}, {1, 90, 8}, {1, 90, 8}, false, std::nullopt},
  };
  expect_dropout_cases_match(cases, std::vector<Layout>{Layout::Contiguous, Layout::Transposed},
                             gen);
}

TEST(FusedAttention, DropoutMatchesTheReferenceOnHeadsAndKvCacheViews) {
  Generator gen(63);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 2e-5;
    for (const HeadsCase& c : heads_cases()) {
      expect_dropout_matches_reference(heads_leaves(c, dtype, gen), true, c.alignment, tol,
                                       std::string(to_string(dtype)) + " q" + shape_str(c.q) + " " +
                                           head_layout_name(c.q_layout) + ", k" + shape_str(c.k) +
                                           " " + head_layout_name(c.kv_layout));
    }
  }
}

// Without a generator both paths draw from the default one.
TEST(FusedAttention, DropoutWithoutAGeneratorUsesTheDefaultOne) {
  Generator& def = default_generator();
  const GeneratorState saved = def.get_state();
  Generator gen(64);
  const Tensor q = randn({2, 5, 4}, kFloat64, &gen), k = randn({2, 5, 4}, kFloat64, &gen);
  const Tensor v = randn({2, 5, 3}, kFloat64, &gen);
  manual_seed(65);
  const Tensor fused = F::scaled_dot_product_attention(q, k, v, {}, kAttentionDropout, true);
  const uint64_t fused_offset = def.get_state().offset;
  manual_seed(65);
  const Tensor reference =
      F::scaled_dot_product_attention_reference(q, k, v, {}, kAttentionDropout, true);
  EXPECT_TRUE(close(fused, reference, 1e-12, 1e-12));
  EXPECT_EQ(fused_offset, def.get_state().offset);
  def.set_state(saved);
}

// gradcheck needs the same mask on every evaluation, so each evaluation
// draws from a fresh generator with a fixed seed.
TEST(FusedAttention, DropoutGradcheckToSecondOrder) {
  Generator gen(66);
  for (const AttentionCase& c : attention_cases()) {
    const Inputs in = leaves({c.q, c.k, c.v}, kFloat64, Layout::Transposed, gen);
    auto fn = [&](const Inputs& x) {
      Generator g(67);
      return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, kAttentionDropout, c.causal, 0.7,
                                             c.alignment, &g);
    };
    EXPECT_TRUE(autograd::gradcheck(fn, in)) << shape_str(c.q);
  }
  auto fn = [](const Inputs& x, double p) {
    Generator g(68);
    return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, p, false, std::nullopt,
                                           std::nullopt, &g);
  };
  auto dropped = [&](const Inputs& x) { return fn(x, kAttentionDropout); };
  const Inputs in = leaves({{2, 3, 4}, {2, 3, 4}, {2, 3, 4}}, kFloat64, Layout::Contiguous, gen);
  const Tensor y = dropped(in);
  EXPECT_FALSE(close(y, fn(in, 0.0), 1e-6, 1e-6));  // something was dropped
  // The recorded backward (create_graph) applies the kernel's mask.
  const Tensor gout = randn(y.sizes(), kFloat64, &gen);
  const auto kernel = autograd::grad({y}, in, {gout}, true);
  const auto recorded = autograd::grad({y}, in, {gout}, true, true);
  for (size_t i = 0; i < in.size(); ++i) {
    EXPECT_TRUE(close(recorded[i], kernel[i], 1e-12, 1e-12)) << "gradient of input " << i;
  }
  EXPECT_TRUE(gradgradcheck(dropped, in));
}

// The mask is a function of the element's index, not of how parallel_for
// splits the (batch, head) matrices.
TEST(FusedAttention, DropoutIsThreadCountInvariant) {
  Generator gen(69);
  const Inputs in =
      leaves({{2, 3, 80, 8}, {2, 3, 80, 8}, {2, 3, 80, 8}}, kFloat32, Layout::Contiguous, gen);
  expect_thread_count_invariant(
      [](const Inputs& x) {
        Generator g(70);
        return F::scaled_dot_product_attention(x[0], x[1], x[2], {}, kAttentionDropout, true,
                                               std::nullopt, std::nullopt, &g);
      },
      in, randn({2, 3, 80, 8}, kFloat32, &gen));
}

// The probabilities and dropout choices the forward keeps are read, not
// consumed: a second backward through a retained graph gives the same bits.
TEST(FusedAttention, KeptProbabilitiesServeEveryBackward) {
  Generator gen(71);
  const Inputs in =
      leaves({{2, 3, 6, 4}, {2, 3, 6, 4}, {2, 3, 6, 4}}, kFloat32, Layout::Contiguous, gen);
  const Tensor gout = randn({2, 3, 6, 4}, kFloat32, &gen);
  Generator g(72);
  const Tensor y = F::scaled_dot_product_attention(in[0], in[1], in[2], {}, kAttentionDropout, true,
                                                   std::nullopt, std::nullopt, &g);
  const std::vector<Tensor> first = autograd::grad({y}, in, {gout}, /*retain_graph=*/true);
  const std::vector<Tensor> second = autograd::grad({y}, in, {gout});
  for (size_t i = 0; i < in.size(); ++i) EXPECT_TRUE(equal(first[i], second[i])) << i;
}

// ---- rotary attention ----

// cos and sin (T, D/2) of the angles p * base^(-2i/D), the tables
// rotary_embedding(x, 0, base) computes itself.
std::pair<Tensor, Tensor> rope_tables(int64_t T, int64_t D, double base = 10000.0) {
  std::vector<double> c(size_t(T * D / 2)), s(c.size());
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t i = 0; i < D / 2; ++i) {
      const double angle = double(t) / std::pow(base, double(2 * i) / double(D));
      c[size_t(t * D / 2 + i)] = std::cos(angle);
      s[size_t(t * D / 2 + i)] = std::sin(angle);
    }
  }
  return {tensor<double>(c, {T, D / 2}), tensor<double>(s, {T, D / 2})};
}

struct RotaryCase {
  DimVector q, v;  // k has q's shape
  bool causal;
  F::RopeConvention convention;
  double dropout;
};

const std::vector<RotaryCase>& rotary_cases() {
  static const std::vector<RotaryCase> cases = {
      {{2, 3, 5, 4}, {2, 3, 5, 6}, true, F::RopeConvention::Interleaved, 0.0},
      {{2, 3, 5, 4}, {2, 3, 5, 4}, false, F::RopeConvention::HalfSplit, 0.0},
      {{2, 7, 8}, {2, 7, 8}, true, F::RopeConvention::HalfSplit, kAttentionDropout},
      // Several causal blocks, and rows longer than E + Ev (recomputed).
      {{1, 2, 80, 6}, {1, 2, 80, 4}, true, F::RopeConvention::Interleaved, kAttentionDropout},
      {{1, 2}, {1, 2}, true, F::RopeConvention::Interleaved, 0.0},
  };
  return cases;
}

// The fused kernel against rotary_embedding_reference and the composed
// attention, forward and gradients, with the same dropout draws.
void expect_rotary_matches_reference(const RotaryCase& c,
                                     const Inputs& in,
                                     const std::string& what) {
  const double tol = in[0].dtype() == kFloat64 ? 1e-12 : 2e-5;
  const auto [cos, sin] = rope_tables(c.q[c.q.size() - 2], c.q.back());
  Generator fused_gen(80), reference_gen(80);
  expect_matches_reference(
      [&](const Inputs& x) {
        const Tensor y = F::rotary_attention(x[0], x[1], x[2], cos, sin, c.convention, c.dropout,
                                             c.causal, 0.7, &fused_gen);
        EXPECT_TRUE(y.grad_fn() && y.grad_fn()->name() == "RotaryAttentionBackward")
            << what << ": the fused kernel did not run";
        return y;
      },
      [&](const Inputs& x) {
        return F::scaled_dot_product_attention_reference(
            F::rotary_embedding_reference(x[0], 0, 10000.0, c.convention),
            F::rotary_embedding_reference(x[1], 0, 10000.0, c.convention), x[2], {}, c.dropout,
            c.causal, 0.7, std::nullopt, &reference_gen);
      },
      in, tol, tol, what);
  EXPECT_EQ(fused_gen.get_state().offset, reference_gen.get_state().offset) << what;
}

TEST(RotaryAttention, MatchesTheComposedReferenceInEveryLayout) {
  Generator gen(81);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    for (const RotaryCase& c : rotary_cases()) {
      for (Layout layout : kAllLayouts) {
        expect_rotary_matches_reference(
            c, leaves({c.q, c.q, c.v}, dtype, layout, gen),
            std::string(to_string(dtype)) + " q" + shape_str(c.q) + " " + layout_name(layout));
      }
    }
  }
}

// The models' layout: heads views (B, T, H, E).transpose(1, 2) of projections.
TEST(RotaryAttention, MatchesTheReferenceOnHeadsViews) {
  Generator gen(82);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    for (const RotaryCase& c : {rotary_cases()[0], rotary_cases()[3]}) {
      Inputs in;
      for (const DimVector& shape : {c.q, c.q, c.v}) {
        const Tensor t = randn({shape[0], shape[2], shape[1], shape[3]}, dtype, &gen);
        in.push_back(t.transpose(1, 2).detach().requires_grad_(true));
      }
      expect_rotary_matches_reference(c, in,
                                      std::string(to_string(dtype)) + " heads " + shape_str(c.q));
    }
  }
}

TEST(RotaryAttention, GradcheckToSecondOrder) {
  Generator gen(83);
  for (const RotaryCase& c : rotary_cases()) {
    const auto [cos, sin] = rope_tables(c.q[c.q.size() - 2], c.q.back());
    const Inputs in = leaves({c.q, c.q, c.v}, kFloat64, Layout::Transposed, gen);
    auto fn = [&](const Inputs& x) {
      Generator g(84);
      return F::rotary_attention(x[0], x[1], x[2], cos, sin, c.convention, c.dropout, c.causal, 0.7,
                                 &g);
    };
    EXPECT_TRUE(autograd::gradcheck(fn, in)) << shape_str(c.q);
    EXPECT_TRUE(gradgradcheck(fn, in)) << shape_str(c.q);
  }
}

// rotary_tables are the tables rotary_embedding(x, offset, base) uses: the
// same bits either way.
TEST(RotaryAttention, RotaryTablesGiveRotaryEmbeddingsOwnRotation) {
  Generator gen(85);
  for (ScalarType dtype : {kFloat32, kFloat64}) {
    const Tensor x = randn({2, 7, 10}, dtype, &gen);
    const auto [cos, sin] = F::rotary_tables(7, 10, 5, 500.0);
    EXPECT_EQ(cos.sizes(), IntArrayRef({7, 5}));
    EXPECT_TRUE(equal(F::rotary_embedding(x, cos, sin), F::rotary_embedding(x, 5, 500.0)));
  }
  EXPECT_THROW(F::rotary_tables(4, 5), ShapeError);
  EXPECT_THROW(F::rotary_tables(4, 6, -1), ValueError);
}

// Hugging Face's rope types, checked against their definitions in
// transformers' modeling_rope_utils at one frequency of each band.
TEST(RotaryAttention, ScaledFrequenciesFollowEachRopeType) {
  const double base = 10000.0;
  const std::vector<double> plain = F::rope_frequencies(8, base);
  for (int64_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(plain[size_t(i)], std::pow(base, -i / 4.0));

  F::RopeScaling linear;
  linear.type = F::RopeScaling::Type::Linear;
  linear.factor = 4.0;
  const std::vector<double> lin = F::rope_frequencies(8, base, linear);
  for (size_t i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(lin[i], plain[i] / 4.0);

  // Wavelengths 2 pi / theta_i: 6.3, 62.8, 628 and 6283. With an original
  // context of 128 and factors 1 and 4 the bands are 32 and 128: the first
  // is kept, the second interpolated, the last two divided by the factor.
  F::RopeScaling llama3;
  llama3.type = F::RopeScaling::Type::Llama3;
  llama3.factor = 8.0;
  llama3.low_freq_factor = 1.0;
  llama3.high_freq_factor = 4.0;
  llama3.original_context = 128;
  const std::vector<double> l3 = F::rope_frequencies(8, base, llama3);
  EXPECT_DOUBLE_EQ(l3[0], plain[0]);
  const double smooth = (128.0 * plain[1] / (2 * std::numbers::pi) - 1.0) / 3.0;
  EXPECT_GT(smooth, 0.0);
  EXPECT_LT(smooth, 1.0);
  EXPECT_NEAR(l3[1], (1 - smooth) * plain[1] / 8.0 + smooth * plain[1], 1e-15);
  EXPECT_DOUBLE_EQ(l3[2], plain[2] / 8.0);
  EXPECT_DOUBLE_EQ(l3[3], plain[3] / 8.0);

  // The tables rotate by the scaled frequencies.
  const auto [cos, sin] = F::rotary_tables(3, 8, 2, base, llama3);
  EXPECT_DOUBLE_EQ(cos[1][2].item<double>(), std::cos(3 * l3[2]));
  EXPECT_DOUBLE_EQ(sin[2][1].item<double>(), std::sin(4 * l3[1]));

  F::RopeScaling bad = llama3;
  bad.high_freq_factor = 0.5;
  EXPECT_THROW(F::rope_frequencies(8, base, bad), ValueError);
  bad = linear;
  bad.factor = 0;
  EXPECT_THROW(F::rope_frequencies(8, base, bad), ValueError);
}

TEST(RotaryAttention, RejectsKeysOfAnotherLengthAndBadTables) {
  const Tensor q = randn({1, 4, 8}), v = randn({1, 4, 8});
  const auto [cos, sin] = rope_tables(4, 8);
  EXPECT_THROW(F::rotary_attention(q, randn({1, 5, 8}), randn({1, 5, 8}), cos, sin), ShapeError);
  EXPECT_THROW(F::rotary_attention(q, q, v, cos.narrow(0, 0, 3), sin), ShapeError);
  EXPECT_THROW(F::rotary_attention(q, q, v, cos, sin.narrow(1, 0, 2)), ShapeError);
}

// ---- linear_concat ----

// linear_concat against linear of the concatenated weights, forward and
// gradients, for x and the weights in every layout (transposed or expanded
// weights take the composed path; the others run the op's own GEMMs).
TEST(LinearConcat, MatchesLinearOfTheConcatenatedWeightsInEveryLayout) {
  Generator gen(90);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 1e-5;
    for (Layout layout : kAllLayouts) {
      const Inputs in = leaves({{2, 3, 6}, {4, 6}, {1, 6}, {5, 6}}, dtype, layout, gen);
      expect_matches_reference(
          [](const Inputs& x) {
            return F::linear_concat(x[0], {x[1], x[2], x[3]});
          },
          [](const Inputs& x) {
            return F::linear(x[0], cat({x[1], x[2], x[3]}, 0));
          },
          in, tol, tol, std::string(to_string(dtype)) + " " + layout_name(layout));
    }
  }
}

// The input's gradient sums over the weights by blocks of 64 rows: more
// rows than one block. Five weights on two threads are spread one per task,
// three stay in one task: every result bit-identical at 1 and 2 threads.
TEST(LinearConcat, ManyRowsAndWeightsAreThreadCountInvariant) {
  Generator gen(93);
  const std::vector<DimVector> shapes = {{130, 16}, {24, 16}, {8, 16}, {16, 16}, {4, 16}, {12, 16}};
  for (size_t weights : {3, 5}) {
    const Inputs in = leaves({shapes.begin(), shapes.begin() + ptrdiff_t(weights) + 1}, kFloat32,
                             Layout::Contiguous, gen);
    const std::vector<Tensor> w(in.begin() + 1, in.end());
    auto fn = [](const Inputs& x) { return F::linear_concat(x[0], {x.begin() + 1, x.end()}); };
    expect_matches_reference(
        fn,
        [](const Inputs& x) {
          return F::linear(x[0], cat({x.begin() + 1, x.end()}, 0));
        },
        in, 1e-5, 1e-5, std::to_string(weights) + " weights");
    expect_thread_count_invariant(fn, in, randn({130, cat(w, 0).size(0)}, kFloat32, &gen));
  }
}

// Decoding (at most four float32 rows), the rows of all the weights are split
// over the threads in one parallel region: each output equals linear() of its
// own weight bit for bit at any thread count, with splits falling inside
// weights (not on the 64-row grain) and a weight whose rows are padded.
TEST(LinearConcat, DecodingRowsEqualSeparateLinearsBitForBit) {
  Generator gen(94);
  const Tensor padded = randn({130, 140}, kFloat32, &gen);
  const std::vector<Tensor> w = {randn({70, 130}, kFloat32, &gen), randn({3, 130}, kFloat32, &gen),
                                 padded.narrow(1, 5, 130)};
  for (int64_t rows : {1, 2, 4}) {
    const Tensor x = randn({rows, 1, 130}, kFloat32, &gen);
    for (int threads : {1, 2, 3, 8}) {
      ThreadCount guard(threads);
      const Tensor y = F::linear_concat(x, w);
      int64_t offset = 0;
      for (size_t i = 0; i < w.size(); ++i) {
        EXPECT_TRUE(equal(y.narrow(-1, offset, w[i].size(0)), F::linear(x, w[i])))
            << rows << " rows, weight " << i << ", " << threads << " threads";
        offset += w[i].size(0);
      }
    }
  }
}

TEST(LinearConcat, GradcheckToSecondOrder) {
  Generator gen(91);
  const Inputs in = leaves({{3, 4}, {2, 4}, {3, 4}}, kFloat64, Layout::Contiguous, gen);
  auto fn = [](const Inputs& x) { return F::linear_concat(x[0], {x[1], x[2]}); };
  EXPECT_TRUE(autograd::gradcheck(fn, in));
  EXPECT_TRUE(gradgradcheck(fn, in));
  EXPECT_TRUE(gradgradcheck([](const Inputs& x) { return F::linear_concat(x[1], {x[0]}); },
                            leaves({{3, 4}, {5, 4}}, kFloat64, Layout::Contiguous, gen)));
}

// Each weight's gradient is a tensor of its own, not a view of a shared
// buffer, so .grad takes it as it is.
TEST(LinearConcat, WeightGradientsAreTheirOwnTensors) {
  Generator gen(92);
  const Inputs in = leaves({{8, 4}, {3, 4}, {2, 4}}, kFloat32, Layout::Contiguous, gen);
  F::linear_concat(in[0], {in[1], in[2]}).sum().backward();
  for (size_t i = 1; i < in.size(); ++i) {
    const Tensor g = in[i].grad();
    EXPECT_TRUE(g.is_contiguous());
    EXPECT_EQ(g.storage()->nbytes(), size_t(g.numel()) * sizeof(float)) << i;
  }
}

TEST(LinearConcat, EmptyInputsAndShapeErrors) {
  const Tensor w = randn({3, 4});
  EXPECT_EQ(F::linear_concat(randn({0, 4}), {w, w}).sizes(), IntArrayRef({0, 6}));
  const Tensor x = randn({2, 0});
  EXPECT_TRUE(equal(F::linear_concat(x, {randn({3, 0})}), zeros({2, 3})));
  EXPECT_THROW(F::linear_concat(randn({2, 4}), {w, randn({3, 5})}), ShapeError);
  EXPECT_THROW(F::linear_concat(randn({2, 4}), {}), ValueError);
}

// ---- linear_groups ----

// Every output is linear_concat of its group, forward and gradients, for x
// and the weights in every layout.
TEST(LinearGroups, MatchesLinearConcatOfEachGroupInEveryLayout) {
  Generator gen(95);
  for (ScalarType dtype : {kFloat64, kFloat32}) {
    const double tol = dtype == kFloat64 ? 1e-12 : 1e-5;
    for (Layout layout : kAllLayouts) {
      const Inputs in = leaves({{2, 3, 6}, {4, 6}, {1, 6}, {5, 6}, {3, 6}}, dtype, layout, gen);
      expect_matches_reference(
          [](const Inputs& x) {
            return cat(F::linear_groups(x[0], {{x[1], x[2]}, {x[3]}, {x[4]}}), -1);
          },
          [](const Inputs& x) {
            return cat({F::linear_concat(x[0], {x[1], x[2]}), F::linear(x[0], x[3]),
                        F::linear(x[0], x[4])},
                       -1);
          },
          in, tol, tol, std::string(to_string(dtype)) + " " + layout_name(layout));
    }
  }
}

// x's gradient adds the groups' sums last group first, as autograd adds
// separate layers' gradients: the gradients are those of separate layers bit
// for bit, at any thread count, whatever depth the GEMMs sum over (16, the
// correct Llama's 128 and its FFN's 352 at the article's size). 192 rows:
// three whole blocks of the sum, as the models' 512 rows are eight (a last
// block of a few rows goes to the decoding kernel, which orders its sums
// differently from a larger GEMM's).
TEST(LinearGroups, GradientsHaveTheBitsOfSeparateLayers) {
  Generator gen(96);
  for (int64_t depth : {16, 128, 352}) {
    const Inputs in = leaves({{192, 128}, {depth, 128}, {depth, 128}, {depth, 128}}, kFloat32,
                             Layout::Contiguous, gen);
    const std::vector<Tensor> gout = {randn({192, depth}, kFloat32, &gen),
                                      randn({192, depth}, kFloat32, &gen),
                                      randn({192, depth}, kFloat32, &gen)};
    for (int threads : {1, 2}) {
      ThreadCount guard(threads);
      const std::vector<Tensor> grouped = F::linear_groups(in[0], {{in[1]}, {in[2]}, {in[3]}});
      const std::vector<Tensor> separate = {F::linear(in[0], in[1]), F::linear(in[0], in[2]),
                                            F::linear(in[0], in[3])};
      const auto ga = autograd::grad(grouped, in, gout), gb = autograd::grad(separate, in, gout);
      for (size_t i = 0; i < grouped.size(); ++i) {
        EXPECT_TRUE(equal(grouped[i], separate[i])) << "output " << i << ", depth " << depth;
      }
      for (size_t i = 0; i < in.size(); ++i) {
        EXPECT_TRUE(equal(ga[i], gb[i]))
            << "gradient of input " << i << ", depth " << depth << ", " << threads << " threads";
      }
    }
  }
}

// Five weights in two groups over 130 rows: bit-identical at 1 and 2 threads.
TEST(LinearGroups, ManyRowsAreThreadCountInvariant) {
  Generator gen(97);
  const Inputs in = leaves({{130, 16}, {24, 16}, {8, 16}, {16, 16}, {4, 16}, {12, 16}}, kFloat32,
                           Layout::Contiguous, gen);
  expect_thread_count_invariant(
      [](const Inputs& x) {
        return cat(F::linear_groups(x[0], {{x[1], x[2], x[3]}, {x[4], x[5]}}), -1);
      },
      in, randn({130, 64}, kFloat32, &gen));
}

// Decoding rows: each output equals linear() of its weights bit for bit at
// any thread count, the rows of all groups split in one parallel region.
TEST(LinearGroups, DecodingRowsEqualSeparateLinearsBitForBit) {
  Generator gen(98);
  const std::vector<Tensor> w = {randn({70, 130}, kFloat32, &gen), randn({3, 130}, kFloat32, &gen),
                                 randn({65, 130}, kFloat32, &gen)};
  const Tensor x = randn({1, 1, 130}, kFloat32, &gen);
  for (int threads : {1, 2, 3, 8}) {
    ThreadCount guard(threads);
    const std::vector<Tensor> ys = F::linear_groups(x, {{w[0], w[1]}, {w[2]}});
    EXPECT_TRUE(equal(ys[0], F::linear(x, cat({w[0], w[1]}, 0)))) << threads << " threads";
    EXPECT_TRUE(equal(ys[1], F::linear(x, w[2]))) << threads << " threads";
  }
}

// An output that gets no gradient gives its weights none, as a separate
// layer whose output is unused, and adds nothing to x's gradient.
TEST(LinearGroups, AnOutputWithoutGradientGivesItsWeightsNone) {
  Generator gen(99);
  const Inputs in = leaves({{4, 6}, {3, 6}, {2, 6}}, kFloat64, Layout::Contiguous, gen);
  const std::vector<Tensor> ys = F::linear_groups(in[0], {{in[1]}, {in[2]}});
  (ys[1] * ys[1]).sum().backward();
  EXPECT_FALSE(in[1].grad().defined());
  const Tensor g = 2 * ys[1].detach();
  EXPECT_TRUE(allclose(in[2].grad(), g.t().matmul(in[0].detach()), 1e-12, 1e-12));
  EXPECT_TRUE(allclose(in[0].grad(), g.matmul(in[2].detach()), 1e-12, 1e-12));
}

TEST(LinearGroups, GradcheckToSecondOrder) {
  Generator gen(100);
  const Inputs in = leaves({{3, 4}, {2, 4}, {3, 4}, {1, 4}}, kFloat64, Layout::Contiguous, gen);
  auto fn = [](const Inputs& x) { return cat(F::linear_groups(x[0], {{x[1], x[2]}, {x[3]}}), -1); };
  EXPECT_TRUE(autograd::gradcheck(fn, in));
  EXPECT_TRUE(gradgradcheck(fn, in));
  // With respect to a weight first, so that the second order goes through x.
  EXPECT_TRUE(gradgradcheck(
      [](const Inputs& x) {
        return cat(F::linear_groups(x[1], {{x[0]}, {x[2]}}), -1);
      },
      leaves({{3, 4}, {5, 4}, {2, 4}}, kFloat64, Layout::Contiguous, gen)));
}

TEST(LinearGroups, ShapeErrors) {
  const Tensor w = randn({3, 4});
  EXPECT_THROW(F::linear_groups(randn({2, 4}), {}), ValueError);
  EXPECT_THROW(F::linear_groups(randn({2, 4}), {{w}, {}}), ValueError);
  EXPECT_THROW(F::linear_groups(randn({2, 4}), {{w}, {randn({3, 5})}}), ShapeError);
  const std::vector<Tensor> ys = F::linear_groups(randn({0, 4}), {{w, w}, {w}});
  EXPECT_EQ(ys[0].sizes(), IntArrayRef({0, 6}));
  EXPECT_EQ(ys[1].sizes(), IntArrayRef({0, 3}));
}

}  // namespace
}  // namespace stride::testing
