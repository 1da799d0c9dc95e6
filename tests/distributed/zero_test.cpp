// ZeRO-1: sharding the optimizer state changes where it lives, not the
// arithmetic. On 1, 2 and 4 processes every rank computes the same full
// gradients, steps a sharded and an unsharded Adam, and compares.
#include <gtest/gtest.h>

#include "stride/distributed/zero.h"
#include "stride/stride.h"

namespace stride::distributed {
namespace {

struct Model {
  std::shared_ptr<nn::Sequential> net;
  std::unique_ptr<optim::Adam> adam;
};

Model make_model() {
  manual_seed(3);
  Model m;
  m.net = std::make_shared<nn::Sequential>();
  m.net->push_back(std::make_shared<nn::Linear>(5, 32));
  m.net->push_back(std::make_shared<nn::Linear>(32, 17));
  m.net->push_back(std::make_shared<nn::Linear>(17, 2));
  m.adam = std::make_unique<optim::Adam>(m.net->parameters(),
                                         optim::AdamOptions(1e-2).weight_decay(0.1));
  return m;
}

void train_step(Model& m, int step, ShardedOptimizer* sharded) {
  Generator gen(uint64_t(100 + step));
  const Tensor x = randn({8, 5}, {}, &gen);
  m.adam->zero_grad();
  m.net->call(x).square().mean().backward();
  if (sharded) {
    sharded->step();
  } else {
    m.adam->step();
  }
}

bool same_parameters(const Model& a, const Model& b) {
  const auto pa = a.net->parameters(), pb = b.net->parameters();
  for (size_t i = 0; i < pa.size(); ++i) {
    if (!equal(pa[i], pb[i])) return false;
  }
  return true;
}

TEST(ZeRO1, StepsBitForBitAsTheUnshardedOptimizer) {
  Model plain = make_model(), zero = make_model();
  ShardedOptimizer sharded(*zero.adam);
  for (int step = 0; step < 5; ++step) {
    train_step(plain, step, nullptr);
    train_step(zero, step, &sharded);
    ASSERT_TRUE(same_parameters(plain, zero)) << "step " << step;
  }
  // Each rank holds its share of the state, and together all of it.
  int64_t full = 0;
  for (const Tensor& p : plain.net->parameters()) {
    for (const auto& [name, t] : plain.adam->state(p)->tensors) full += int64_t(t.nbytes());
  }
  Tensor held = full_like(zeros({1}, TensorOptions(kInt64)), sharded.state_bytes());
  all_reduce(held);
  EXPECT_EQ(held.item<int64_t>(), full);
  if (world_size() > 1) {
    EXPECT_LT(sharded.state_bytes(), full);
  }
}

TEST(ZeRO1, GathersTheFullStateAndResumesFromIt) {
  Model plain = make_model(), zero = make_model();
  ShardedOptimizer sharded(*zero.adam);
  for (int step = 0; step < 3; ++step) {
    train_step(plain, step, nullptr);
    train_step(zero, step, &sharded);
  }
  const optim::OptimizerState want = plain.adam->state_dict();
  const optim::OptimizerState got = sharded.state_dict();
  EXPECT_EQ(got.optimizer, want.optimizer);
  EXPECT_EQ(got.scalars, want.scalars);
  ASSERT_EQ(got.tensors.size(), want.tensors.size());
  for (size_t i = 0; i < want.tensors.size(); ++i) {
    EXPECT_EQ(got.tensors[i].first, want.tensors[i].first);
    EXPECT_TRUE(equal(got.tensors[i].second, want.tensors[i].second)) << want.tensors[i].first;
  }

  // A fresh sharded optimizer resumed from the full state goes on exactly.
  Model resumed = make_model();
  for (size_t i = 0; i < resumed.net->parameters().size(); ++i) {
    NoGradGuard no_grad;
    resumed.net->parameters()[i].copy_(plain.net->parameters()[i]);
  }
  ShardedOptimizer resumed_sharded(*resumed.adam);
  resumed_sharded.load_state_dict(got);
  train_step(plain, 3, nullptr);
  train_step(resumed, 3, &resumed_sharded);
  EXPECT_TRUE(same_parameters(plain, resumed));
}

}  // namespace
}  // namespace stride::distributed
