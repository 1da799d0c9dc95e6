// The TinyShakespeare loader: batches per second of random (x, y) windows at
// the article's 32 x 16 and at 64 x 256, built in the consumer (0 workers) or
// by 2 worker threads, against the article's get_batches (one randint of B
// starts, then a gather) as the baseline. Real time: workers' CPU time would
// not show in the consumer's. Its share of a training step: one Adam step of
// the article's smallest model (SimpleModel: Embedding(65, 128) -> Linear ->
// ReLU -> Linear(128, 65), 33,217 params) with and without the loader; the
// smallest model is the worst case for the loader's share.
//
// Needs the corpus: $STRIDE_DATA or data/tinyshakespeare.txt (no download).
#include <benchmark/benchmark.h>

#include <memory>
#include <optional>

#include "stride/data.h"
#include "stride/nn.h"
#include "stride/optim.h"

namespace {

using stride::data::DataLoader;
using stride::data::RandomWindows;
using stride::data::Split;

const stride::data::CharCorpus* corpus() {
  static const std::unique_ptr<stride::data::CharCorpus> c = [] {
    stride::data::FindDataOptions o;
    o.download = false;
    try {
      return std::make_unique<stride::data::CharCorpus>(stride::data::load_tinyshakespeare({}, o));
    } catch (const stride::Error&) {
      return std::unique_ptr<stride::data::CharCorpus>();
    }
  }();
  return c.get();
}

// Args: batch, context, workers.
void BM_TinyShakespeareLoader(benchmark::State& state) {
  const auto* c = corpus();
  if (!c) {
    state.SkipWithError("TinyShakespeare not found: set STRIDE_DATA");
    return;
  }
  const int64_t batch = state.range(0), context = state.range(1), workers = state.range(2);
  const RandomWindows windows = c->data.random_windows(Split::Train, context, batch * 1000);
  DataLoader loader(windows, {.batch_size = batch, .num_workers = workers, .seed = 1});
  for (auto _ : state) {
    std::optional<std::pair<stride::Tensor, stride::Tensor>> b = loader.next();
    if (!b) b = loader.next();
    benchmark::DoNotOptimize(b->first.data_ptr());
  }
  state.counters["batches/s"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["tokens/s"] =
      benchmark::Counter(double(state.iterations() * batch * context), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TinyShakespeareLoader)
    ->ArgNames({"B", "T", "workers"})
    ->Args({32, 16, 0})
    ->Args({32, 16, 2})
    ->Args({64, 256, 0})
    ->Args({64, 256, 2})
    ->UseRealTime();

// The article's get_batches: B starts from one randint, then copy the windows.
void BM_TinyShakespeareGetBatches(benchmark::State& state) {
  const auto* c = corpus();
  if (!c) {
    state.SkipWithError("TinyShakespeare not found: set STRIDE_DATA");
    return;
  }
  const int64_t batch = state.range(0), context = state.range(1);
  stride::Generator gen(1);
  for (auto _ : state) {
    auto [x, y] = c->data.random_batch(Split::Train, batch, context, &gen);
    benchmark::DoNotOptimize(x.data_ptr());
    benchmark::DoNotOptimize(y.data_ptr());
  }
  state.counters["batches/s"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_TinyShakespeareGetBatches)
    ->ArgNames({"B", "T"})
    ->Args({32, 16})
    ->Args({64, 256})
    ->UseRealTime();

// The article's SimpleModel (ladder stage 2).
struct SimpleModel : stride::nn::Module {
  SimpleModel() {
    embedding = register_module("embedding", std::make_shared<stride::nn::Embedding>(65, 128));
    linear1 = register_module("linear1", std::make_shared<stride::nn::Linear>(128, 128));
    linear2 = register_module("linear2", std::make_shared<stride::nn::Linear>(128, 65));
  }
  stride::Tensor forward(const stride::Tensor& ids) override {
    return linear2->forward(linear1->forward(embedding->forward(ids)).relu());
  }
  std::shared_ptr<stride::nn::Embedding> embedding;
  std::shared_ptr<stride::nn::Linear> linear1, linear2;
};

// Args: batch, context, use the loader (1) or one fixed batch (0).
void BM_SimpleModelTrainStep(benchmark::State& state) {
  const auto* c = corpus();
  if (!c) {
    state.SkipWithError("TinyShakespeare not found: set STRIDE_DATA");
    return;
  }
  const int64_t batch = state.range(0), context = state.range(1);
  const bool use_loader = state.range(2) != 0;
  const RandomWindows windows = c->data.random_windows(Split::Train, context, batch * 1000);
  DataLoader loader(windows, {.batch_size = batch, .seed = 1});
  SimpleModel model;
  stride::optim::Adam opt(model.parameters());
  std::pair<stride::Tensor, stride::Tensor> fixed = *loader.next();
  for (auto _ : state) {
    std::pair<stride::Tensor, stride::Tensor> b;
    if (use_loader) {
      auto next = loader.next();
      if (!next) next = loader.next();
      b = std::move(*next);
    } else {
      b = fixed;
    }
    opt.zero_grad();
    stride::Tensor logits = model.forward(b.first);
    stride::Tensor loss =
        stride::nn::functional::cross_entropy(logits.view({-1, 65}), b.second.view({-1}));
    loss.backward();
    opt.step();
  }
  state.counters["steps/s"] =
      benchmark::Counter(double(state.iterations()), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SimpleModelTrainStep)
    ->ArgNames({"B", "T", "loader"})
    ->Args({32, 16, 0})
    ->Args({32, 16, 1})
    ->UseRealTime();

}  // namespace
