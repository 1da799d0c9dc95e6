// copy_ from a transposed source (Note [Transposed copy] in src/backends/cpu/transpose.h):
// the tiled path must copy exactly the bits the element-by-element walk of
// the view reads, for every tile size, edge, batch and offset.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include <stride/stride.h>

#include "support/layouts.h"
#include "support/thread_count.h"

namespace stride {
namespace {

using testing::ThreadCount;

// The bytes of `view`'s elements in row-major order, read one by one from
// its storage (the reference: no copy kernel involved).
std::string element_bytes(const Tensor& view) {
  const size_t es = view.element_size();
  const auto* base = static_cast<const char*>(view.storage()->data());
  std::string out;
  for (int64_t off : testing::element_offsets(view)) out.append(base + size_t(off) * es, es);
  return out;
}

std::string bytes_of(const Tensor& contiguous) {
  EXPECT_TRUE(contiguous.is_contiguous());
  return std::string(static_cast<const char*>(contiguous.data_ptr()), contiguous.nbytes());
}

// Equal byte strings, or where they first differ (not both strings).
::testing::AssertionResult same_bytes(const std::string& got, const std::string& want) {
  if (got == want) return ::testing::AssertionSuccess();
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return ::testing::AssertionFailure()
         << "sizes " << got.size() << " and " << want.size() << ", first difference at byte " << i;
}

// Random bits for every dtype (NaN payloads included for floats), so that a
// path that converts instead of copying bits would show.
Tensor random_bits(IntArrayRef shape, ScalarType dtype, Generator& gen) {
  Tensor t = empty(shape, dtype);
  if (dtype == kBool) return randint(0, 2, shape, kInt64, &gen).to(kBool);
  const Tensor words = randint(0, int64_t(1) << 31, {int64_t(t.nbytes() / 4 + 1)}, kInt64, &gen);
  const std::vector<int64_t> w = words.to_vector<int64_t>();
  auto* p = static_cast<char*>(t.data_ptr());
  for (size_t i = 0; i < t.nbytes(); ++i) p[i] = char(w[i / 4] >> (8 * (i % 4)));
  return t;
}

constexpr ScalarType kDtypes[] = {kFloat32, kFloat64, kBFloat16, kFloat16,
                                  kInt32,   kInt64,   kUInt8,    kBool};

TEST(TransposedCopy, MatchesTheElementWalkOnEveryShapeAndDtype) {
  Generator gen(7);
  const int64_t sides[] = {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 33, 70};
  for (ScalarType dt : kDtypes) {
    for (int64_t r : sides) {
      for (int64_t c : sides) {
        const Tensor x = random_bits({r, c}, dt, gen);
        const Tensor y = x.t().contiguous();
        ASSERT_TRUE(same_bytes(bytes_of(y), element_bytes(x.t())))
            << to_string(dt) << " (" << r << ", " << c << ").t()";
      }
    }
  }
}

TEST(TransposedCopy, BatchedPermutedAndOffsetSources) {
  Generator gen(8);
  for (ScalarType dt : {kFloat32, kFloat64, kBFloat16, kInt32}) {
    const Tensor x = random_bits({3, 2, 17, 40}, dt, gen);
    std::vector<Tensor> views = {
        x.transpose(-2, -1),                                   // batched
        x.permute({0, 3, 1, 2}),                               // unit dim moved outward
        x.permute({3, 2, 1, 0}),                               // fully reversed
        x.transpose(0, 3).narrow(0, 5, 30),                    // offset
        x.slice(2, 1, 17, 2).transpose(-2, -1),                // step-2 rows
        x.narrow(3, 3, 33).narrow(2, 2, 12).transpose(2, 3),   // offset in both
        x.select(1, 1).transpose(0, 2),                        // a selected slice
        x.narrow(3, 1, 16).transpose(-1, -2).narrow(3, 0, 9),  // a side of 9: small tiles
    };
    for (size_t i = 0; i < views.size(); ++i) {
      const Tensor& v = views[i];
      ASSERT_TRUE(same_bytes(bytes_of(v.contiguous()), element_bytes(v)))
          << to_string(dt) << " view " << i;
      Tensor dst = empty(v.sizes(), dt);
      dst.copy_(v);
      ASSERT_TRUE(same_bytes(bytes_of(dst), element_bytes(v))) << to_string(dt) << " view " << i;
    }
  }
}

TEST(TransposedCopy, WritesOnlyInsideAStridedDestination) {
  Generator gen(9);
  const Tensor src = random_bits({45, 37}, kFloat32, gen).t();  // (37, 45), strides (1, 37)
  Tensor base = full({40, 60}, -7.0f);
  Tensor dst = base.narrow(0, 2, 37).narrow(1, 5, 45);  // rows 60 apart, unit inner stride
  const Tensor before = base.clone();
  dst.copy_(src);
  EXPECT_TRUE(same_bytes(element_bytes(dst), element_bytes(src)));
  const Tensor outside = ones({40, 60}, kBool);
  outside.narrow(0, 2, 37).narrow(1, 5, 45).fill_(false);
  EXPECT_TRUE(equal(where(outside, base, before), before));

  // A transposed destination and a row-major source is the same transpose.
  Tensor tbase = full({45, 37}, -7.0f);
  Tensor tdst = tbase.t();
  const Tensor rows = random_bits({37, 45}, kFloat32, gen);
  tdst.copy_(rows);
  EXPECT_TRUE(same_bytes(element_bytes(tdst), element_bytes(rows)));
}

TEST(TransposedCopy, BroadcastSourcesAndConversions) {
  Generator gen(10);
  // A column expanded along the destination's unit dim (source stride 0).
  const Tensor col = random_bits({50, 1}, kFloat32, gen);
  const Tensor e = col.expand({50, 40});
  EXPECT_TRUE(same_bytes(bytes_of(e.contiguous()), element_bytes(e)));
  const Tensor e3 = random_bits({1, 20, 30}, kFloat32, gen).expand({3, 20, 30}).transpose(1, 2);
  EXPECT_TRUE(same_bytes(bytes_of(e3.contiguous()), element_bytes(e3)));

  // Converting copies take the elementwise loop and stay exact.
  const Tensor x = randn({33, 18}, kFloat32, &gen);
  Tensor d = empty({18, 33}, kFloat64);
  d.copy_(x.t());
  EXPECT_TRUE(equal(d, x.t().contiguous().to(kFloat64)));
  EXPECT_TRUE(equal(x.t().to(kBFloat16), x.t().contiguous().to(kBFloat16)));
}

TEST(TransposedCopy, IsTheSameOnOneAndTwoThreads) {
  Generator gen(11);
  const Tensor x = random_bits({8, 300, 170}, kFloat32, gen);
  const std::string want = element_bytes(x.transpose(1, 2));
  for (int n : {1, 2}) {
    ThreadCount t(n);
    EXPECT_TRUE(same_bytes(bytes_of(x.transpose(1, 2).contiguous()), want)) << n << " threads";
    EXPECT_TRUE(same_bytes(bytes_of(x.permute({2, 0, 1}).contiguous()),
                           element_bytes(x.permute({2, 0, 1}))))
        << n << " threads";
  }
}

}  // namespace
}  // namespace stride
