// Collectives on every dtype and reduce op, on contiguous and non-contiguous
// operands, synchronous and async, on the world and on sub-groups. Run on 1,
// 2 and 4 processes (tests/distributed/CMakeLists.txt); with one, every
// collective is the identity and the expectations below still hold.
#include <gtest/gtest.h>

#include <algorithm>

#include "stride/distributed.h"
#include "stride/stride.h"

namespace stride::distributed {
namespace {

const std::vector<ScalarType> kAllDtypes = {kBool,    kUInt8,    kInt32,   kInt64,
                                            kFloat16, kBFloat16, kFloat32, kFloat64};

// Rank r's operand: element i holds (i + r) % 7 (small integers: exact in
// every dtype, sums included), a bool being (i + r) % 3 == 0.
Tensor operand(IntArrayRef shape, ScalarType dtype, int r) {
  std::vector<double> values(size_t(numel_of(shape)));
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = dtype == kBool ? double((i + size_t(r)) % 3 == 0) : double((i + size_t(r)) % 7);
  }
  return tensor(values, shape).to(dtype);
}

// Equal values, compared in float64.
bool same(const Tensor& a, const Tensor& b) {
  return equal(a.to(kFloat64), b.to(kFloat64));
}

// True when every element of `t` equals `value`.
bool all_equal(const Tensor& t, double value) {
  return t.to(kFloat64).eq(value).to(kInt64).sum().item<int64_t>() == t.numel();
}

// The reduction of every rank's operand, computed locally in float64.
Tensor expected_reduction(IntArrayRef shape, ScalarType dtype, ReduceOp op, int size) {
  Tensor acc = operand(shape, dtype, 0).to(kFloat64);
  for (int r = 1; r < size; ++r) {
    const Tensor x = operand(shape, dtype, r).to(kFloat64);
    if (op == ReduceOp::Max || (dtype == kBool && op != ReduceOp::Min)) {
      acc = maximum(acc, x);
    } else if (op == ReduceOp::Min) {
      acc = minimum(acc, x);
    } else {
      acc = acc + x;
    }
  }
  if (op == ReduceOp::Avg) acc = acc / double(size);
  return acc.to(dtype);
}

// `values` (2-d) copied into a non-contiguous view: every other column of a
// [cols, rows * 2] tensor of -1s, transposed. The other columns must keep -1.
struct Strided {
  Tensor base;
  Tensor view;
};
Strided strided_like(const Tensor& values) {
  Strided s;
  s.base = full({values.size(1), values.size(0) * 2}, -1, values.options().dtype(kFloat64))
               .to(values.dtype());
  s.view = s.base.slice(1, 0, values.size(0) * 2, 2).t();
  s.view.copy_(values);
  return s;
}

bool untouched_outside(const Strided& s) {
  return all_equal(s.base.slice(1, 1, s.base.size(1), 2), -1);
}

std::vector<ReduceOp> ops_for(ScalarType dtype) {
  std::vector<ReduceOp> ops = {ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min};
  if (is_floating_point(dtype)) ops.push_back(ReduceOp::Avg);
  return ops;
}

TEST(Collectives, AllReduceEveryDtypeAndOp) {
  const int r = rank(), n = world_size();
  for (ScalarType dtype : kAllDtypes) {
    for (ReduceOp op : ops_for(dtype)) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " " + to_string(op));
      Tensor t = operand({3, 5}, dtype, r);
      all_reduce(t, op);
      EXPECT_TRUE(same(t, expected_reduction({3, 5}, dtype, op, n)));
    }
  }
}

TEST(Collectives, AllReduceNonContiguousWritesOnlyTheView) {
  const int r = rank(), n = world_size();
  for (ScalarType dtype : {kInt32, kFloat16, kFloat32, kFloat64}) {
    SCOPED_TRACE(to_string(dtype));
    Strided s = strided_like(operand({3, 4}, dtype, r));
    ASSERT_FALSE(s.view.is_contiguous());
    const uint64_t version = s.view.version();
    all_reduce(s.view, ReduceOp::Sum);
    EXPECT_TRUE(same(s.view, expected_reduction({3, 4}, dtype, ReduceOp::Sum, n)));
    EXPECT_TRUE(untouched_outside(s));
    EXPECT_GT(s.view.version(), version);
  }
}

TEST(Collectives, BroadcastFromTheLastRank) {
  const int r = rank(), n = world_size();
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    Tensor t = operand({4, 3}, dtype, r);
    broadcast(t, n - 1);
    EXPECT_TRUE(same(t, operand({4, 3}, dtype, n - 1)));
    Strided s = strided_like(operand({2, 3}, dtype, r));
    broadcast(s.view, 0);
    EXPECT_TRUE(same(s.view, operand({2, 3}, dtype, 0)));
  }
}

TEST(Collectives, AllGatherStacksRanksInOrder) {
  const int r = rank(), n = world_size();
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    const Tensor in = operand({2, 3}, dtype, r).t();  // non-contiguous input
    Tensor out = empty({n, 3, 2}, TensorOptions(dtype));
    all_gather(out, in);
    for (int k = 0; k < n; ++k) {
      EXPECT_TRUE(same(out.select(0, k), operand({2, 3}, dtype, k).t()));
    }
    // A non-contiguous out: the transpose of a [6, n] tensor.
    Tensor base = empty({6, n}, TensorOptions(dtype));
    Tensor out_t = base.t();
    Tensor flat_in = operand({6}, dtype, r);
    all_gather(out_t, flat_in);
    for (int k = 0; k < n; ++k) {
      EXPECT_TRUE(same(base.select(1, k), operand({6}, dtype, k)));
    }
  }
}

TEST(Collectives, ReduceScatterGivesEachRankItsChunk) {
  const int r = rank(), n = world_size();
  for (ScalarType dtype : {kInt64, kBFloat16, kFloat32, kFloat64}) {
    for (ReduceOp op : ops_for(dtype)) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " " + to_string(op));
      const Tensor in = operand({n * 4}, dtype, r);
      Tensor out = empty({4}, TensorOptions(dtype));
      reduce_scatter(out, in, op);
      const Tensor all = expected_reduction({n * 4}, dtype, op, n);
      EXPECT_TRUE(same(out, all.slice(0, r * 4, r * 4 + 4)));
    }
  }
}

TEST(Collectives, AsyncHandlesCompleteInAnyWaitOrder) {
  const int r = rank(), n = world_size();
  std::vector<Tensor> tensors;
  std::vector<Work> works;
  for (int i = 0; i < 6; ++i) {
    tensors.push_back(full({1000}, double(r + i), TensorOptions(kFloat32)));
    works.push_back(all_reduce(tensors.back(), ReduceOp::Sum, nullptr, /*async_op=*/true));
  }
  for (int i = 5; i >= 0; --i) works[size_t(i)].wait();
  for (int i = 0; i < 6; ++i) {
    const double want = double(n) * (n - 1) / 2 + double(n * i);
    EXPECT_EQ(tensors[size_t(i)][0].item<double>(), want);
    EXPECT_TRUE(works[size_t(i)].is_completed());
  }
  works[0].wait();  // idempotent
}

TEST(Collectives, SubGroupsReduceAmongTheirMembers) {
  const int r = rank(), n = world_size();
  std::vector<int> evens;
  for (int k = 0; k < n; k += 2) evens.push_back(k);
  std::shared_ptr<ProcessGroup> group = new_group(evens);
  if (r % 2 != 0) {
    EXPECT_EQ(group, nullptr);
  } else {
    ASSERT_NE(group, nullptr);
    EXPECT_EQ(group->size(), int(evens.size()));
    EXPECT_EQ(group->rank(), r / 2);
    EXPECT_EQ(group->world_ranks(), evens);
    Tensor t = full({3}, double(r), TensorOptions(kInt64));
    all_reduce(t, ReduceOp::Sum, group.get());
    int64_t want = 0;
    for (int k : evens) want += k;
    EXPECT_TRUE(all_equal(t, double(want)));
  }
  // A reversed group: group rank 0 is the last world rank.
  std::vector<int> reversed(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) reversed[size_t(k)] = n - 1 - k;
  auto rev = new_group(reversed);
  ASSERT_NE(rev, nullptr);
  EXPECT_EQ(rev->rank(), n - 1 - r);
  Tensor t = full({2}, double(r), TensorOptions(kFloat64));
  broadcast(t, 0, rev.get());
  EXPECT_TRUE(all_equal(t, double(n - 1)));
  barrier(rev.get());
}

TEST(Collectives, ErrorsNameTheOpAndTheProblem) {
  const int n = world_size();
  Tensor ints = zeros({4}, TensorOptions(kInt64));
  try {
    all_reduce(ints, ReduceOp::Avg);
    FAIL() << "avg of integers did not throw";
  } catch (const DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("[all_reduce] ReduceOp avg"), std::string::npos);
  }
  Tensor out = empty({n * 4 + 1}, TensorOptions(kFloat32));
  EXPECT_THROW(all_gather(out, zeros({4})), ShapeError);
  Tensor f = zeros({4});
  EXPECT_THROW(broadcast(f, n), ValueError);
  Tensor out16 = empty({n * 4}, TensorOptions(kFloat16));
  EXPECT_THROW(all_gather(out16, zeros({4})), DTypeError);
  Tensor meta = empty({4}, TensorOptions().device(kMeta));
  EXPECT_THROW(all_reduce(meta), DeviceError);
  EXPECT_THROW(new_group({0, 0}), ValueError);
  barrier();  // every rank reached here: no collective was left half-issued
}

TEST(Collectives, WorldMatchesTheLauncher) {
  // mpirun's variables, or the environment-variable launcher's.
  const char* mpi_size = std::getenv("OMPI_COMM_WORLD_SIZE");
  const char* env_size = std::getenv("WORLD_SIZE");
  const int launched = mpi_size ? std::atoi(mpi_size) : env_size ? std::atoi(env_size) : 1;
  EXPECT_EQ(world_size(), launched);
  EXPECT_EQ(launched_world_size(), mpi_size || env_size ? launched : 0);
  EXPECT_GE(rank(), 0);
  EXPECT_LT(rank(), world_size());
  EXPECT_EQ(rank(), launched_rank());
  EXPECT_TRUE(is_initialized());
  if (world_size() > 1) {
    EXPECT_TRUE(mpi_size ? mpi_available() : gloo_available());
  }
}

}  // namespace
}  // namespace stride::distributed
