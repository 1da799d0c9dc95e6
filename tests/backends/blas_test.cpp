// stride::cpu::gemm / gemm_batched against a triple loop in double: every
// transpose, odd sizes, padded leading dimensions (submatrices), alpha/beta,
// NaN in C with beta == 0, empty sizes, broadcast batches, 1 and 2 threads.
#include "backends/cpu/blas.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "backends/cpu/small_gemm.h"
#include "stride/error.h"
#include "stride/parallel.h"
#include "support/thread_count.h"

namespace stride::cpu {
namespace {

using ::stride::testing::ThreadCount;

template <class Fn>
void for_each_thread_count(Fn fn) {
  for (int threads : {1, 2}) {
    SCOPED_TRACE("threads=" + std::to_string(threads));
    ThreadCount guard(threads);
    fn();
  }
}

template <class T>
constexpr double tolerance() {
  return std::is_same_v<T, float> ? 1e-5 : 1e-12;
}

template <class T>
std::vector<T> random_vector(int64_t size, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::vector<T> v(static_cast<size_t>(size));
  for (T& x : v) x = T(dist(gen));
  return v;
}

// One GEMM (or a batch of them) with its storage: op(A) (m, k), op(B) (k, n),
// C (m, n), each stored row-major with `pad` extra elements per row and, for
// batches, `gap` extra elements between matrices (stride 0 broadcasts).
struct Case {
  bool ta = false, tb = false;
  int64_t m = 1, n = 1, k = 1;
  double alpha = 1, beta = 0;
  int64_t pad = 0;
  int64_t gap = 3;     // extra elements between consecutive matrices of a batch
  bool nan_c = false;  // prefill C with NaN (meaningful with beta == 0)
  int64_t batch = 1;
  bool broadcast_a = false, broadcast_b = false;

  int64_t lda() const { return (ta ? m : k) + pad; }
  int64_t ldb() const { return (tb ? k : n) + pad; }
  int64_t ldc() const { return n + pad; }
  int64_t size_a() const { return (ta ? k : m) * lda(); }
  int64_t size_b() const { return (tb ? n : k) * ldb(); }
  int64_t size_c() const { return m * ldc(); }
  int64_t stride_a() const { return broadcast_a ? 0 : size_a() + gap; }
  int64_t stride_b() const { return broadcast_b ? 0 : size_b() + 2 * gap; }
  int64_t stride_c() const { return size_c() + gap; }
  std::string str() const {
    return std::string("ta=") + (ta ? "T" : "N") + " tb=" + (tb ? "T" : "N") +
           " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
           " alpha=" + std::to_string(alpha) + " beta=" + std::to_string(beta) +
           " pad=" + std::to_string(pad) + " gap=" + std::to_string(gap) +
           " nan_c=" + std::to_string(nan_c) + " batch=" + std::to_string(batch) +
           " broadcast_a=" + std::to_string(broadcast_a) +
           " broadcast_b=" + std::to_string(broadcast_b);
  }
};

// The case's GEMM (its first matrices, for a batch) on these buffers.
template <class In, class Out>
GemmArgs<In, Out> args_of(const Case& cs, const In* a, const In* b, Out* c) {
  return {.trans_a = cs.ta,
          .trans_b = cs.tb,
          .m = cs.m,
          .n = cs.n,
          .k = cs.k,
          .a = a,
          .lda = cs.lda(),
          .b = b,
          .ldb = cs.ldb(),
          .c = c,
          .ldc = cs.ldc(),
          .alpha = Out(cs.alpha),
          .beta = Out(cs.beta)};
}

GemmBatch batch_of(const Case& cs) {
  return {.count = cs.batch,
          .stride_a = cs.stride_a(),
          .stride_b = cs.stride_b(),
          .stride_c = cs.stride_c()};
}

// Which entry point check_case calls.
enum class Entry { Gemm, Batched, Small };

// Runs the case through gemm (batch == 1 and Entry::Gemm), gemm_batched or
// sgemm_small (float, batch == 1) and compares every element of C with a double-precision triple
// loop, within tolerance<T>() * (|alpha| * sum_p |a_ip b_pj| + |beta c_ij|).
// Elements of C's buffer outside the matrices must be untouched.
template <class T>
::testing::AssertionResult check_case(const Case& cs, Entry entry = Entry::Gemm) {
  std::vector<T> a = random_vector<T>(cs.broadcast_a ? cs.size_a() : cs.stride_a() * cs.batch, 1);
  std::vector<T> b = random_vector<T>(cs.broadcast_b ? cs.size_b() : cs.stride_b() * cs.batch, 2);
  std::vector<T> c = random_vector<T>(cs.stride_c() * cs.batch, 3);
  const T sentinel = T(12345);
  for (int64_t s = 0; s < cs.batch; ++s) {
    T* cm = c.data() + s * cs.stride_c();
    for (int64_t i = 0; i < cs.m; ++i) {
      for (int64_t j = 0; j < cs.ldc(); ++j) {
        if (j >= cs.n) {
          cm[i * cs.ldc() + j] = sentinel;
        } else if (cs.nan_c) {
          cm[i * cs.ldc() + j] = std::numeric_limits<T>::quiet_NaN();
        }
      }
    }
    for (int64_t e = cs.size_c(); e < cs.stride_c(); ++e) cm[e] = sentinel;
  }
  const std::vector<T> c_in = c;

  const GemmArgs<T> args = args_of(cs, a.data(), b.data(), c.data());
  if (entry == Entry::Small) {
    if constexpr (std::is_same_v<T, float>) sgemm_small(args);
  } else if (cs.batch == 1 && entry == Entry::Gemm) {
    gemm(args);
  } else {
    gemm_batched(args, batch_of(cs));
  }

  for (int64_t s = 0; s < cs.batch; ++s) {
    const T* as = a.data() + s * cs.stride_a();
    const T* bs = b.data() + s * cs.stride_b();
    const T* cin = c_in.data() + s * cs.stride_c();
    const T* cout = c.data() + s * cs.stride_c();
    for (int64_t i = 0; i < cs.m; ++i) {
      for (int64_t j = 0; j < cs.ldc(); ++j) {
        const T got = cout[i * cs.ldc() + j];
        if (j >= cs.n) {
          if (got != sentinel) {
            return ::testing::AssertionFailure() << cs.str() << ": padding of C written at batch "
                                                 << s << " (" << i << ", " << j << ")";
          }
          continue;
        }
        double sum = 0, mag = 0;
        for (int64_t p = 0; p < cs.k; ++p) {
          const double x = double(cs.ta ? as[p * cs.lda() + i] : as[i * cs.lda() + p]);
          const double y = double(cs.tb ? bs[j * cs.ldb() + p] : bs[p * cs.ldb() + j]);
          sum += x * y;
          mag += std::abs(x * y);
        }
        double want = cs.alpha * sum;
        mag *= std::abs(cs.alpha);
        if (cs.beta != 0) {
          want += cs.beta * double(cin[i * cs.ldc() + j]);
          mag += std::abs(cs.beta * double(cin[i * cs.ldc() + j]));
        }
        const double err = std::abs(double(got) - want);
        if (!std::isfinite(double(got)) || err > tolerance<T>() * mag + 1e-30) {
          return ::testing::AssertionFailure()
                 << cs.str() << ": C[" << s << "][" << i << ", " << j << "] = " << got << ", want "
                 << want << " (error " << err << ", allowed " << tolerance<T>() * mag << ")";
        }
      }
    }
    for (int64_t e = cs.size_c(); e < cs.stride_c(); ++e) {
      if (cout[e] != sentinel) {
        return ::testing::AssertionFailure() << cs.str() << ": C written between matrices";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

template <class T>
class BlasGemm : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double>;
TYPED_TEST_SUITE(BlasGemm, FloatTypes);

TYPED_TEST(BlasGemm, MatchesReferenceForEveryTransposeAndOddSizes) {
  for_each_thread_count([] {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (int64_t m : {1, 3, 17, 65, 130}) {
          for (int64_t n : {1, 3, 17, 65, 130}) {
            for (int64_t k : {1, 3, 17, 65, 130}) {
              Case cs;
              cs.ta = ta, cs.tb = tb, cs.m = m, cs.n = n, cs.k = k;
              ASSERT_TRUE(check_case<TypeParam>(cs));
            }
          }
        }
      }
    }
  });
}

TYPED_TEST(BlasGemm, HonoursAlphaBetaAndPaddedLeadingDimensions) {
  for_each_thread_count([] {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (auto [m, n, k] :
             {std::array<int64_t, 3>{3, 17, 65}, std::array<int64_t, 3>{130, 65, 17},
              std::array<int64_t, 3>{65, 130, 130}, std::array<int64_t, 3>{1, 65, 3},
              // A decoded row against a weight of 356 KiB: Note [Decode prefetch]'s
              // prefetches run up to the end of each thread's rows.
              std::array<int64_t, 3>{1, 700, 130}}) {
          for (auto [alpha, beta] :
               {std::pair{1.5, -0.5}, std::pair{-2.0, 1.0}, std::pair{0.125, 0.0}}) {
            Case cs;
            cs.ta = ta, cs.tb = tb, cs.m = m, cs.n = n, cs.k = k;
            cs.alpha = alpha, cs.beta = beta, cs.pad = 3;
            ASSERT_TRUE(check_case<TypeParam>(cs));
          }
        }
      }
    }
  });
}

// Transposed B with a long k goes through a row-major copy of B^T (Note
// [Transposed B]): both transposes of A, padded rows of B, alpha and beta, and
// the sizes around its thresholds (31 and 32 rows, k = 255 and 256), whole and
// tiled; a batch of large matrices takes the same path per matrix.
TYPED_TEST(BlasGemm, TransposedBWithLongKMatchesReference) {
  for_each_thread_count([] {
    for (bool ta : {false, true}) {
      for (auto [m, n, k] :
           {std::array<int64_t, 3>{32, 130, 256}, std::array<int64_t, 3>{31, 130, 256},
            std::array<int64_t, 3>{70, 53, 300}, std::array<int64_t, 3>{65, 70, 255},
            std::array<int64_t, 3>{200, 96, 520}}) {
        for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-0.5, 2.0}}) {
          Case cs;
          cs.ta = ta, cs.tb = true, cs.m = m, cs.n = n, cs.k = k;
          cs.alpha = alpha, cs.beta = beta, cs.pad = 5, cs.nan_c = beta == 0.0;
          ASSERT_TRUE(check_case<TypeParam>(cs));
        }
      }
    }
    Case batch;
    batch.tb = true, batch.m = 64, batch.n = 80, batch.k = 1024, batch.batch = 2;
    batch.pad = 2, batch.beta = 1;
    ASSERT_TRUE(check_case<TypeParam>(batch));
  });
}

// Leading dimensions of multiples of 512 elements: on CPUs where oneDNN runs
// its AVX2 sgemm, B and a transposed A are first copied into longer rows
// (Note [Aliasing leading dimensions]). Each case picks pad so that rows are
// 1024 long: A's and B's, B's alone, A^T's, B^T's with a short k (A's too),
// and B^T's own copy (k >= 256) with n = 1024; then 512 long: B's, A^T's.
TYPED_TEST(BlasGemm, AliasingLeadingDimensionsMatchReference) {
  struct Shape {
    bool ta, tb;
    int64_t m, n, k, pad;
  };
  for_each_thread_count([] {
    for (Shape s : {Shape{false, false, 40, 1000, 1000, 24}, Shape{false, false, 40, 1000, 100, 24},
                    Shape{true, false, 1000, 40, 64, 24}, Shape{false, true, 64, 128, 200, 824},
                    Shape{false, true, 64, 1024, 300, 5}, Shape{false, false, 40, 500, 300, 12},
                    Shape{true, false, 500, 40, 64, 12}}) {
      for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-0.5, 2.0}}) {
        Case cs;
        cs.ta = s.ta, cs.tb = s.tb, cs.m = s.m, cs.n = s.n, cs.k = s.k, cs.pad = s.pad;
        cs.alpha = alpha, cs.beta = beta, cs.nan_c = beta == 0.0;
        ASSERT_TRUE(check_case<TypeParam>(cs));
      }
    }
  });
}

// A k long against m x n is cut into chunks of 1024 whose products are
// summed in order (Note [Split k]; float32 only): three chunks, the last
// one short, on two threads, with both operands as they lie and both
// transposed, alpha and beta and NaN in C when beta is 0. (The size is the
// smallest that splits; IsBitIdenticalAtEveryThreadCount has one too.)
TYPED_TEST(BlasGemm, SplitKMatchesReference) {
  if constexpr (std::is_same_v<TypeParam, float>) {
    ThreadCount guard(2);
    for (bool transposed : {false, true}) {
      Case cs;
      cs.ta = transposed, cs.tb = transposed, cs.m = 400, cs.n = 330, cs.k = 2100, cs.pad = 3;
      cs.alpha = transposed ? -0.5 : 1.0, cs.beta = transposed ? 2.0 : 0.0;
      cs.nan_c = !transposed;
      ASSERT_TRUE(check_case<TypeParam>(cs));
    }
  }
}

TYPED_TEST(BlasGemm, BetaZeroIgnoresNaNInC) {
  for_each_thread_count([] {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (auto [m, n, k] :
             {std::array<int64_t, 3>{1, 1, 1}, std::array<int64_t, 3>{17, 3, 65},
              std::array<int64_t, 3>{130, 130, 130}, std::array<int64_t, 3>{512, 128, 128}}) {
          for (double alpha : {1.0, 0.5}) {
            Case cs;
            cs.ta = ta, cs.tb = tb, cs.m = m, cs.n = n, cs.k = k;
            cs.alpha = alpha, cs.beta = 0, cs.pad = 2, cs.nan_c = true;
            ASSERT_TRUE(check_case<TypeParam>(cs));
          }
        }
      }
    }
  });
}

TYPED_TEST(BlasGemm, EmptyInnerDimensionScalesC) {
  using T = TypeParam;
  for_each_thread_count([] {
    // k == 0: A and B are not read (null here); C = beta * C.
    std::vector<T> c = {1, 2, 3, 4, 5, 6};  // (2, 2) with ldc 3
    gemm({.m = 2, .n = 2, .k = 0, .c = c.data(), .ldc = 3, .beta = T(2)});
    EXPECT_EQ(c, (std::vector<T>{2, 4, 3, 8, 10, 6}));
    gemm({.trans_a = true,
          .trans_b = true,
          .m = 2,
          .n = 2,
          .k = 0,
          .c = c.data(),
          .ldc = 3,
          .beta = T(1)});
    EXPECT_EQ(c, (std::vector<T>{2, 4, 3, 8, 10, 6}));
    const T nan = std::numeric_limits<T>::quiet_NaN();
    std::vector<T> d = {nan, nan, T(7), nan, nan, T(7)};
    gemm({.trans_b = true, .m = 2, .n = 2, .k = 0, .c = d.data(), .ldc = 3});
    EXPECT_EQ(d, (std::vector<T>{0, 0, 7, 0, 0, 7}));

    Case cs;
    cs.m = 65, cs.n = 17, cs.k = 0, cs.beta = 0.5, cs.pad = 1;
    EXPECT_TRUE(check_case<T>(cs));
    cs.beta = 0, cs.nan_c = true;
    EXPECT_TRUE(check_case<T>(cs));
    cs.batch = 4;
    EXPECT_TRUE(check_case<T>(cs));
  });
}

TYPED_TEST(BlasGemm, AlphaZeroDoesNotReadAOrB) {
  using T = TypeParam;
  const T nan = std::numeric_limits<T>::quiet_NaN();
  std::vector<T> a(6, nan), b(6, nan), c = {1, 2, 3, 4};
  gemm({.m = 2,
        .n = 2,
        .k = 3,
        .a = a.data(),
        .lda = 3,
        .b = b.data(),
        .ldb = 2,
        .c = c.data(),
        .ldc = 2,
        .alpha = T(0),
        .beta = T(3)});
  EXPECT_EQ(c, (std::vector<T>{3, 6, 9, 12}));
}

TYPED_TEST(BlasGemm, EmptyOutputIsANoOp) {
  using T = TypeParam;
  std::vector<T> c = {1, 2, 3};
  gemm({.m = 0, .n = 3, .k = 4, .lda = 4, .ldb = 3, .c = c.data(), .ldc = 3});
  gemm({.trans_a = true, .m = 3, .n = 0, .k = 4, .lda = 3, .ldb = 0, .c = c.data(), .ldc = 0});
  gemm(GemmArgs<T>{});
  gemm_batched({.m = 0, .n = 3, .k = 4, .lda = 4, .ldb = 3, .c = c.data(), .ldc = 3}, {.count = 5});
  gemm_batched(GemmArgs<T>{.m = 2, .n = 3, .k = 4, .lda = 4, .ldb = 3, .ldc = 3},
               {.count = 0, .stride_a = 8, .stride_b = 12, .stride_c = 6});
  EXPECT_EQ(c, (std::vector<T>{1, 2, 3}));
}

TYPED_TEST(BlasGemm, RejectsBadSizesAndLeadingDimensions) {
  using T = TypeParam;
  std::vector<T> x(64);
  const T* p = x.data();
  T* q = x.data();
  // A valid 2 x 2 x 2 GEMM (never run: C overlaps A and B), each call
  // changing it into one with one thing wrong.
  const GemmArgs<T> ok{
      .m = 2, .n = 2, .k = 2, .a = p, .lda = 2, .b = p, .ldb = 2, .c = q, .ldc = 2};
  auto with = [&](auto change) {
    GemmArgs<T> g = ok;
    change(g);
    return g;
  };
  EXPECT_THROW(gemm(with([](GemmArgs<T>& g) { g.m = -1; })), ValueError);
  EXPECT_THROW(gemm(with([](GemmArgs<T>& g) { g.k = 3; })), ValueError);  // lda < k
  EXPECT_THROW(gemm(with([](GemmArgs<T>& g) { g.trans_a = true, g.m = 4, g.k = 3, g.lda = 3; })),
               ValueError);  // lda < m
  EXPECT_THROW(
      gemm(with([](GemmArgs<T>& g) { g.trans_b = true, g.n = 4, g.k = 3, g.lda = 3, g.ldc = 4; })),
      ValueError);  // ldb < k
  EXPECT_THROW(
      gemm(with([](GemmArgs<T>& g) { g.n = 4, g.k = 3, g.lda = 3, g.ldb = 4, g.ldc = 3; })),
      ValueError);  // ldc < n
  EXPECT_THROW(gemm_batched(ok, {.count = -1, .stride_a = 4, .stride_b = 4, .stride_c = 4}),
               ValueError);
  EXPECT_THROW(gemm_batched(ok, {.count = 2, .stride_a = 4, .stride_b = 4, .stride_c = 0}),
               ValueError);  // outputs alias
  try {
    gemm(with([](GemmArgs<T>& g) { g.k = 3; }));
    ADD_FAILURE() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("[gemm] expected lda >= k"), std::string::npos)
        << e.what();
  }
}

TYPED_TEST(BlasGemm, RunsInsideAParallelRegion) {
  using T = TypeParam;
  ThreadCount guard(2);
  std::vector<::testing::AssertionResult> results(4, ::testing::AssertionSuccess());
  parallel_for(0, 4, 1, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      Case cs;
      cs.ta = i % 2 == 1, cs.tb = i / 2 == 1, cs.m = 130, cs.n = 65, cs.k = 130;
      cs.alpha = 0.5, cs.beta = 0, cs.nan_c = true, cs.pad = 1;
      results[size_t(i)] = check_case<T>(cs);
    }
  });
  for (const auto& r : results) EXPECT_TRUE(r);
}

template <class T>
class BlasGemmBatched : public ::testing::Test {};
TYPED_TEST_SUITE(BlasGemmBatched, FloatTypes);

TYPED_TEST(BlasGemmBatched, MatchesReferenceForTinyAndLargerMatrices) {
  // Dense batches (pad = gap = 0) and padded ones take different paths
  // (Note [GEMM backend choice]); both are covered.
  for_each_thread_count([] {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (auto [batch, m, n, k] :
             {std::array<int64_t, 4>{37, 16, 16, 16}, std::array<int64_t, 4>{48, 16, 16, 128},
              std::array<int64_t, 4>{24, 16, 128, 16}, std::array<int64_t, 4>{5, 1, 3, 17},
              std::array<int64_t, 4>{3, 65, 130, 17}, std::array<int64_t, 4>{2, 100, 130, 70}}) {
          for (auto [pad, gap] :
               {std::pair<int64_t, int64_t>{0, 0}, std::pair<int64_t, int64_t>{1, 3}}) {
            Case cs;
            cs.ta = ta, cs.tb = tb, cs.m = m, cs.n = n, cs.k = k, cs.batch = batch;
            cs.pad = pad, cs.gap = gap;
            ASSERT_TRUE(check_case<TypeParam>(cs));
            cs.alpha = 0.75, cs.beta = 0.25;
            ASSERT_TRUE(check_case<TypeParam>(cs));
            cs.beta = 0, cs.nan_c = true;
            ASSERT_TRUE(check_case<TypeParam>(cs));
          }
        }
      }
    }
  });
}

TYPED_TEST(BlasGemmBatched, LargeMatricesMatchReference) {
  for_each_thread_count([] {
    Case cs;
    cs.tb = true, cs.m = 300, cs.n = 200, cs.k = 160, cs.batch = 3, cs.gap = 0;
    cs.alpha = -1, cs.beta = 0.5;
    ASSERT_TRUE(check_case<TypeParam>(cs));
  });
}

TYPED_TEST(BlasGemmBatched, BroadcastsAMatrixWithStrideZero) {
  for_each_thread_count([] {
    for (bool ta : {false, true}) {
      for (auto [batch, m, n, k] :
           {std::array<int64_t, 4>{64, 16, 16, 16}, std::array<int64_t, 4>{4, 65, 17, 130}}) {
        for (int64_t gap : {0, 3}) {
          Case cs;
          cs.ta = ta, cs.tb = !ta, cs.m = m, cs.n = n, cs.k = k, cs.batch = batch, cs.gap = gap;
          cs.alpha = 1, cs.beta = 0, cs.nan_c = true;
          cs.broadcast_a = true;
          ASSERT_TRUE(check_case<TypeParam>(cs));
          cs.broadcast_a = false, cs.broadcast_b = true;
          ASSERT_TRUE(check_case<TypeParam>(cs));
        }
      }
    }
  });
}

TYPED_TEST(BlasGemmBatched, BatchOfOneMatchesGemm) {
  Case cs;
  cs.m = 130, cs.n = 17, cs.k = 65, cs.alpha = 2, cs.beta = -1, cs.pad = 2;
  EXPECT_TRUE(check_case<TypeParam>(cs, Entry::Batched));
}

// docs/design.md invariant 9 (Note [Deterministic GEMM] in blas.cpp): the same
// inputs give bit-identical C at every thread count, including k-heavy shapes
// where a library's own threading would split k across threads.
TYPED_TEST(BlasGemm, IsBitIdenticalAtEveryThreadCount) {
  using T = TypeParam;
  struct Shape {
    int64_t batch, m, n, k;
    bool ta, tb;
  };
  const Shape shapes[] = {{1, 512, 128, 128, false, true},  {1, 128, 128, 512, true, false},
                          {1, 128, 128, 4096, true, false}, {1, 33, 1000, 300, false, false},
                          {1, 512, 65, 128, false, true},   {64, 16, 16, 16, false, true},
                          {64, 16, 16, 16, false, false},   {8, 64, 64, 256, true, true},
                          {3, 300, 200, 160, false, true},  {1, 1, 1030, 384, false, true},
                          {1, 3, 1030, 100, false, true},   {1, 2, 1030, 100, false, false},
                          {1, 200, 96, 520, false, true},   {1, 64, 384, 1024, true, true},
                          {1, 400, 330, 2100, true, false}};
  for (const Shape& sh : shapes) {
    const int64_t lda = sh.ta ? sh.m : sh.k, ldb = sh.tb ? sh.k : sh.n;
    const std::vector<T> a = random_vector<T>(sh.batch * sh.m * sh.k, 7);
    const std::vector<T> b = random_vector<T>(sh.batch * sh.k * sh.n, 8);
    auto run = [&](int threads) {
      ThreadCount guard(threads);
      std::vector<T> c(size_t(sh.batch * sh.m * sh.n), std::numeric_limits<T>::quiet_NaN());
      const GemmArgs<T> args{.trans_a = sh.ta,
                             .trans_b = sh.tb,
                             .m = sh.m,
                             .n = sh.n,
                             .k = sh.k,
                             .a = a.data(),
                             .lda = lda,
                             .b = b.data(),
                             .ldb = ldb,
                             .c = c.data(),
                             .ldc = sh.n};
      if (sh.batch == 1) {
        gemm(args);
      } else {
        gemm_batched(args, {.count = sh.batch,
                            .stride_a = sh.m * sh.k,
                            .stride_b = sh.k * sh.n,
                            .stride_c = sh.m * sh.n});
      }
      return c;
    };
    const std::vector<T> one = run(1);
    for (int threads : {2, 3, 8}) {
      const std::vector<T> many = run(threads);
      int64_t differ = 0;
      for (size_t i = 0; i < one.size(); ++i)
        differ += std::memcmp(&one[i], &many[i], sizeof(T)) != 0;
      EXPECT_EQ(differ, 0) << "batch=" << sh.batch << " " << sh.m << "x" << sh.n << "x" << sh.k
                           << (sh.ta ? " T" : " N") << (sh.tb ? "T" : "N") << " at " << threads
                           << " threads";
    }
  }
}

// gemm_batched_bf16 against a double triple loop over the same bfloat16
// values: every transpose, odd and tiled sizes, decoding rows (m = 1), padded
// leading dimensions, batches with and without broadcasting; padding of C and
// the gaps between its matrices untouched. Products of bf16 values are exact

// sgemm_small directly (cpu::gemm uses it only where the BLAS lacks a
// small-matrix path): every transpose, rows around its register tiles,
// columns around whole vectors and its column blocks (8 and 16 lanes),
// alpha, beta (C not read when 0), padded leading dimensions.
TEST(BlasSmallGemm, MatchesReferenceForEveryTransposeTileEdgeAndScale) {
  for (bool ta : {false, true}) {
    for (bool tb : {false, true}) {
      for (int64_t m : {1, 5, 6, 7, 12, 16, 17, 25}) {
        for (int64_t n : {1, 7, 8, 9, 16, 17, 24, 33, 48, 49, 65}) {
          for (int64_t k : {1, 3, 16, 128}) {
            for (auto [alpha, beta] :
                 {std::pair{1.0, 0.0}, std::pair{-0.5, 1.0}, std::pair{0.125, -2.0}}) {
              Case cs;
              cs.ta = ta, cs.tb = tb, cs.m = m, cs.n = n, cs.k = k;
              cs.alpha = alpha, cs.beta = beta, cs.pad = 3, cs.nan_c = beta == 0.0;
              ASSERT_TRUE(check_case<float>(cs, Entry::Small));
            }
          }
        }
      }
    }
  }
}

// B's rows 512 or 1024 floats apart, as a head's v or dout in a (B, T, H E)
// projection: such a B is copied into a panel first (Note [Small GEMM]).
TEST(BlasSmallGemm, MatchesReferenceWithBsRowsAPowerOfTwoApart) {
  for (int64_t ldb : {512, 1024}) {
    for (int64_t m : {6, 7, 16, 25}) {
      for (int64_t n : {8, 17, 128}) {
        for (int64_t k : {3, 16}) {
          for (auto [alpha, beta] : {std::pair{1.0, 0.0}, std::pair{-0.5, 1.0}}) {
            Case cs;
            cs.m = m, cs.n = n, cs.k = k, cs.pad = ldb - n;
            cs.alpha = alpha, cs.beta = beta, cs.nan_c = beta == 0.0;
            ASSERT_EQ(cs.ldb(), ldb);
            ASSERT_TRUE(check_case<float>(cs, Entry::Small));
          }
        }
      }
    }
  }
}

TEST(BlasSmallGemm, AttentionShapesGoToItWhereTheBlasPacks) {
  // Never by timing: the same shape always takes the same path on a machine.
  EXPECT_EQ(prefers_small_sgemm(16, 16, 128), prefers_small_sgemm(16, 16, 128));
  EXPECT_FALSE(prefers_small_sgemm(512, 128, 128));
  EXPECT_FALSE(prefers_small_sgemm(64, 64, 64));
}

// in float32, so only the float32 accumulation differs from the reference.
::testing::AssertionResult check_bf16_case(const Case& cs) {
  auto bf16_vector = [](int64_t size, uint32_t seed) {
    std::vector<BFloat16> v;
    for (float x : random_vector<float>(size, seed)) v.emplace_back(x);
    return v;
  };
  const std::vector<BFloat16> a =
      bf16_vector(cs.broadcast_a ? cs.size_a() : cs.stride_a() * cs.batch, 1);
  const std::vector<BFloat16> b =
      bf16_vector(cs.broadcast_b ? cs.size_b() : cs.stride_b() * cs.batch, 2);
  const float sentinel = 12345.0f;
  std::vector<float> c(size_t(cs.stride_c() * cs.batch), sentinel);
  gemm_batched_bf16(args_of(cs, a.data(), b.data(), c.data()), batch_of(cs));
  for (int64_t s = 0; s < cs.batch; ++s) {
    const BFloat16* as = a.data() + s * cs.stride_a();
    const BFloat16* bs = b.data() + s * cs.stride_b();
    const float* cs_out = c.data() + s * cs.stride_c();
    for (int64_t e = 0; e < cs.stride_c(); ++e) {
      const int64_t i = e / cs.ldc(), j = e % cs.ldc();
      if (i >= cs.m || j >= cs.n) {
        if (cs_out[e] != sentinel) {
          return ::testing::AssertionFailure() << cs.str() << ": C written outside its matrix";
        }
        continue;
      }
      double sum = 0, mag = 0;
      for (int64_t p = 0; p < cs.k; ++p) {
        const double x = double(float(cs.ta ? as[p * cs.lda() + i] : as[i * cs.lda() + p]));
        const double y = double(float(cs.tb ? bs[j * cs.ldb() + p] : bs[p * cs.ldb() + j]));
        sum += x * y;
        mag += std::abs(x * y);
      }
      if (std::abs(double(cs_out[e]) - sum) > 1e-5 * mag + 1e-30) {
        return ::testing::AssertionFailure() << cs.str() << ": C[" << s << "][" << i << ", " << j
                                             << "] = " << cs_out[e] << ", want " << sum;
      }
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(BlasBf16, MatchesReferenceForEveryLayout) {
  if (!has_bf16_gemm()) GTEST_SKIP() << "no bfloat16 GEMM kernel on this CPU";
  for_each_thread_count([] {
    for (bool ta : {false, true}) {
      for (bool tb : {false, true}) {
        for (auto [m, n, k] :
             {std::array<int64_t, 3>{1, 1, 1}, std::array<int64_t, 3>{1, 130, 65},
              std::array<int64_t, 3>{3, 17, 65}, std::array<int64_t, 3>{130, 65, 17},
              std::array<int64_t, 3>{512, 176, 128}, std::array<int64_t, 3>{17, 3, 0}}) {
          for (int64_t pad : {0, 5}) {
            Case cs;
            cs.ta = ta, cs.tb = tb, cs.m = m, cs.n = n, cs.k = k, cs.pad = pad;
            ASSERT_TRUE(check_bf16_case(cs));
            cs.batch = 5;
            ASSERT_TRUE(check_bf16_case(cs));
            cs.broadcast_b = true;
            ASSERT_TRUE(check_bf16_case(cs));
          }
        }
      }
    }
  });
}

// Autocast's choice of kernel: decoding always takes the bf16 path (its own
// kernel, no per-call cost, widening where the CPU has no bf16
// instructions), tiny products the float32 GEMM, and larger ones the bf16
// GEMM where the CPU has one.
TEST(BlasBf16, PrefersBf16ForDecodingAndLargeProductsOnly) {
  EXPECT_TRUE(prefers_bf16_gemm(1, false, 1, 384, 384));  // a decoded token
  EXPECT_TRUE(prefers_bf16_gemm(12, false, 1, 384, 64));  // attention's decoding rows
  EXPECT_FALSE(prefers_bf16_gemm(1, true, 1, 384, 384));  // transposed A: no decoding kernel
  EXPECT_FALSE(prefers_bf16_gemm(1, false, 16, 16, 16));
  if (!has_bf16_gemm()) {
    EXPECT_FALSE(prefers_bf16_gemm(1, false, 512, 128, 128));
    return;
  }
  EXPECT_TRUE(prefers_bf16_gemm(1, false, 512, 128, 128));  // a training linear
  EXPECT_TRUE(prefers_bf16_gemm(256, false, 16, 16, 128));  // a batch, large in total
}

// Decoding rows run on every CPU, bf16 instructions or not, one matrix or a
// batch of them (attention's), at depths that end in every part of the dot
// product's loop (its steps, single vectors, a tail).
TEST(BlasBf16, DecodingRowsRunWithoutBf16Kernels) {
  for_each_thread_count([] {
    for (bool tb : {false, true}) {
      for (int64_t m = 1; m <= 4; ++m) {
        for (int64_t k : {1, 7, 65, 200, 1031}) {
          Case cs;
          cs.tb = tb, cs.m = m, cs.n = 130, cs.k = k;
          ASSERT_TRUE(check_bf16_case(cs));
          cs.batch = 5;
          ASSERT_TRUE(check_bf16_case(cs));
        }
      }
    }
  });
}

TEST(BlasBf16, RoundsToNearestEvenAndKeepsNaN) {
  const float inputs[] = {1.0f,
                          1.00390625f /* halfway: to even */,
                          1.01171875f /* halfway: up */,
                          -3.14159f,
                          1e-40f,
                          std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  BFloat16 out[std::size(inputs)];
  round_to_bf16(inputs, out, int64_t(std::size(inputs)));
  for (size_t i = 0; i < std::size(inputs); ++i) {
    if (std::isnan(inputs[i])) {
      EXPECT_TRUE(std::isnan(float(out[i])));
    } else {
      EXPECT_EQ(out[i].bits, BFloat16(inputs[i]).bits) << inputs[i];
    }
  }
  EXPECT_EQ(float(out[1]), 1.0f);
  EXPECT_EQ(float(out[2]), 1.015625f);
}

TEST(BlasBackend, NamesTheLibraryPerDtype) {
  EXPECT_STRNE(gemm_backend(kFloat32), "none");
  EXPECT_STRNE(gemm_backend(kFloat64), "none");
  EXPECT_STREQ(gemm_backend(kInt64), "none");
}

}  // namespace
}  // namespace stride::cpu
