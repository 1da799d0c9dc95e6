// Random number generators. A Generator is a counter-based Philox4x32-10
// stream: (key = f(seed), counter). Element i of a random op draws from
// counter (offset + i / k), so the numbers depend only on the seed and the
// element index: every thread count and every memory layout sees the same
// values. Generators cannot be copied (a copy would silently replay the same
// stream, the classic DataLoader-worker bug); `fork(stream)` derives an
// independent one explicitly.
#pragma once

#include <cstdint>
#include <mutex>

namespace stride {

struct GeneratorState {
  uint64_t seed = 0;
  uint64_t offset = 0;  // Philox counters consumed so far
};

class Generator {
 public:
  explicit Generator(uint64_t seed = 0x5eed);
  Generator(const Generator&) = delete;
  Generator& operator=(const Generator&) = delete;
  Generator(Generator&& other) noexcept;
  Generator& operator=(Generator&& other) noexcept;

  // Restarts the stream from counter 0 with a new seed.
  void manual_seed(uint64_t seed);
  uint64_t seed() const;
  // For checkpoints: the whole state is (seed, offset).
  GeneratorState get_state() const;
  void set_state(const GeneratorState& state);

  // An independent stream determined by (this seed, stream id) only, so that
  // e.g. worker w of a loader always gets the same stream for the same seed.
  Generator fork(uint64_t stream) const;

  // Reserves `n` consecutive Philox counters and returns the first one.
  // Thread-safe; kernels use it to claim a block before filling in parallel.
  uint64_t reserve(uint64_t n);
  // The Philox key derived from the seed.
  uint64_t key() const;

  // One 64-bit draw (consumes one counter): for seeding and small choices.
  // Thread-safe.
  uint64_t next_u64();

 private:
  mutable std::mutex mu_;
  uint64_t seed_;
  uint64_t key_;
  uint64_t offset_ = 0;
};

// The process-wide generator used when an op is given none. It starts from
// a fixed seed (PyTorch's default, 67280421310721), so an unseeded run is
// reproducible too.
Generator& default_generator();
// Seeds the default generator of every device (backend.h): one call fixes
// every random op of a run.
void manual_seed(uint64_t seed);

}  // namespace stride
