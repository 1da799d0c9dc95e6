// Trains the correct Llama data-parallel and writes its losses and final
// weights, so that runs at different world sizes can be compared
// (ddp_equivalence.sh): the same seed and global batch must give the same
// results on 1, 2 or 4 processes, within float32 rounding with the
// all-reduce, bit for bit with deterministic shards.
//
//   [mpirun -np N] stride_ddp_equivalence --out FILE [--shards K] [--steps S]
//   stride_ddp_equivalence --compare A B --tolerance T
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "llama/model.h"
#include "lm/registry.h"
#include "lm/train.h"
#include "stride/distributed/ddp.h"
#include "stride/stride.h"

using namespace stride;

namespace {

constexpr int64_t kGlobalBatch = 32;

struct Args {
  std::string out, compare_a, compare_b;
  int shards = 0;
  int64_t steps = 50;
  double tolerance = 0;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw ValueError("missing the value of " + arg);
      return argv[++i];
    };
    if (arg == "--out") {
      a.out = next();
    } else if (arg == "--shards") {
      a.shards = std::stoi(next());
    } else if (arg == "--steps") {
      a.steps = std::stoll(next());
    } else if (arg == "--compare") {
      a.compare_a = next();
      a.compare_b = next();
    } else if (arg == "--tolerance") {
      a.tolerance = std::stod(next());
    } else {
      throw ValueError("unknown argument " + arg);
    }
  }
  return a;
}

// The largest |a - b| over every tensor of two result files (which must
// hold the same names and shapes).
int compare(const Args& a) {
  const io::SafetensorsContents x = io::load_safetensors(a.compare_a);
  const io::SafetensorsContents y = io::load_safetensors(a.compare_b);
  double worst = 0;
  std::string where;
  for (const auto& [name, t] : x.tensors) {
    const Tensor& u = y.at(name);
    if (!(u.sizes() == t.sizes())) throw ShapeError(name + " differs in shape");
    const double d = (t.to(kFloat64) - u.to(kFloat64)).abs().max().item<double>();
    if (d > worst || where.empty()) {
      worst = std::max(worst, d);
      where = name;
    }
  }
  std::printf("max |difference| %.3g (at %s), tolerance %.3g\n", worst, where.c_str(), a.tolerance);
  return worst <= a.tolerance ? 0 : 1;
}

// One step's global batch, the same on every rank and world size.
std::pair<Tensor, Tensor> global_batch(int64_t step, int64_t vocab, int64_t context) {
  Generator gen(1000 + uint64_t(step));
  Tensor tokens = randint(0, vocab, {kGlobalBatch, context + 1}, kInt64, &gen);
  return {tokens.slice(1, 0, context).contiguous(), tokens.slice(1, 1, context + 1).contiguous()};
}

int train(const Args& a) {
  distributed::init();
  const int rank = distributed::rank(), world = distributed::world_size();
  lm::ModelConfig config;
  config.d_model = 64;
  config.n_layers = 2;
  config.n_heads = 4;
  config.context = 16;
  config.dropout = 0;
  manual_seed(7);
  auto model = lm::build_model(config);
  distributed::DistributedDataParallel ddp(
      model, distributed::DDPOptions{.bucket_cap_mb = 0.05, .deterministic_shards = a.shards});
  lm::TrainConfig train_config;
  train_config.optimizer = "adamw";
  train_config.weight_decay = 0.1;
  auto optimizer = lm::make_optimizer(*model, train_config);

  const int parts = a.shards > 0 ? a.shards : world;
  std::vector<double> losses;
  for (int64_t step = 0; step < a.steps; ++step) {
    const auto [ids, targets] = global_batch(step, config.vocab_size, config.context);
    // Each backward's mean loss, in shard (or rank) order on every rank.
    Tensor part_losses = zeros({ddp.local_shards()}, TensorOptions(kFloat32));
    for (int k = 0; k < ddp.local_shards(); ++k) {
      const auto [b, e] = distributed::shard_rows(kGlobalBatch, rank, world, a.shards, k);
      Tensor loss = model->loss(ids.slice(0, b, e), targets.slice(0, b, e));
      loss.backward();
      part_losses[k].copy_(loss.detach());
    }
    Tensor all = empty({parts}, TensorOptions(kFloat32));
    distributed::all_gather(all, part_losses);
    double mean = 0;
    for (int s = 0; s < parts; ++s) mean += all[s].item<double>();
    losses.push_back(mean / parts);
    optimizer->step();
    optimizer->zero_grad();
  }
  if (rank == 0) {
    io::NamedTensors out = {{"losses", tensor(losses)}};
    for (const auto& [name, p] : model->named_parameters()) out.emplace_back(name, p);
    io::save_safetensors(a.out, out);
    std::printf("world %d, %s: loss %.6f -> %.6f\n", world,
                a.shards > 0 ? "deterministic shards" : "all-reduce", losses.front(),
                losses.back());
  }
  distributed::destroy();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const Args a = parse(argc, argv);
    if (!a.compare_a.empty()) return compare(a);
    if (a.out.empty()) throw ValueError("pass --out FILE or --compare A B");
    return train(a);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "stride_ddp_equivalence: %s\n", e.what());
    return 1;
  }
}
