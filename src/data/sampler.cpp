// Samplers (sampler.h). Every random choice comes from the generator passed
// to indices(), one 64-bit draw at a time, so an epoch's order depends only on
// that generator's state; DistributedSampler's, which every rank must share,
// from its seed and epoch.
#include "stride/data/sampler.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core/check.h"

namespace stride::data {

uint64_t uniform_index(Generator& gen, uint64_t n) {
  STRIDE_CHECK(n > 0, ValueError, "[uniform_index] the range must be non-empty; got n = 0.");
  // Lemire, "Fast random integer generation in an interval" (2019): the high
  // word of x * n is uniform once the low word clears the rejection threshold.
  __extension__ typedef unsigned __int128 uint128;
  const uint64_t threshold = (0 - n) % n;  // 2^64 mod n
  for (;;) {
    const uint128 m = uint128(gen.next_u64()) * n;
    if (uint64_t(m) >= threshold) return uint64_t(m >> 64);
  }
}

SequentialSampler::SequentialSampler(int64_t n) : n_(n) {
  STRIDE_CHECK(n >= 0, ValueError, "[SequentialSampler] size must be non-negative; got ", n, ".");
}

std::vector<int64_t> SequentialSampler::indices(Generator& /*gen*/) const {
  std::vector<int64_t> out(static_cast<size_t>(n_));
  std::iota(out.begin(), out.end(), int64_t(0));
  return out;
}

RandomSampler::RandomSampler(int64_t n, bool replacement, std::optional<int64_t> num_samples)
    : n_(n), replacement_(replacement), num_samples_(num_samples.value_or(n)) {
  STRIDE_CHECK(n >= 0, ValueError, "[RandomSampler] size must be non-negative; got ", n, ".");
  STRIDE_CHECK(num_samples_ >= 0, ValueError,
               "[RandomSampler] num_samples must be non-negative; got ", num_samples_, ".");
  STRIDE_CHECK(replacement_ || num_samples_ <= n_, ValueError, "[RandomSampler] num_samples (",
               num_samples_, ") exceeds the dataset size (", n_,
               ") without replacement. Hint: pass replacement = true.");
  STRIDE_CHECK(n_ > 0 || num_samples_ == 0, ValueError, "[RandomSampler] cannot draw ",
               num_samples_, " samples from an empty dataset.");
}

std::vector<int64_t> RandomSampler::indices(Generator& gen) const {
  if (replacement_) {
    std::vector<int64_t> out(static_cast<size_t>(num_samples_));
    for (int64_t& i : out) i = int64_t(uniform_index(gen, uint64_t(n_)));
    return out;
  }
  // Fisher-Yates, from the front: after step i, out[0..i] is a uniform draw
  // of i+1 distinct indices, so stopping at num_samples is still uniform.
  std::vector<int64_t> out(static_cast<size_t>(n_));
  std::iota(out.begin(), out.end(), int64_t(0));
  for (int64_t i = 0; i < num_samples_ && i + 1 < n_; ++i) {
    const int64_t j = i + int64_t(uniform_index(gen, uint64_t(n_ - i)));
    std::swap(out[size_t(i)], out[size_t(j)]);
  }
  out.resize(size_t(num_samples_));
  return out;
}

SubsetRandomSampler::SubsetRandomSampler(std::vector<int64_t> indices)
    : indices_(std::move(indices)) {}

std::vector<int64_t> SubsetRandomSampler::indices(Generator& gen) const {
  std::vector<int64_t> out = indices_;
  const int64_t n = int64_t(out.size());
  for (int64_t i = 0; i + 1 < n; ++i) {
    const int64_t j = i + int64_t(uniform_index(gen, uint64_t(n - i)));
    std::swap(out[size_t(i)], out[size_t(j)]);
  }
  return out;
}

SubsetSampler::SubsetSampler(std::vector<int64_t> indices) : indices_(std::move(indices)) {}

std::vector<int64_t> SubsetSampler::indices(Generator& /*gen*/) const {
  return indices_;
}

BatchSampler::BatchSampler(std::shared_ptr<const Sampler> sampler,
                           int64_t batch_size,
                           bool drop_last)
    : sampler_(std::move(sampler)), batch_size_(batch_size), drop_last_(drop_last) {
  STRIDE_CHECK(sampler_ != nullptr, ValueError, "[BatchSampler] the sampler is null.");
  STRIDE_CHECK(batch_size_ >= 1, ValueError, "[BatchSampler] batch_size must be at least 1; got ",
               batch_size_, ".");
}

int64_t BatchSampler::size() const {
  const int64_t n = sampler_->size();
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

std::vector<std::vector<int64_t>> BatchSampler::batches(Generator& gen) const {
  const std::vector<int64_t> all = sampler_->indices(gen);
  const int64_t n = int64_t(all.size());
  std::vector<std::vector<int64_t>> out;
  out.reserve(size_t(n / batch_size_ + 1));
  for (int64_t b = 0; b < n; b += batch_size_) {
    const int64_t e = std::min(n, b + batch_size_);
    if (e - b < batch_size_ && drop_last_) break;
    out.emplace_back(all.begin() + b, all.begin() + e);
  }
  return out;
}

DistributedSampler::DistributedSampler(
    int64_t n, int num_replicas, int rank, bool shuffle, uint64_t seed, bool drop_last)
    : n_(n), num_replicas_(num_replicas), rank_(rank), shuffle_(shuffle), seed_(seed) {
  STRIDE_CHECK(n >= 0, ValueError, "[DistributedSampler] n must be non-negative; got ", n, ".");
  STRIDE_CHECK(num_replicas > 0 && rank >= 0 && rank < num_replicas, ValueError,
               "[DistributedSampler] rank ", rank, " is not in [0, ", num_replicas, ").");
  per_rank_ = drop_last ? n / num_replicas : (n + num_replicas - 1) / num_replicas;
}

std::vector<int64_t> DistributedSampler::indices(Generator& /*gen*/) const {
  std::vector<int64_t> order(static_cast<size_t>(n_));
  std::iota(order.begin(), order.end(), int64_t(0));
  if (shuffle_) {
    Generator epoch_gen(seed_ + uint64_t(epoch_));
    for (int64_t i = 0; i + 1 < n_; ++i) {
      const int64_t j = i + int64_t(uniform_index(epoch_gen, uint64_t(n_ - i)));
      std::swap(order[size_t(i)], order[size_t(j)]);
    }
  }
  std::vector<int64_t> out;
  out.reserve(size_t(per_rank_));
  for (int64_t k = 0; k < per_rank_; ++k) {
    const int64_t position = rank_ + k * num_replicas_;
    out.push_back(order[size_t(position % std::max<int64_t>(n_, 1))]);  // past the end: padding
  }
  return out;
}

}  // namespace stride::data
