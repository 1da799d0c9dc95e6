// DistributedDataParallel on 1, 2 and 4 processes: gradients are the global
// batch's, buckets start reducing during backward, unused parameters are
// named, no_sync() accumulates, and deterministic shards reproduce the
// single-process arithmetic bit for bit.
#include <gtest/gtest.h>

#include "stride/distributed/ddp.h"
#include "stride/stride.h"

namespace stride::distributed {
namespace {

constexpr int64_t kBatch = 8;

struct Net : nn::Module {
  explicit Net(int64_t hidden = 16, bool with_unused = false) : nn::Module("Net") {
    fc1 = register_module("fc1", std::make_shared<nn::Linear>(6, hidden));
    fc2 = register_module("fc2", std::make_shared<nn::Linear>(hidden, hidden));
    fc3 = register_module("fc3", std::make_shared<nn::Linear>(hidden, 3));
    if (with_unused) unused = register_module("unused", std::make_shared<nn::Linear>(3, 3));
  }
  Tensor forward(const Tensor& x) override {
    return fc3->call(tanh(fc2->call(tanh(fc1->call(x)))));
  }
  std::shared_ptr<nn::Linear> fc1, fc2, fc3, unused;
};

// The global batch every rank knows; each takes its rows.
struct Data {
  Tensor x, y;
};
Data global_batch(uint64_t seed) {
  Generator gen(seed);
  Tensor x = randn({kBatch, 6}, {}, &gen);
  return {x, randn({kBatch, 3}, {}, &gen)};
}

Tensor loss_on_rows(Net& net, const Data& d, std::pair<int64_t, int64_t> rows) {
  const auto [b, e] = rows;
  return nn::functional::mse_loss(net.call(d.x.slice(0, b, e)), d.y.slice(0, b, e));
}

// A reference model with rank 0's initial weights (DDP broadcasts them).
std::shared_ptr<Net> reference(int64_t hidden = 16, bool with_unused = false) {
  manual_seed(100);
  return std::make_shared<Net>(hidden, with_unused);
}

// The model each rank builds: from its own seed, as if ranks disagreed.
std::shared_ptr<Net> per_rank_model(bool with_unused = false) {
  manual_seed(100 + uint64_t(rank()));
  return std::make_shared<Net>(16, with_unused);
}

void expect_grads_near(const nn::Module& got, const nn::Module& want, double tol) {
  const auto g = got.named_parameters(), w = want.named_parameters();
  ASSERT_EQ(g.size(), w.size());
  for (size_t i = 0; i < g.size(); ++i) {
    SCOPED_TRACE(g.items()[i].first);
    const Tensor& a = g.items()[i].second.grad();
    const Tensor& b = w.items()[i].second.grad();
    ASSERT_TRUE(a.defined());
    ASSERT_TRUE(b.defined());
    EXPECT_LE((a - b).abs().max().item<double>(), tol);
  }
}

TEST(DDP, BroadcastsRankZerosWeightsAndAveragesTheGlobalBatch) {
  auto model = per_rank_model();
  DistributedDataParallel ddp(model, DDPOptions{.bucket_cap_mb = 0.001});
  auto ref = reference();
  EXPECT_TRUE(equal(model->fc1->weight, ref->fc1->weight));

  const Data d = global_batch(7);
  loss_on_rows(*model, d, shard_rows(kBatch, rank(), world_size(), 0, 0)).backward();
  loss_on_rows(*ref, d, {0, kBatch}).backward();
  expect_grads_near(*model, *ref, 1e-6);
}

TEST(DDP, BucketsFollowReverseRegistrationOrder) {
  auto model = per_rank_model();
  DistributedDataParallel small(model, DDPOptions{.bucket_cap_mb = 1e-6});
  const auto buckets = small.bucket_names();
  ASSERT_EQ(buckets.size(), 6u);  // one parameter each
  EXPECT_EQ(buckets.front(), std::vector<std::string>{"fc3.bias"});
  EXPECT_EQ(buckets.back(), std::vector<std::string>{"fc1.weight"});
}

TEST(DDP, OneBucketByDefaultForASmallModel) {
  auto model = per_rank_model();
  DistributedDataParallel ddp(model);
  ASSERT_EQ(ddp.bucket_names().size(), 1u);
  EXPECT_EQ(ddp.bucket_names()[0].size(), 6u);
}

// The profiler shows every bucket but the last submitted to the
// communication thread while backward still runs (the hook of a bucket's
// last parameter launches it). When the transfer itself begins depends on
// the scheduler; bench/distributed_bench.cpp measures that (the share of
// each all-reduce hidden behind backward).
TEST(DDP, ReductionsAreLaunchedBeforeBackwardEnds) {
  auto model = std::make_shared<Net>(256);
  DistributedDataParallel ddp(model, DDPOptions{.bucket_cap_mb = 0.001});
  ASSERT_GE(ddp.bucket_names().size(), 3u);
  const Data d = global_batch(3);
  profiler::Profiler prof;
  prof.start();
  loss_on_rows(*model, d, shard_rows(kBatch, rank(), world_size(), 0, 0)).backward();
  prof.stop();
  std::vector<int64_t> launches;
  int64_t last_node_end = -1;
  for (const profiler::Event& e : prof.events()) {
    if (e.name == "DistributedDataParallel.launch_bucket") launches.push_back(e.start_ns);
    if (e.name.find("Backward") != std::string::npos) {
      last_node_end = std::max(last_node_end, e.end_ns);
    }
  }
  ASSERT_EQ(launches.size(), ddp.bucket_names().size());
  std::sort(launches.begin(), launches.end());
  for (size_t b = 0; b + 1 < launches.size(); ++b) EXPECT_LT(launches[b], last_node_end);
}

TEST(DDP, NamesParametersWithoutGradient) {
  auto model = per_rank_model(/*with_unused=*/true);
  DistributedDataParallel ddp(model);
  const Data d = global_batch(5);
  try {
    loss_on_rows(*model, d, shard_rows(kBatch, rank(), world_size(), 0, 0)).backward();
    FAIL() << "an unused parameter went unnoticed";
  } catch (const DistributedError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("unused.weight, unused.bias"), std::string::npos) << what;
    EXPECT_NE(what.find("find_unused_parameters"), std::string::npos) << what;
  }
}

TEST(DDP, FindUnusedParametersCountsThemAsZero) {
  auto model = per_rank_model(/*with_unused=*/true);
  DistributedDataParallel ddp(model, DDPOptions{.find_unused_parameters = true});
  auto ref = reference(16, true);
  const Data d = global_batch(5);
  loss_on_rows(*model, d, shard_rows(kBatch, rank(), world_size(), 0, 0)).backward();
  loss_on_rows(*ref, d, {0, kBatch}).backward();
  EXPECT_TRUE(equal(model->unused->weight.grad(), zeros({3, 3})));
  EXPECT_LE((model->fc1->weight.grad() - ref->fc1->weight.grad()).abs().max().item<double>(), 1e-6);
}

TEST(DDP, FrozenParametersStayOutOfTheBuckets) {
  auto model = per_rank_model();
  model->fc1->weight.requires_grad_(false);
  DistributedDataParallel ddp(model);
  for (const auto& bucket : ddp.bucket_names()) {
    EXPECT_EQ(std::count(bucket.begin(), bucket.end(), "fc1.weight"), 0);
  }
  const Data d = global_batch(4);
  loss_on_rows(*model, d, shard_rows(kBatch, rank(), world_size(), 0, 0)).backward();
  EXPECT_FALSE(model->fc1->weight.grad().defined());
  EXPECT_TRUE(model->fc1->bias.grad().defined());
}

TEST(DDP, NoSyncAccumulatesLocallyUntilTheNextSyncedBackward) {
  auto model = per_rank_model();
  DistributedDataParallel ddp(model);
  auto ref = reference();
  const auto rows = shard_rows(kBatch, rank(), world_size(), 0, 0);
  for (uint64_t micro = 0; micro < 3; ++micro) {
    const Data d = global_batch(20 + micro);
    if (micro < 2) {
      auto guard = ddp.no_sync();
      loss_on_rows(*model, d, rows).backward();
    } else {
      loss_on_rows(*model, d, rows).backward();
    }
    loss_on_rows(*ref, d, {0, kBatch}).backward();
  }
  expect_grads_near(*model, *ref, 1e-5);
}

// With deterministic shards the gradient is, bit for bit, the shards'
// gradients summed in shard order and divided by their count, whatever the
// world size: here computed by one process alone.
TEST(DDP, DeterministicShardsMatchOneProcessBitForBit) {
  constexpr int kShards = 4;
  auto model = per_rank_model();
  DistributedDataParallel ddp(model,
                              DDPOptions{.bucket_cap_mb = 0.001, .deterministic_shards = kShards});
  ASSERT_EQ(ddp.local_shards() * world_size(), kShards);
  const Data d = global_batch(11);
  for (int k = 0; k < ddp.local_shards(); ++k) {
    loss_on_rows(*model, d, shard_rows(kBatch, rank(), world_size(), kShards, k)).backward();
  }

  auto ref = reference();
  std::vector<Tensor> sum;
  for (int s = 0; s < kShards; ++s) {
    ref->zero_grad();
    loss_on_rows(*ref, d, shard_rows(kBatch, 0, 1, kShards, s)).backward();
    const auto params = ref->parameters();
    for (size_t i = 0; i < params.size(); ++i) {
      if (s == 0) {
        sum.push_back(params[i].grad().clone());
      } else {
        sum[i].add_(params[i].grad());
      }
    }
  }
  const auto params = model->parameters();
  for (size_t i = 0; i < params.size(); ++i) {
    EXPECT_TRUE(equal(params[i].grad(), sum[i] / double(kShards))) << "parameter " << i;
  }
}

TEST(DDP, RefusesModelsThatDifferAcrossRanks) {
  if (world_size() == 1) GTEST_SKIP() << "one rank cannot disagree with itself";
  auto model = std::make_shared<Net>(rank() == 1 ? 17 : 16);
  try {
    DistributedDataParallel ddp(model);
    FAIL() << "a mismatched model was accepted";
  } catch (const DistributedError& e) {
    EXPECT_NE(std::string(e.what()).find("parameter names, dtypes and shapes of rank(s) 1 "),
              std::string::npos)
        << e.what();
  }
}

TEST(DDP, ChecksInitialValuesWhenAsked) {
  auto model = per_rank_model();  // a seed per rank
  if (world_size() == 1) {
    DistributedDataParallel ddp(model, DDPOptions{.check_initial_parameters = true});
    return;
  }
  EXPECT_THROW(DistributedDataParallel(model, DDPOptions{.check_initial_parameters = true}),
               DistributedError);
  manual_seed(9);
  auto same = std::make_shared<Net>();
  DistributedDataParallel ddp(same, DDPOptions{.check_initial_parameters = true});
}

TEST(DDP, ShardRowsCoverTheBatchOnce) {
  for (int world : {1, 2, 4}) {
    for (int shards : {0, 4, 8}) {
      std::vector<int> seen(32, 0);
      const int local = shards > 0 ? shards / world : 1;
      for (int r = 0; r < world; ++r) {
        for (int k = 0; k < local; ++k) {
          const auto [b, e] = shard_rows(32, r, world, shards, k);
          for (int64_t i = b; i < e; ++i) ++seen[size_t(i)];
        }
      }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), 32);
    }
  }
  EXPECT_THROW(shard_rows(30, 0, 4, 0, 0), ValueError);
}

}  // namespace
}  // namespace stride::distributed
