// DataLoader: the NumPy-in-workers seed bug as a test, worker-count
// invariance, ordering under random delays, bounded prefetch, error
// propagation, early break / destruction mid-epoch, iterable datasets. Every
// test here is run under TSan in CI (STRIDE_NUM_THREADS=1).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "stride/data.h"
#include "stride/ops.h"

namespace stride::data {
namespace {

using Clock = std::chrono::steady_clock;

// Three random numbers per item, drawn from the sample's generator: the
// dataset of the NumPy bug report, written the stride way.
struct ThreeRandomNumbers {
  int64_t n = 16;
  int64_t size() const { return n; }
  Tensor get(int64_t /*index*/, Generator& gen) const { return rand({3}, kFloat64, &gen); }
};

// All batches of one epoch, concatenated into (N, ...).
template <class Loader>
Tensor one_epoch(Loader& loader) {
  std::vector<Tensor> batches;
  for (auto& batch : loader) batches.push_back(batch);
  return cat(batches, 0);
}

TEST(DataLoaderSeed, WorkersNeverShareRandomNumbers) {
  DataLoader loader(ThreeRandomNumbers{}, {.batch_size = 2, .num_workers = 4, .seed = 42});
  const Tensor epoch1 = one_epoch(loader);
  const Tensor epoch2 = one_epoch(loader);
  ASSERT_EQ(epoch1.sizes(), IntArrayRef({16, 3}));

  // No two items of an epoch share any of their numbers.
  std::set<double> seen;
  for (double v : epoch1.to_vector<double>()) EXPECT_TRUE(seen.insert(v).second) << v;
  // Epoch 2 differs from epoch 1, item by item and number by number.
  for (double v : epoch2.to_vector<double>()) EXPECT_EQ(seen.count(v), 0u) << v;

  // The same seed reproduces every number of both epochs exactly.
  DataLoader again(ThreeRandomNumbers{}, {.batch_size = 2, .num_workers = 4, .seed = 42});
  EXPECT_TRUE(equal(one_epoch(again), epoch1));
  EXPECT_TRUE(equal(one_epoch(again), epoch2));
}

TEST(DataLoaderSeed, ResultsAreIdenticalForEveryWorkerCount) {
  for (bool shuffle : {false, true}) {
    std::vector<Tensor> reference;
    for (int64_t workers : {0, 1, 2, 4}) {
      DataLoader loader(ThreeRandomNumbers{},
                        {.batch_size = 2, .shuffle = shuffle, .num_workers = workers, .seed = 7});
      std::vector<Tensor> epochs = {one_epoch(loader), one_epoch(loader)};
      if (reference.empty()) {
        reference = epochs;
        continue;
      }
      for (size_t e = 0; e < epochs.size(); ++e) {
        EXPECT_TRUE(equal(epochs[e], reference[e]))
            << "workers=" << workers << " shuffle=" << shuffle << " epoch=" << e;
      }
    }
  }
}

TEST(DataLoaderSeed, SampleGeneratorIsKeyedBySeedEpochAndIndex) {
  DataLoader loader(ThreeRandomNumbers{}, {.batch_size = 4, .num_workers = 2, .seed = 9});
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    const Tensor got = one_epoch(loader);
    for (int64_t i = 0; i < 16; ++i) {
      Generator gen = sample_generator(9, epoch, i);
      EXPECT_TRUE(equal(got[i], rand({3}, kFloat64, &gen))) << "epoch " << epoch << " item " << i;
    }
  }
}

TEST(DataLoaderSeed, DifferentSeedsDiffer) {
  DataLoader a(ThreeRandomNumbers{}, {.batch_size = 2, .seed = 1});
  DataLoader b(ThreeRandomNumbers{}, {.batch_size = 2, .seed = 2});
  EXPECT_FALSE(equal(one_epoch(a), one_epoch(b)));
}

TEST(DataLoaderSeed, UnseededLoaderFollowsManualSeed) {
  const GeneratorState saved = default_generator().get_state();
  manual_seed(123);
  DataLoader a(ThreeRandomNumbers{}, {.batch_size = 4, .num_workers = 2});
  manual_seed(123);
  DataLoader b(ThreeRandomNumbers{}, {.batch_size = 4});
  default_generator().set_state(saved);
  EXPECT_EQ(a.seed(), b.seed());
  EXPECT_TRUE(equal(one_epoch(a), one_epoch(b)));
}

TEST(DataLoaderSeed, ShuffleOrderDependsOnSeedAndEpochOnly) {
  auto order = [](int64_t workers) {
    DataLoader loader(make_dataset(50, [](int64_t i, Generator&) { return i; }),
                      {.batch_size = 5, .shuffle = true, .num_workers = workers, .seed = 3});
    std::vector<std::vector<int64_t>> epochs;
    for (int e = 0; e < 3; ++e) epochs.push_back(one_epoch(loader).to_vector<int64_t>());
    return epochs;
  };
  const auto ref = order(0);
  EXPECT_EQ(order(3), ref);
  EXPECT_NE(ref[0], ref[1]);
  EXPECT_NE(ref[1], ref[2]);
  // Epoch e's order is RandomSampler on sampler_generator(seed, e).
  for (int64_t e = 0; e < 3; ++e) {
    Generator gen = sampler_generator(3, e);
    EXPECT_EQ(RandomSampler(50).indices(gen), ref[size_t(e)]);
  }
  std::vector<int64_t> sorted = ref[0];
  std::sort(sorted.begin(), sorted.end());
  for (int64_t i = 0; i < 50; ++i) EXPECT_EQ(sorted[size_t(i)], i);
}

// Per-worker generators: derived from (base seed, worker id), the base seed
// drawn afresh each epoch.
TEST(DataLoaderSeed, WorkerGeneratorsAreDistinctPerWorkerAndEpoch) {
  struct Draw {
    int64_t worker;
    uint64_t value;
  };
  struct Recorder {
    std::shared_ptr<std::mutex> mu = std::make_shared<std::mutex>();
    std::shared_ptr<std::vector<Draw>> draws = std::make_shared<std::vector<Draw>>();
    int64_t size() const { return 40; }
    int64_t get(int64_t index) const {
      const WorkerInfo* info = get_worker_info();
      const uint64_t v = worker_generator().next_u64();
      std::lock_guard lock(*mu);
      draws->push_back({info->id, v});
      return index;
    }
  };
  const Recorder rec;
  const int64_t workers = 4;
  DataLoader loader(rec, {.batch_size = 2, .num_workers = workers, .seed = 11});
  std::set<uint64_t> all;
  for (int64_t epoch = 0; epoch < 2; ++epoch) {
    rec.draws->clear();
    one_epoch(loader);
    ASSERT_EQ(rec.draws->size(), 40u);
    const uint64_t base = worker_base_seed(11, epoch);
    // Each worker's draws are exactly its own stream, in order.
    std::map<int64_t, Generator> expected;
    for (const Draw& d : *rec.draws) {
      ASSERT_GE(d.worker, 0);
      ASSERT_LT(d.worker, workers);
      auto it = expected.find(d.worker);
      if (it == expected.end())
        it = expected.emplace(d.worker, make_worker_generator(base, d.worker)).first;
      EXPECT_EQ(d.value, it->second.next_u64()) << "worker " << d.worker << " epoch " << epoch;
      // No value repeats across workers or epochs.
      EXPECT_TRUE(all.insert(d.value).second);
    }
  }
  EXPECT_NE(worker_base_seed(11, 0), worker_base_seed(11, 1));
}

TEST(DataLoaderSeed, WorkerInfoOnlyInsideLoaderCode) {
  EXPECT_EQ(get_worker_info(), nullptr);
  EXPECT_THROW(worker_generator(), ValueError);
  DataLoader loader(make_dataset(4,
                                 [](int64_t, Generator&) {
                                   const WorkerInfo* info = get_worker_info();
                                   return std::vector<int64_t>{info->id, info->num_workers,
                                                               int64_t(info->in_consumer_thread)};
                                 }),
                    {.batch_size = 4});
  for (auto& batch : loader) {
    EXPECT_EQ(batch[0].to_vector<int64_t>(), std::vector<int64_t>(4, 0));
    EXPECT_EQ(batch[1].to_vector<int64_t>(), std::vector<int64_t>(4, 1));
    EXPECT_EQ(batch[2].to_vector<int64_t>(), std::vector<int64_t>(4, 1));
  }
  EXPECT_EQ(get_worker_info(), nullptr);
}

static_assert(!std::is_copy_constructible_v<Generator>,
              "a copyable Generator would let a dataset clone its stream into workers");

// ---- ordering, batching ----

TEST(DataLoaderOrder, BatchesArriveInSamplerOrderUnderRandomWorkerDelays) {
  auto slow = make_dataset(60, [](int64_t i, Generator& gen) {
    std::this_thread::sleep_for(std::chrono::microseconds(uniform_index(gen, 3000)));
    return i;
  });
  for (bool shuffle : {false, true}) {
    DataLoader loader(
        slow,
        {.batch_size = 3, .shuffle = shuffle, .num_workers = 4, .prefetch_factor = 2, .seed = 5});
    Generator gen = sampler_generator(5, 0);
    const std::vector<int64_t> expected =
        shuffle ? RandomSampler(60).indices(gen) : SequentialSampler(60).indices(gen);
    std::vector<int64_t> got;
    for (auto& batch : loader) {
      EXPECT_EQ(batch.size(0), 3);
      for (int64_t v : batch.to_vector<int64_t>()) got.push_back(v);
    }
    EXPECT_EQ(got, expected);
  }
}

TEST(DataLoaderOrder, DropLastAndSize) {
  auto ds = make_dataset(10, [](int64_t i, Generator&) { return i; });
  DataLoader keep(ds, {.batch_size = 4, .num_workers = 2});
  DataLoader drop(ds, {.batch_size = 4, .drop_last = true, .num_workers = 2});
  EXPECT_EQ(keep.size(), 3);
  EXPECT_EQ(drop.size(), 2);
  std::vector<int64_t> sizes;
  for (auto& b : keep) sizes.push_back(b.size(0));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2}));
  sizes.clear();
  for (auto& b : drop) sizes.push_back(b.size(0));
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4}));
}

TEST(DataLoaderOrder, EmptyDatasetGivesNoBatches) {
  DataLoader loader(make_dataset(0, [](int64_t i, Generator&) { return i; }),
                    {.batch_size = 4, .num_workers = 2});
  int n = 0;
  for (auto& b : loader) {
    (void)b;
    ++n;
  }
  EXPECT_EQ(n, 0);
  EXPECT_EQ(loader.begin(), loader.end());
}

TEST(DataLoaderOrder, NextPullsBatchesAndStartsTheNextEpoch) {
  DataLoader loader(ThreeRandomNumbers{}, {.batch_size = 4, .num_workers = 2, .seed = 4});
  std::vector<Tensor> epoch0, epoch1;
  while (auto b = loader.next()) epoch0.push_back(*b);
  EXPECT_EQ(loader.epoch(), 1);
  while (auto b = loader.next()) epoch1.push_back(*b);
  ASSERT_EQ(epoch0.size(), 4u);
  ASSERT_EQ(epoch1.size(), 4u);
  DataLoader ref(ThreeRandomNumbers{}, {.batch_size = 4, .seed = 4});
  EXPECT_TRUE(equal(cat(epoch0, 0), one_epoch(ref)));
  EXPECT_TRUE(equal(cat(epoch1, 0), one_epoch(ref)));
}

TEST(DataLoaderOrder, SetEpochReplaysAnEpoch) {
  DataLoader loader(ThreeRandomNumbers{}, {.batch_size = 4, .shuffle = true, .seed = 8});
  one_epoch(loader);
  const Tensor e1 = one_epoch(loader);
  loader.set_epoch(1);
  EXPECT_TRUE(equal(one_epoch(loader), e1));
}

TEST(DataLoaderOrder, CustomSamplerAndIndexCheck) {
  auto ds = make_dataset(10, [](int64_t i, Generator&) { return i; });
  DataLoader loader(ds,
                    {.batch_size = 2,
                     .num_workers = 2,
                     .sampler = std::make_shared<SubsetSampler>(std::vector<int64_t>{9, 0, 4})});
  EXPECT_EQ(one_epoch(loader).to_vector<int64_t>(), (std::vector<int64_t>{9, 0, 4}));
  DataLoader bad(ds, {.sampler = std::make_shared<SubsetSampler>(std::vector<int64_t>{3, 10})});
  try {
    bad.begin();
    FAIL() << "expected IndexError";
  } catch (const IndexError& e) {
    EXPECT_NE(std::string(e.what()).find("index 10"), std::string::npos) << e.what();
  }
}

TEST(DataLoaderOrder, RejectsBadOptions) {
  auto ds = make_dataset(10, [](int64_t i, Generator&) { return i; });
  using L = DataLoader<decltype(ds)>;
  EXPECT_THROW(L(ds, {.batch_size = 0}), ValueError);
  EXPECT_THROW(L(ds, {.num_workers = -1}), ValueError);
  EXPECT_THROW(L(ds, {.prefetch_factor = 0}), ValueError);
  EXPECT_THROW(L(ds, {.shuffle = true, .sampler = std::make_shared<SequentialSampler>(10)}),
               ValueError);
}

TEST(DataLoaderOrder, DatasetWithoutGeneratorAndSharedPointer) {
  auto ds = std::make_shared<TensorDataset>(
      std::vector<Tensor>{arange(12).view({6, 2}), arange(6, kFloat32)});
  DataLoader loader(ds, {.batch_size = 4, .num_workers = 2});
  std::vector<std::vector<Tensor>> batches;
  for (auto& b : loader) batches.push_back(b);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_TRUE(equal(batches[0][0], arange(8).view({4, 2})));
  EXPECT_TRUE(equal(batches[1][1], tensor<float>({4, 5})));
}

TEST(DataLoaderOrder, CustomCollateFunction) {
  auto ds = make_dataset(6, [](int64_t i, Generator&) { return i; });
  auto loader =
      make_data_loader(ds, {.batch_size = 4, .num_workers = 2}, [](std::vector<int64_t>&& xs) {
        int64_t s = 0;
        for (int64_t x : xs) s += x;
        return s;
      });
  std::vector<int64_t> sums;
  for (int64_t s : loader) sums.push_back(s);
  EXPECT_EQ(sums, (std::vector<int64_t>{0 + 1 + 2 + 3, 4 + 5}));
}

// ---- errors ----

struct ThrowsAt {
  int64_t bad;
  int64_t size() const { return 40; }
  int64_t get(int64_t index) const {
    if (index == bad) throw std::runtime_error("boom at " + std::to_string(index));
    return index;
  }
};

TEST(DataLoaderErrors, WorkerExceptionSurfacesWithWorkerAndSample) {
  for (int64_t workers : {0, 3}) {
    DataLoader loader(ThrowsAt{13}, {.batch_size = 4, .num_workers = workers});
    std::vector<int64_t> got;
    try {
      for (auto& b : loader) {
        for (int64_t v : b.to_vector<int64_t>()) got.push_back(v);
      }
      FAIL() << "expected a WorkerError";
    } catch (const WorkerError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("[DataLoader] worker "), std::string::npos) << msg;
      EXPECT_NE(msg.find("sample 13"), std::string::npos) << msg;
      EXPECT_NE(msg.find("batch 3"), std::string::npos) << msg;
      EXPECT_NE(msg.find("boom at 13"), std::string::npos) << msg;
      if (workers == 0) {
        EXPECT_NE(msg.find("consumer thread"), std::string::npos) << msg;
      }
      EXPECT_GE(e.worker_id(), 0);
      EXPECT_LT(e.worker_id(), std::max<int64_t>(workers, 1));
      EXPECT_EQ(e.sample_index(), 13);
      EXPECT_EQ(e.batch_index(), 3);
      EXPECT_THROW(std::rethrow_exception(e.original()), std::runtime_error);
    }
    // Every batch before the failing one arrived, in order.
    std::vector<int64_t> expected(12);
    for (int64_t i = 0; i < 12; ++i) expected[size_t(i)] = i;
    EXPECT_EQ(got, expected) << "workers=" << workers;
  }
}

TEST(DataLoaderErrors, IteratorCannotAdvanceAfterAnError) {
  DataLoader loader(ThrowsAt{0}, {.batch_size = 4, .num_workers = 2});
  EXPECT_THROW(loader.begin(), WorkerError);
  // A new epoch starts cleanly (and fails the same way).
  auto attempt = [&] {
    auto it = loader.begin();
    (void)it;
  };
  EXPECT_THROW(attempt(), WorkerError);
  DataLoader later(ThrowsAt{5}, {.batch_size = 4, .num_workers = 2});
  auto it = later.begin();
  EXPECT_THROW(++it, WorkerError);
  EXPECT_THROW(++it, ValueError);
}

TEST(DataLoaderErrors, CollateErrorNamesTheBatch) {
  auto ragged = make_dataset(8, [](int64_t i, Generator&) { return zeros({i < 5 ? 2 : 3}); });
  DataLoader loader(ragged, {.batch_size = 4, .num_workers = 2});
  try {
    for (auto& b : loader) (void)b;
    FAIL() << "expected a WorkerError";
  } catch (const WorkerError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("collating batch 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("example 1 has shape (3)"), std::string::npos) << msg;
    EXPECT_EQ(e.sample_index(), -1);
  }
}

// ---- stopping ----

// Counts get() calls; each takes ~0.5 ms.
struct Counting {
  std::shared_ptr<std::atomic<int64_t>> calls = std::make_shared<std::atomic<int64_t>>(0);
  int64_t n = 10000;
  int64_t size() const { return n; }
  int64_t get(int64_t index) const {
    calls->fetch_add(1);
    std::this_thread::sleep_for(std::chrono::microseconds(500));
    return index;
  }
};

// Waits (up to 10 s, for slow sanitizer builds) until `calls` reaches `n`.
void wait_for_calls(const std::atomic<int64_t>& calls, int64_t n) {
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (calls.load() < n && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

TEST(DataLoaderStop, EarlyBreakStopsWorkersPromptly) {
  const Counting ds;
  const int64_t batch = 4, workers = 3, prefetch = 2;
  DataLoader loader(ds, {.batch_size = batch, .num_workers = workers, .prefetch_factor = prefetch});
  const auto t0 = Clock::now();
  int consumed = 0;
  for (auto& b : loader) {
    (void)b;
    if (++consumed == 2) break;
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_LT(seconds, 5.0);  // far from the ~1.7 s a whole epoch would take on 3 workers
  // Bounded prefetch: at most (consumed + workers x prefetch) batches were started.
  const int64_t calls = ds.calls->load();
  EXPECT_LE(calls, (consumed + workers * prefetch) * batch);
  // The workers are joined: no more calls happen.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ds.calls->load(), calls);
}

TEST(DataLoaderStop, PrefetchIsBoundedWhileTheConsumerWaits) {
  const Counting ds;
  const int64_t batch = 2, workers = 2, prefetch = 3;
  DataLoader loader(ds, {.batch_size = batch, .num_workers = workers, .prefetch_factor = prefetch});
  auto it = loader.begin();  // consumes batch 0
  // Batches 1 .. workers x prefetch get loaded; nothing beyond.
  wait_for_calls(*ds.calls, (1 + workers * prefetch) * batch);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(ds.calls->load(), (1 + workers * prefetch) * batch);
  ++it;
  wait_for_calls(*ds.calls, (2 + workers * prefetch) * batch);
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_EQ(ds.calls->load(), (2 + workers * prefetch) * batch);
}

TEST(DataLoaderStop, DestroyingTheLoaderMidEpochJoinsWorkers) {
  const Counting ds;
  auto loader = std::make_unique<DataLoader<Counting>>(
      ds, DataLoaderOptions{.batch_size = 2, .num_workers = 4});
  auto it = loader->begin();
  ++it;
  const Tensor kept = *it;
  loader.reset();  // stops and joins the workers
  const int64_t calls = ds.calls->load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ds.calls->load(), calls);
  EXPECT_EQ(kept.to_vector<int64_t>(), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(equal(*it, kept));  // the current batch stays readable
  try {
    ++it;
    FAIL() << "expected ValueError";
  } catch (const ValueError& e) {
    EXPECT_NE(std::string(e.what()).find("destroyed"), std::string::npos) << e.what();
  }
}

TEST(DataLoaderStop, DestroyingTheIteratorMidEpochJoinsWorkers) {
  const Counting ds;
  DataLoader loader(ds, {.batch_size = 2, .num_workers = 4});
  {
    auto it = loader.begin();
    ++it;
  }
  const int64_t calls = ds.calls->load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ds.calls->load(), calls);
}

TEST(DataLoaderStop, StartingANewEpochStopsTheOldOne) {
  DataLoader loader(make_dataset(100, [](int64_t i, Generator&) { return i; }),
                    {.batch_size = 10, .num_workers = 2});
  auto first = loader.begin();
  auto second = loader.begin();
  EXPECT_EQ((*second).to_vector<int64_t>()[0], 0);
  EXPECT_THROW(++first, ValueError);
  ++second;
  EXPECT_EQ((*second).to_vector<int64_t>()[0], 10);
  EXPECT_EQ(loader.epoch(), 2);
}

TEST(DataLoaderStop, ManyShortEpochsWithBreaks) {
  DataLoader loader(ThreeRandomNumbers{64}, {.batch_size = 2, .num_workers = 4, .seed = 1});
  for (int e = 0; e < 30; ++e) {
    int k = 0;
    for (auto& b : loader) {
      EXPECT_EQ(b.size(0), 2);
      if (++k == e % 5) break;
    }
  }
}

// ---- iterable datasets ----

// Worker w of W yields w, w + W, w + 2W, ... below n (sharding), each with a
// number from the worker generator.
struct Numbers : IterableDataset<std::pair<int64_t, double>> {
  int64_t n = 23;
  int64_t throw_at = -1;
  ExampleStream<Example> stream(const WorkerInfo& info) const override {
    int64_t next = info.id;
    const int64_t step = info.num_workers;
    Generator* gen = info.generator;
    const int64_t limit = n, bad = throw_at;
    return [next, step, gen, limit, bad]() mutable -> std::optional<Example> {
      if (next >= limit) return std::nullopt;
      if (next == bad) throw std::runtime_error("stream broke");
      const int64_t v = next;
      next += step;
      return Example{v, double(gen->next_u64() % 1000)};
    };
  }
};

TEST(DataLoaderIterable, RoundRobinOverWorkersIsDeterministic) {
  for (int64_t workers : {0, 1, 3}) {
    Numbers ds;
    DataLoader loader(ds, {.batch_size = 2, .num_workers = workers, .seed = 2});
    std::vector<int64_t> got;
    std::vector<int64_t> sizes;
    for (auto& [ids, noise] : loader) {
      sizes.push_back(ids.size(0));
      EXPECT_EQ(noise.dtype(), kFloat64);
      for (int64_t v : ids.to_vector<int64_t>()) got.push_back(v);
    }
    // Every number exactly once.
    std::vector<int64_t> sorted = got;
    std::sort(sorted.begin(), sorted.end());
    for (int64_t i = 0; i < 23; ++i) EXPECT_EQ(sorted[size_t(i)], i);
    if (workers == 3) {
      // Worker w yields w, w+3, ...: 8, 8, 7 numbers -> batches of 2 taken
      // round-robin: w0 {0,3}, w1 {1,4}, w2 {2,5}, w0 {6,9}, ...
      EXPECT_EQ(std::vector<int64_t>(got.begin(), got.begin() + 6),
                (std::vector<int64_t>{0, 3, 1, 4, 2, 5}));
      EXPECT_EQ(sizes.back(), 1);
    }
    // The same again for the same seed and epoch.
    DataLoader again(ds, {.batch_size = 2, .num_workers = workers, .seed = 2});
    std::vector<int64_t> got2;
    for (auto& [ids, noise] : again) {
      for (int64_t v : ids.to_vector<int64_t>()) got2.push_back(v);
    }
    EXPECT_EQ(got2, got);
  }
}

TEST(DataLoaderIterable, DropLastDropsEachWorkersShortBatch) {
  Numbers ds;
  DataLoader loader(ds, {.batch_size = 3, .drop_last = true, .num_workers = 2});
  int64_t total = 0;
  for (auto& [ids, noise] : loader) {
    EXPECT_EQ(ids.size(0), 3);
    total += ids.size(0);
  }
  EXPECT_EQ(total, 21);  // workers yield 12 and 11 numbers -> 4 + 3 full batches
}

TEST(DataLoaderIterable, StreamExceptionSurfaces) {
  Numbers ds;
  ds.throw_at = 7;
  for (int64_t workers : {0, 2}) {
    DataLoader loader(ds, {.batch_size = 2, .num_workers = workers});
    try {
      for (auto& b : loader) (void)b;
      FAIL() << "expected a WorkerError";
    } catch (const WorkerError& e) {
      const std::string msg = e.what();
      EXPECT_NE(msg.find("stream broke"), std::string::npos) << msg;
      EXPECT_NE(msg.find("of its stream"), std::string::npos) << msg;
      EXPECT_EQ(e.worker_id(), workers == 0 ? 0 : 1);
    }
  }
}

TEST(DataLoaderIterable, EarlyBreakAndRejectsShuffle) {
  Numbers ds;
  ds.n = 100000;
  DataLoader loader(ds, {.batch_size = 4, .num_workers = 3});
  int k = 0;
  for (auto& b : loader) {
    (void)b;
    if (++k == 3) break;
  }
  EXPECT_THROW(DataLoader(ds, {.shuffle = true}), ValueError);
}

}  // namespace
}  // namespace stride::data
