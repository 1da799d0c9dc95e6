// DataLoader: batches from a dataset, optionally built by worker threads.
//
//   auto loader = stride::data::DataLoader(dataset, {.batch_size = 32, .shuffle = true,
//                                                    .num_workers = 2, .seed = 1234});
//   for (auto& [x, y] : loader) { ... }          // one epoch per begin()
//   while (auto batch = loader.next()) { ... }   // or pull batches one at a time
//
// Note [DataLoader workers]
// ~~~~~~~~~~~~~~~~~~~~~~~~~
// Workers are std::threads started when an epoch begins and joined when it
// ends. They share ONE const dataset (get() must be thread-safe) and take batch
// indices from a shared counter. At most prefetch_factor x num_workers batches
// are in flight or waiting; a reorder buffer keyed by batch index hands them to
// the consumer in sampler order, whatever order they finish in. Collation runs
// in the workers. With num_workers = 0 the consumer thread builds each batch
// when asked.
//
// Stopping: reaching the end of an epoch, an error, destroying the last
// iterator of an epoch (e.g. `break` out of a range-for), destroying the loader
// or starting a new epoch (begin()/next()) stops the epoch's workers and joins
// them. Workers check for a stop between samples, so a stop waits at most for
// the samples being loaded. An iterator of a stopped epoch throws on ++.
//
// Errors: an exception thrown by get(), the collate function or a stream is
// rethrown in the consumer, when the consumer reaches the failed batch, as a
// WorkerError naming the worker, the sample index and the original what().
//
// Note [Loader randomness]
// ~~~~~~~~~~~~~~~~~~~~~~~~
// Every random number a loader uses derives from its seed (options.seed, or
// one draw from default_generator() when the loader is made, so manual_seed()
// fixes it) through Generator::fork, on separate streams:
//   epoch order      sampler_generator(seed, epoch)
//   sample i         sample_generator(seed, epoch, i)      -> the gen of get()
//   worker w         Generator(worker_base_seed(seed, epoch)).fork(w)
// where worker_base_seed draws the epoch-th number of the loader's seed stream,
// i.e. a fresh base seed each epoch. So samples never share a stream, no two
// epochs replay one, and batches are identical for every num_workers and every
// thread timing. A sampler that repeats an index in an epoch (sampling with
// replacement) hands both occurrences the same stream.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "stride/data/collate.h"
#include "stride/data/dataset.h"
#include "stride/data/sampler.h"
#include "stride/error.h"
#include "stride/generator.h"
#include "stride/profiler.h"

namespace stride::data {

struct DataLoaderOptions {
  int64_t batch_size = 1;
  // Visit the samples in a new random order each epoch (a RandomSampler).
  bool shuffle = false;
  // Drop the last batch when it is shorter than batch_size.
  bool drop_last = false;
  // Worker threads; 0 builds batches in the consumer thread.
  int64_t num_workers = 0;
  // Batches in flight per worker (the bound on prefetching).
  int64_t prefetch_factor = 2;
  // The loader's seed; unset: one draw from default_generator() when the
  // loader is constructed.
  std::optional<uint64_t> seed = std::nullopt;
  // Accepted for PyTorch parity; a no-op until stride has a CUDA backend.
  bool pin_memory = false;
  // A custom order of sample indices (excludes shuffle). Map-style only.
  std::shared_ptr<const Sampler> sampler = nullptr;
};

// An exception raised by dataset or collate code inside a loader, rethrown in
// the consumer. what() names the worker, the sample and the original message.
class WorkerError : public Error {
 public:
  WorkerError(const std::string& message,
              int64_t worker_id,
              int64_t sample_index,
              int64_t batch_index,
              std::exception_ptr original);
  // 0..num_workers-1; 0 when num_workers = 0 (the consumer thread).
  int64_t worker_id() const { return worker_id_; }
  // The failing sample's index (map-style) or its position in the worker's
  // stream (iterable); -1 when the collate function failed.
  int64_t sample_index() const { return sample_index_; }
  // The batch's index in the epoch; -1 for iterable datasets.
  int64_t batch_index() const { return batch_index_; }
  // The exception the dataset threw.
  const std::exception_ptr& original() const { return original_; }

 private:
  int64_t worker_id_;
  int64_t sample_index_;
  int64_t batch_index_;
  std::exception_ptr original_;
};

// ---- the derivations of Note [Loader randomness] ----

// The generator of an epoch's sample order.
Generator sampler_generator(uint64_t seed, int64_t epoch);
// The generator handed to get(index, gen) in `epoch`.
Generator sample_generator(uint64_t seed, int64_t epoch, int64_t index);
// The epoch-th draw of the loader's seed stream: the base of the workers'
// generators in that epoch.
uint64_t worker_base_seed(uint64_t seed, int64_t epoch);
// Worker `worker_id`'s generator for a base seed.
Generator make_worker_generator(uint64_t base_seed, int64_t worker_id);

namespace detail {

// Generator(sample_root_seed(s, e)).fork(i) is sample_generator(s, e, i).
uint64_t sample_root_seed(uint64_t seed, int64_t epoch);

enum class FailedStep { Get, Collate, StartStream, NextExample, Other };
// Wraps the current exception of a failed step into a WorkerError.
std::exception_ptr make_worker_error(int64_t worker_id,
                                     bool in_consumer_thread,
                                     int64_t epoch,
                                     FailedStep step,
                                     int64_t sample_index,
                                     int64_t batch_index,
                                     std::exception_ptr original);
void check_options(const DataLoaderOptions& options, bool iterable, int64_t dataset_size);
void check_batch_indices(const std::vector<std::vector<int64_t>>& batches, int64_t dataset_size);
[[noreturn]] void throw_stopped_epoch(const char* reason);
[[noreturn]] void throw_no_collate();
[[noreturn]] void throw_null_dataset();
[[noreturn]] void throw_past_end();
uint64_t default_loader_seed();

// One epoch of batches, shared by its iterators (and, for next(), the loader).
template <class Batch>
class EpochRun {
 public:
  virtual ~EpochRun() = default;
  // Moves to the next batch (into `current`); false at the end of the epoch.
  virtual bool advance() = 0;
  // Stops and joins the workers; advance() then throws with `reason`.
  virtual void abort(const char* reason) noexcept = 0;

  std::optional<Batch> current;
  bool done = false;
};

// The threads of an epoch run, and the consumer thread's stand-in for worker
// 0 when there are none (its generator and WorkerInfo), which both kinds of
// run set up alike.
class RunThreads {
 public:
  RunThreads(int64_t epoch, uint64_t base_seed, int64_t num_workers) {
    if (num_workers == 0) {
      consumer_gen_.emplace(make_worker_generator(base_seed, 0));
      consumer_info_ = WorkerInfo{0, 1, epoch, base_seed, &*consumer_gen_, true};
    }
  }
  RunThreads(const RunThreads&) = delete;
  RunThreads& operator=(const RunThreads&) = delete;

  // Starts `n` threads running work(w); if one cannot start, stop() makes
  // those started return, they are joined, and the error is rethrown.
  template <class Work, class Stop>
  void start(int64_t n, Work work, Stop stop) {
    try {
      threads_.reserve(size_t(n));
      for (int64_t w = 0; w < n; ++w) threads_.emplace_back([work, w] { work(w); });
    } catch (...) {
      stop();
      throw;
    }
  }
  // Joins the threads, which the run has told to stop.
  void join() noexcept {
    for (std::thread& t : threads_) {
      if (t.joinable()) t.join();
    }
    threads_.clear();
  }

  WorkerInfo& consumer_info() { return consumer_info_; }

 private:
  std::optional<Generator> consumer_gen_;
  WorkerInfo consumer_info_;
  std::vector<std::thread> threads_;
};

// Note [DataLoader workers], for map-style datasets.
template <class D, class Batch>
class MapRun final : public EpochRun<Batch> {
 public:
  using Example = example_t<D>;
  using CollateFn = std::function<Batch(std::vector<Example>&&)>;

  MapRun(std::shared_ptr<const D> dataset,
         CollateFn collate_fn,
         std::vector<std::vector<int64_t>> batches,
         int64_t epoch,
         uint64_t seed,
         int64_t num_workers,
         int64_t prefetch_factor)
      : dataset_(std::move(dataset)),
        collate_(std::move(collate_fn)),
        batches_(std::move(batches)),
        epoch_(epoch),
        sample_root_seed_(sample_root_seed(seed, epoch)),
        base_seed_(worker_base_seed(seed, epoch)),
        num_workers_(num_workers),
        capacity_(num_workers * prefetch_factor),
        threads_(epoch, base_seed_, num_workers) {
    if (num_workers_ == 0) return;
    ring_.resize(size_t(capacity_));
    threads_.start(
        num_workers_, [this](int64_t w) { work(w); }, [this] { stop_and_join(); });
  }
  ~MapRun() override { stop_and_join(); }

  bool advance() override {
    this->current.reset();
    if (stopped_reason_) throw_stopped_epoch(stopped_reason_);
    if (this->done) throw_past_end();
    const int64_t n = int64_t(batches_.size());
    if (next_consume_ == n) {
      this->done = true;
      stop_and_join();
      return false;
    }
    const int64_t k = next_consume_;
    Slot slot;
    if (num_workers_ == 0) {
      WorkerInfoScope scope(&threads_.consumer_info());
      const Generator root(sample_root_seed_);
      slot = produce(k, 0, root);
      ++next_consume_;
    } else {
      std::unique_lock lock(mu_);
      Slot& ready = ring_[size_t(k % capacity_)];
      {
        // Time the training loop spends waiting for data shows in profiles.
        profiler::RecordFunction wait("DataLoader.wait");
        ready_cv_.wait(lock, [&] { return ready.ready; });
      }
      slot = std::move(ready);
      ready = Slot{};
      ++next_consume_;
      lock.unlock();
      work_cv_.notify_all();
    }
    if (slot.error) {
      abort("an earlier batch of this epoch failed");
      std::rethrow_exception(slot.error);
    }
    this->current.emplace(std::move(*slot.batch));
    return true;
  }

  void abort(const char* reason) noexcept override {
    if (!this->done && !stopped_reason_) stopped_reason_ = reason;
    stop_and_join();
  }

 private:
  struct Slot {
    std::optional<Batch> batch;
    std::exception_ptr error;
    bool ready = false;
  };

  void work(int64_t w) {
    Generator gen = make_worker_generator(base_seed_, w);
    const WorkerInfo info{w, num_workers_, epoch_, base_seed_, &gen, false};
    WorkerInfoScope scope(&info);
    const Generator root(sample_root_seed_);
    const int64_t n = int64_t(batches_.size());
    std::unique_lock lock(mu_);
    for (;;) {
      work_cv_.wait(lock, [&] {
        return stopping_ || next_dispatch_ >= n || next_dispatch_ < next_consume_ + capacity_;
      });
      if (stopping_ || next_dispatch_ >= n) return;
      const int64_t k = next_dispatch_++;
      lock.unlock();
      Slot slot;
      try {
        slot = produce(k, w, root);
      } catch (...) {  // e.g. bad_alloc outside the dataset's code
        slot.error =
            make_worker_error(w, false, epoch_, FailedStep::Other, -1, k, std::current_exception());
      }
      lock.lock();
      if (stopping_) return;  // the consumer has gone: nobody reads this batch
      Slot& dst = ring_[size_t(k % capacity_)];
      dst = std::move(slot);
      dst.ready = true;
      ready_cv_.notify_one();
    }
  }

  // Loads and collates batch k. Failures of the dataset or collate code land
  // in slot.error.
  Slot produce(int64_t k, int64_t w, const Generator& root) {
    Slot slot;
    const std::vector<int64_t>& indices = batches_[size_t(k)];
    std::vector<Example> examples;
    examples.reserve(indices.size());
    for (int64_t i : indices) {
      if (stop_requested_.load(std::memory_order_relaxed)) return slot;
      try {
        if constexpr (MapDatasetWithGenerator<D>) {
          Generator gen = root.fork(uint64_t(i));
          examples.push_back(dataset_->get(i, gen));
        } else {
          examples.push_back(dataset_->get(i));
        }
      } catch (...) {
        slot.error = make_worker_error(w, num_workers_ == 0, epoch_, FailedStep::Get, i, k,
                                       std::current_exception());
        return slot;
      }
    }
    try {
      slot.batch.emplace(collate_(std::move(examples)));
    } catch (...) {
      slot.error = make_worker_error(w, num_workers_ == 0, epoch_, FailedStep::Collate, -1, k,
                                     std::current_exception());
    }
    return slot;
  }

  void stop_and_join() noexcept {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      stop_requested_.store(true, std::memory_order_relaxed);
    }
    work_cv_.notify_all();
    threads_.join();
  }

  const std::shared_ptr<const D> dataset_;
  const CollateFn collate_;
  const std::vector<std::vector<int64_t>> batches_;
  const int64_t epoch_;
  const uint64_t sample_root_seed_;
  const uint64_t base_seed_;
  const int64_t num_workers_;
  const int64_t capacity_;

  // Consumer-thread state: the stop reason.
  const char* stopped_reason_ = nullptr;

  // Shared with the workers, guarded by mu_.
  std::mutex mu_;
  std::condition_variable work_cv_;   // a batch may be dispatched, or stop
  std::condition_variable ready_cv_;  // the next batch may be ready
  std::vector<Slot> ring_;            // batch k lives in ring_[k % capacity_]
  int64_t next_dispatch_ = 0;
  int64_t next_consume_ = 0;
  bool stopping_ = false;
  std::atomic<bool> stop_requested_{false};  // stopping_, readable without the lock
  // Last: its threads start once everything they use is constructed.
  RunThreads threads_;
};

// Note [DataLoader workers], for iterable datasets: worker w fills its own
// queue (at most prefetch_factor batches) from its stream; the consumer takes
// batches round-robin over the workers (worker 0, 1, ..., W-1, 0, ...),
// skipping a worker once its stream has ended. The order therefore depends
// only on what each stream yields, never on timing.
template <class D, class Batch>
class StreamRun final : public EpochRun<Batch> {
 public:
  using Example = example_t<D>;
  using CollateFn = std::function<Batch(std::vector<Example>&&)>;

  StreamRun(std::shared_ptr<const D> dataset,
            CollateFn collate_fn,
            int64_t batch_size,
            bool drop_last,
            int64_t epoch,
            uint64_t seed,
            int64_t num_workers,
            int64_t prefetch_factor)
      : dataset_(std::move(dataset)),
        collate_(std::move(collate_fn)),
        batch_size_(batch_size),
        drop_last_(drop_last),
        epoch_(epoch),
        base_seed_(worker_base_seed(seed, epoch)),
        num_workers_(num_workers),
        prefetch_factor_(prefetch_factor),
        exhausted_(size_t(std::max<int64_t>(num_workers, 1)), false),
        threads_(epoch, base_seed_, num_workers) {
    if (num_workers_ == 0) return;
    queues_.resize(size_t(num_workers_));
    threads_.start(
        num_workers_, [this](int64_t w) { work(w); }, [this] { stop_and_join(); });
  }
  ~StreamRun() override { stop_and_join(); }

  bool advance() override {
    this->current.reset();
    if (stopped_reason_) throw_stopped_epoch(stopped_reason_);
    if (this->done) throw_past_end();
    for (;;) {
      if (live_ == 0) {
        this->done = true;
        stop_and_join();
        return false;
      }
      Item item;
      if (num_workers_ == 0) {
        WorkerInfoScope scope(&threads_.consumer_info());
        item = next_batch(consumer_stream_, 0, threads_.consumer_info());
      } else {
        std::unique_lock lock(mu_);
        std::deque<Item>& q = queues_[size_t(cursor_)];
        {
          profiler::RecordFunction wait("DataLoader.wait");
          ready_cv_.wait(lock, [&] { return !q.empty(); });
        }
        item = std::move(q.front());
        q.pop_front();
        lock.unlock();
        space_cv_.notify_all();
      }
      const int64_t w = cursor_;
      if (item.end) {
        exhausted_[size_t(w)] = true;
        --live_;
      }
      advance_cursor();
      if (item.end) continue;
      if (item.error) {
        abort("an earlier batch of this epoch failed");
        std::rethrow_exception(item.error);
      }
      this->current.emplace(std::move(*item.batch));
      return true;
    }
  }

  void abort(const char* reason) noexcept override {
    if (!this->done && !stopped_reason_) stopped_reason_ = reason;
    stop_and_join();
  }

 private:
  struct Item {
    std::optional<Batch> batch;
    std::exception_ptr error;
    bool end = false;  // the worker's stream has ended: no more items from it
  };

  // One worker's stream and how far it has got.
  struct StreamState {
    ExampleStream<Example> next;
    int64_t position = 0;  // examples taken so far
    bool started = false;
    bool ended = false;
  };

  // The next batch of a stream; `end` once it is exhausted (a short final
  // batch comes first, unless drop_last). Failures of the dataset or collate
  // code land in item.error.
  Item next_batch(StreamState& s, int64_t w, const WorkerInfo& info) {
    Item item;
    if (!s.started) {
      s.started = true;
      try {
        s.next = dataset_->stream(info);
      } catch (...) {
        item.error = make_worker_error(w, info.in_consumer_thread, epoch_, FailedStep::StartStream,
                                       -1, -1, std::current_exception());
        return item;
      }
    }
    std::vector<Example> examples;
    examples.reserve(size_t(batch_size_));
    while (!s.ended && int64_t(examples.size()) < batch_size_) {
      if (stop_requested_.load(std::memory_order_relaxed)) {
        item.end = true;
        return item;
      }
      try {
        std::optional<Example> e = s.next();
        if (!e) {
          s.ended = true;
          break;
        }
        examples.push_back(std::move(*e));
      } catch (...) {
        item.error = make_worker_error(w, info.in_consumer_thread, epoch_, FailedStep::NextExample,
                                       s.position, -1, std::current_exception());
        return item;
      }
      ++s.position;
    }
    if (examples.empty() || (s.ended && drop_last_)) {
      item.end = true;
      return item;
    }
    try {
      item.batch.emplace(collate_(std::move(examples)));
    } catch (...) {
      item.error = make_worker_error(w, info.in_consumer_thread, epoch_, FailedStep::Collate, -1,
                                     -1, std::current_exception());
    }
    return item;
  }

  void work(int64_t w) {
    Generator gen = make_worker_generator(base_seed_, w);
    const WorkerInfo info{w, num_workers_, epoch_, base_seed_, &gen, false};
    WorkerInfoScope scope(&info);
    StreamState state;
    for (;;) {
      Item item;
      try {
        item = next_batch(state, w, info);
      } catch (...) {  // e.g. bad_alloc outside the dataset's code
        item.error = make_worker_error(w, false, epoch_, FailedStep::Other, -1, -1,
                                       std::current_exception());
      }
      // After an error the consumer stops the epoch when it reaches it.
      const bool last = item.end || item.error;
      if (!push(w, std::move(item)) || last) return;
    }
  }

  // Appends to worker w's queue, waiting for room; false when stopping.
  bool push(int64_t w, Item item) {
    std::unique_lock lock(mu_);
    std::deque<Item>& q = queues_[size_t(w)];
    space_cv_.wait(lock, [&] { return stopping_ || int64_t(q.size()) < prefetch_factor_; });
    if (stopping_) return false;
    q.push_back(std::move(item));
    ready_cv_.notify_one();
    return true;
  }

  void advance_cursor() {
    const int64_t streams = int64_t(exhausted_.size());
    if (live_ == 0) return;
    do {
      cursor_ = (cursor_ + 1) % streams;
    } while (exhausted_[size_t(cursor_)]);
  }

  void stop_and_join() noexcept {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
      stop_requested_.store(true, std::memory_order_relaxed);
    }
    space_cv_.notify_all();
    threads_.join();
  }

  const std::shared_ptr<const D> dataset_;
  const CollateFn collate_;
  const int64_t batch_size_;
  const bool drop_last_;
  const int64_t epoch_;
  const uint64_t base_seed_;
  const int64_t num_workers_;
  const int64_t prefetch_factor_;

  // Consumer-thread state.
  std::vector<bool> exhausted_;
  int64_t live_ = int64_t(exhausted_.size());
  int64_t cursor_ = 0;
  const char* stopped_reason_ = nullptr;
  StreamState consumer_stream_;

  // Shared with the workers, guarded by mu_.
  std::mutex mu_;
  std::condition_variable space_cv_;  // a queue has room, or stop
  std::condition_variable ready_cv_;  // a queue has an item
  std::vector<std::deque<Item>> queues_;
  bool stopping_ = false;
  std::atomic<bool> stop_requested_{false};
  // Last: its threads start once everything they use is constructed.
  RunThreads threads_;
};

}  // namespace detail

template <class D, class BatchT = collate_t<example_t<D>>>
class DataLoader {
 public:
  using Dataset = D;
  using Example = example_t<D>;
  using Batch = BatchT;
  using CollateFn = std::function<Batch(std::vector<Example>&&)>;
  static constexpr bool kIterable = !MapStyleDataset<D>;
  static_assert(MapStyleDataset<D> || IterableStyleDataset<D>,
                "a DataLoader dataset needs `int64_t size() const` and `get(int64_t, Generator&) "
                "const` (or `get(int64_t) const`), or `stream(const WorkerInfo&) const`");

  // One epoch: an input iterator over the batches. Copies share the epoch;
  // when the last copy is destroyed the epoch's workers stop.
  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;
    using reference = Batch&;
    using pointer = Batch*;

    Iterator() = default;  // the end
    Batch& operator*() const { return *run_->current; }
    Batch* operator->() const { return &*run_->current; }
    Iterator& operator++() {
      run_->advance();
      return *this;
    }
    void operator++(int) { ++*this; }
    friend bool operator==(const Iterator& a, const Iterator& b) {
      return a.at_end() == b.at_end() && (a.at_end() || a.run_ == b.run_);
    }

   private:
    friend class DataLoader;
    explicit Iterator(std::shared_ptr<detail::EpochRun<Batch>> run) : run_(std::move(run)) {
      run_->advance();
    }
    bool at_end() const { return !run_ || run_->done; }
    std::shared_ptr<detail::EpochRun<Batch>> run_;
  };

  // `collate` defaults to stride::data::collate (Collate<Example>).
  DataLoader(std::shared_ptr<const D> dataset,
             DataLoaderOptions options = {},
             CollateFn collate_fn = {})
      : dataset_(std::move(dataset)),
        options_(std::move(options)),
        collate_(std::move(collate_fn)) {
    if (!dataset_) detail::throw_null_dataset();
    int64_t n = -1;
    if constexpr (!kIterable) n = int64_t(dataset_->size());
    detail::check_options(options_, kIterable, n);
    seed_ = options_.seed ? *options_.seed : detail::default_loader_seed();
    if (!collate_) {
      if constexpr (collatable<Example>) {
        if constexpr (std::is_convertible_v<collate_t<Example>, Batch>) {
          collate_ = [](std::vector<Example>&& examples) -> Batch {
            return collate(std::move(examples));
          };
        }
      }
      if (!collate_) detail::throw_no_collate();
    }
    if constexpr (!kIterable) {
      std::shared_ptr<const Sampler> sampler = options_.sampler;
      if (!sampler) {
        if (options_.shuffle)
          sampler = std::make_shared<RandomSampler>(n);
        else
          sampler = std::make_shared<SequentialSampler>(n);
      }
      batch_sampler_.emplace(std::move(sampler), options_.batch_size, options_.drop_last);
    }
  }
  DataLoader(std::shared_ptr<D> dataset, DataLoaderOptions options = {}, CollateFn collate_fn = {})
      : DataLoader(std::shared_ptr<const D>(std::move(dataset)),
                   std::move(options),
                   std::move(collate_fn)) {}
  DataLoader(D dataset, DataLoaderOptions options = {}, CollateFn collate_fn = {})
      : DataLoader(std::make_shared<const D>(std::move(dataset)),
                   std::move(options),
                   std::move(collate_fn)) {}

  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;
  DataLoader(DataLoader&&) noexcept = default;
  DataLoader& operator=(DataLoader&&) noexcept = default;
  ~DataLoader() { stop_active("its DataLoader was destroyed"); }

  // Starts a new epoch (stopping one still running) and returns its first
  // batch's iterator.
  Iterator begin() {
    stop_active("its DataLoader started a new epoch");
    std::shared_ptr<detail::EpochRun<Batch>> run = start_epoch();
    active_ = run;
    return Iterator(std::move(run));
  }
  Iterator end() const { return Iterator(); }

  // The next batch of the current epoch, or nullopt once at the end of each
  // epoch; the call after that starts the next epoch. Shares the active epoch
  // with begin(): whichever starts an epoch stops the other's.
  std::optional<Batch> next() {
    if (!own_run_) {
      stop_active("its DataLoader started a new epoch");
      own_run_ = start_epoch();
      active_ = own_run_;
    }
    try {
      if (own_run_->advance()) return std::move(*own_run_->current);
    } catch (...) {
      own_run_.reset();  // the next call starts a new epoch
      throw;
    }
    own_run_.reset();
    return std::nullopt;
  }

  // Batches per epoch (map-style datasets).
  int64_t size() const requires(!kIterable) { return batch_sampler_->size(); }
  // The epoch the next begin()/next() starts (0 for a new loader).
  int64_t epoch() const { return epoch_; }
  // Sets the epoch the next begin()/next() starts, e.g. to resume a run.
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  uint64_t seed() const { return seed_; }
  const DataLoaderOptions& options() const { return options_; }
  const D& dataset() const { return *dataset_; }

 private:
  std::shared_ptr<detail::EpochRun<Batch>> start_epoch() {
    const int64_t epoch = epoch_++;
    if constexpr (!kIterable) {
      Generator gen = sampler_generator(seed_, epoch);
      std::vector<std::vector<int64_t>> batches = batch_sampler_->batches(gen);
      detail::check_batch_indices(batches, int64_t(dataset_->size()));
      return std::make_shared<detail::MapRun<D, Batch>>(dataset_, collate_, std::move(batches),
                                                        epoch, seed_, options_.num_workers,
                                                        options_.prefetch_factor);
    } else {
      return std::make_shared<detail::StreamRun<D, Batch>>(
          dataset_, collate_, options_.batch_size, options_.drop_last, epoch, seed_,
          options_.num_workers, options_.prefetch_factor);
    }
  }

  void stop_active(const char* reason) noexcept {
    if (auto run = active_.lock()) run->abort(reason);
    active_.reset();
    own_run_.reset();
  }

  std::shared_ptr<const D> dataset_;
  DataLoaderOptions options_;
  CollateFn collate_;
  uint64_t seed_ = 0;
  int64_t epoch_ = 0;
  std::optional<BatchSampler> batch_sampler_;
  std::weak_ptr<detail::EpochRun<Batch>> active_;
  std::shared_ptr<detail::EpochRun<Batch>> own_run_;  // the epoch next() is reading
};

template <class D>
DataLoader(std::shared_ptr<D>, DataLoaderOptions = {}) -> DataLoader<std::remove_const_t<D>>;
template <class D>
DataLoader(D, DataLoaderOptions = {}) -> DataLoader<D>;

// A loader with a custom collate function; the batch type is what it returns.
template <class D, class F>
auto make_data_loader(D dataset, DataLoaderOptions options, F collate_fn) {
  using Batch = std::invoke_result_t<F&, std::vector<example_t<D>>&&>;
  return DataLoader<D, Batch>(std::move(dataset), std::move(options),
                              std::function<Batch(std::vector<example_t<D>> &&)>(collate_fn));
}

}  // namespace stride::data
