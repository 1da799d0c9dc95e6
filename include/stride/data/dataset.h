// Datasets: what a DataLoader reads from.
//
// A map-style dataset is any class with
//   int64_t size() const;
//   Example get(int64_t index, Generator& gen) const;   // or get(int64_t index) const
// and an iterable dataset is any class with
//   ExampleStream<Example> stream(const WorkerInfo& info) const;
// The abstract bases Dataset<Example> and IterableDataset<Example> spell these
// out for polymorphic use; the DataLoader accepts any class with the methods.
//
// Note [Randomness in datasets]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// In PyTorch, a dataset that draws from NumPy's global RNG inside __getitem__
// gets that RNG state copied into every worker process: every worker then
// draws the same numbers, in every epoch, and nothing crashes. stride rules the
// bug out by construction:
//   * get() is const and called concurrently by the worker threads on ONE
//     shared dataset object; nothing is copied into workers.
//   * A Generator cannot be copied, so a dataset cannot clone its stream; the
//     worst a dataset holding a `mutable Generator` can do is share one
//     (mutex-guarded) stream, which is timing-dependent but never duplicated.
//   * The intended source of randomness is the `gen` argument of get(): the
//     loader hands each sample a fresh generator derived only from
//     (loader seed, epoch, sample index) — see sample_generator() in
//     dataloader.h. The numbers therefore differ across samples and epochs,
//     repeat exactly for the same seed, and do not depend on num_workers or
//     on thread timing.
//   * Code that wants one stream per worker calls worker_generator(): worker
//     w's generator is derived from (base seed, w), where the base seed is
//     drawn afresh each epoch from the loader's seed stream.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "stride/generator.h"
#include "stride/tensor.h"

namespace stride::data {

// Which worker is running a dataset's code, visible from inside get() and
// stream(). With num_workers = 0 the consumer thread runs the dataset as
// worker 0 of 1 (so sharding code such as `i % num_workers == id` stays valid)
// and `in_consumer_thread` is true.
struct WorkerInfo {
  int64_t id = 0;
  int64_t num_workers = 1;
  int64_t epoch = 0;
  uint64_t base_seed = 0;          // drawn afresh each epoch from the loader's seed stream
  Generator* generator = nullptr;  // this worker's own stream, from (base_seed, id)
  bool in_consumer_thread = false;
};

// The WorkerInfo of the calling thread while it runs dataset code for a
// DataLoader; nullptr anywhere else (like torch.utils.data.get_worker_info).
const WorkerInfo* get_worker_info();
// The calling worker's generator (see WorkerInfo). Throws ValueError when not
// called from dataset code run by a DataLoader.
Generator& worker_generator();

namespace detail {
// Installs `info` as the calling thread's WorkerInfo for its lifetime.
class WorkerInfoScope {
 public:
  explicit WorkerInfoScope(const WorkerInfo* info);
  ~WorkerInfoScope();
  WorkerInfoScope(const WorkerInfoScope&) = delete;
  WorkerInfoScope& operator=(const WorkerInfoScope&) = delete;

 private:
  const WorkerInfo* previous_;
};
}  // namespace detail

// One epoch of an iterable dataset in one worker: returns the next example,
// or nullopt when the stream is exhausted.
template <class Example>
using ExampleStream = std::function<std::optional<Example>()>;

// Abstract map-style dataset. get() must be safe to call concurrently from
// several threads (it is const; keep mutable state out of it).
template <class ExampleT>
class Dataset {
 public:
  using Example = ExampleT;
  virtual ~Dataset() = default;
  virtual int64_t size() const = 0;
  // Sample `index` in [0, size()); `gen` is this sample's own generator
  // (Note [Randomness in datasets]).
  virtual Example get(int64_t index, Generator& gen) const = 0;
};

// Abstract iterable dataset: a stream of examples per worker and epoch.
// stream() is called once per epoch in each worker (in the consumer when
// num_workers = 0). With several workers every worker gets its own stream, so
// a dataset must shard by info.id / info.num_workers or each worker yields the
// same examples (as in PyTorch). Randomness comes from info.generator, so the
// batches depend on num_workers; map-style datasets do not have this caveat.
template <class ExampleT>
class IterableDataset {
 public:
  using Example = ExampleT;
  virtual ~IterableDataset() = default;
  virtual ExampleStream<Example> stream(const WorkerInfo& info) const = 0;
};

// ---- what the DataLoader accepts ----

template <class D>
concept MapDatasetWithGenerator = requires(const D& d, int64_t i, Generator& g) {
  { d.size() } -> std::convertible_to<int64_t>;
  d.get(i, g);
};
template <class D>
concept MapDatasetWithoutGenerator = requires(const D& d, int64_t i) {
  { d.size() } -> std::convertible_to<int64_t>;
  d.get(i);
};
template <class D>
concept MapStyleDataset = MapDatasetWithGenerator<D> || MapDatasetWithoutGenerator<D>;
template <class D>
concept IterableStyleDataset = requires(const D& d, const WorkerInfo& info) {
  {d.stream(info)()};
};

namespace detail {
template <class D>
struct ExampleOf;
template <MapDatasetWithGenerator D>
struct ExampleOf<D> {
  using type = std::remove_cvref_t<decltype(std::declval<const D&>().get(
      int64_t{}, std::declval<Generator&>()))>;
};
template <class D>
requires(!MapDatasetWithGenerator<D> && MapDatasetWithoutGenerator<D>) struct ExampleOf<D> {
  using type = std::remove_cvref_t<decltype(std::declval<const D&>().get(int64_t{}))>;
};
template <class D>
requires(!MapStyleDataset<D> && IterableStyleDataset<D>) struct ExampleOf<D> {
  using type = typename std::remove_cvref_t<decltype(std::declval<const D&>().stream(
      std::declval<const WorkerInfo&>())())>::value_type;
};
}  // namespace detail

// The example type a dataset yields.
template <class D>
using example_t = typename detail::ExampleOf<D>::type;

// ---- ready-made datasets ----

// A map-style dataset from a size and a function fn(index, gen) -> Example.
// fn is called concurrently from worker threads.
template <class F>
class FunctionDataset {
 public:
  FunctionDataset(int64_t size, F fn) : size_(size), fn_(std::move(fn)) {}
  int64_t size() const { return size_; }
  auto get(int64_t index, Generator& gen) const { return fn_(index, gen); }

 private:
  int64_t size_;
  F fn_;
};
template <class F>
FunctionDataset<F> make_dataset(int64_t size, F fn) {
  return FunctionDataset<F>(size, std::move(fn));
}

// Rows of several tensors sharing their first dimension (torch TensorDataset):
// sample i is {t[i] for t in tensors}, each a view (select(0, i)).
class TensorDataset {
 public:
  explicit TensorDataset(std::vector<Tensor> tensors);
  int64_t size() const { return size_; }
  std::vector<Tensor> get(int64_t index) const;
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
  int64_t size_ = 0;
};

}  // namespace stride::data
