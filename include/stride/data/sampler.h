// Samplers: the order in which a DataLoader visits a map-style dataset.
//
// A Sampler is stateless: indices(gen) returns one epoch's indices and takes
// every random choice from `gen`. The DataLoader passes a generator derived
// only from (loader seed, epoch) (see sampler_generator() in dataloader.h), so
// an epoch's order is reproducible and independent of the worker count.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "stride/generator.h"

namespace stride::data {

class Sampler {
 public:
  virtual ~Sampler() = default;
  // Number of indices one epoch yields.
  virtual int64_t size() const = 0;
  // One epoch's indices. Deterministic given the state of `gen`.
  virtual std::vector<int64_t> indices(Generator& gen) const = 0;
};

// 0, 1, ..., n-1 (ignores gen).
class SequentialSampler final : public Sampler {
 public:
  explicit SequentialSampler(int64_t n);
  int64_t size() const override { return n_; }
  std::vector<int64_t> indices(Generator& gen) const override;

 private:
  int64_t n_;
};

// A uniform random permutation of 0..n-1 (Fisher-Yates), or, with
// `replacement`, num_samples independent uniform draws from [0, n).
// num_samples defaults to n; without replacement it must not exceed n (the
// first num_samples entries of a permutation).
class RandomSampler final : public Sampler {
 public:
  explicit RandomSampler(int64_t n,
                         bool replacement = false,
                         std::optional<int64_t> num_samples = std::nullopt);
  int64_t size() const override { return num_samples_; }
  std::vector<int64_t> indices(Generator& gen) const override;

 private:
  int64_t n_;
  bool replacement_;
  int64_t num_samples_;
};

// The given indices in a random order (torch SubsetRandomSampler).
class SubsetRandomSampler final : public Sampler {
 public:
  explicit SubsetRandomSampler(std::vector<int64_t> indices);
  int64_t size() const override { return int64_t(indices_.size()); }
  std::vector<int64_t> indices(Generator& gen) const override;

 private:
  std::vector<int64_t> indices_;
};

// The given indices in the given order.
class SubsetSampler final : public Sampler {
 public:
  explicit SubsetSampler(std::vector<int64_t> indices);
  int64_t size() const override { return int64_t(indices_.size()); }
  std::vector<int64_t> indices(Generator& gen) const override;

 private:
  std::vector<int64_t> indices_;
};

// One rank's share of a dataset of n samples among `num_replicas` ranks
// (torch DistributedSampler): every rank draws the same permutation (from
// `seed` and the epoch set by set_epoch(), not from the loader's generator,
// so ranks agree whatever their loaders' seeds) and takes every
// num_replicas-th index from position `rank`. A tail that does not divide
// evenly is padded by repeating the first indices, or dropped with
// drop_last, so every rank yields size() indices. Without shuffle the order
// is 0..n-1.
class DistributedSampler final : public Sampler {
 public:
  DistributedSampler(int64_t n,
                     int num_replicas,
                     int rank,
                     bool shuffle = true,
                     uint64_t seed = 0,
                     bool drop_last = false);
  int64_t size() const override { return per_rank_; }
  std::vector<int64_t> indices(Generator& gen) const override;
  // A new permutation each epoch (call before each epoch's iteration).
  void set_epoch(int64_t epoch) { epoch_ = epoch; }
  int64_t epoch() const { return epoch_; }

 private:
  int64_t n_;
  int num_replicas_;
  int rank_;
  bool shuffle_;
  uint64_t seed_;
  int64_t per_rank_;
  int64_t epoch_ = 0;
};

// Groups a sampler's indices into batches of batch_size, in order; the last
// batch is shorter, or dropped when drop_last.
class BatchSampler {
 public:
  BatchSampler(std::shared_ptr<const Sampler> sampler, int64_t batch_size, bool drop_last);
  // Number of batches per epoch.
  int64_t size() const;
  std::vector<std::vector<int64_t>> batches(Generator& gen) const;
  const Sampler& sampler() const { return *sampler_; }

 private:
  std::shared_ptr<const Sampler> sampler_;
  int64_t batch_size_;
  bool drop_last_;
};

// A uniform integer in [0, n) from one 64-bit draw per try (Lemire's
// multiply-shift with rejection, so unbiased). n must be positive.
uint64_t uniform_index(Generator& gen, uint64_t n);

}  // namespace stride::data
