#include "stride/generator.h"

#include "core/philox.h"

namespace stride {
namespace {

// Note [Philox side streams]
// A generator's main stream is philox4x32(counter(i, 0, 0), key) for
// i = 0, 1, 2, ...; words 2 and 3 of the counter are zero. Anything else that
// needs key-dependent randomness (fork, rejection retries in randint) uses a
// counter whose word 3 carries a nonzero tag, so it can never collide with a
// main-stream draw of the same generator.
constexpr uint32_t kForkTag = 0x666F726Bu;  // "fork"

// SplitMix64's finaliser (Steele et al. 2014): a bijection on 64 bits with full
// avalanche, so nearby seeds (0, 1, 2, ...) get unrelated keys.
uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

uint64_t join(uint32_t lo, uint32_t hi) {
  return uint64_t(lo) | (uint64_t(hi) << 32);
}

// PyTorch's default seed: a fresh process is reproducible unless seeded.
constexpr uint64_t kDefaultSeed = 67280421310721ull;

}  // namespace

Generator::Generator(uint64_t seed) : seed_(seed), key_(splitmix64(seed)) {}

Generator::Generator(Generator&& other) noexcept {
  std::lock_guard lock(other.mu_);
  seed_ = other.seed_;
  key_ = other.key_;
  offset_ = other.offset_;
}

Generator& Generator::operator=(Generator&& other) noexcept {
  if (this == &other) return *this;
  std::scoped_lock lock(mu_, other.mu_);  // deadlock-free for a = b; b = a
  seed_ = other.seed_;
  key_ = other.key_;
  offset_ = other.offset_;
  return *this;
}

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard lock(mu_);
  seed_ = seed;
  key_ = splitmix64(seed);
  offset_ = 0;
}

uint64_t Generator::seed() const {
  std::lock_guard lock(mu_);
  return seed_;
}

GeneratorState Generator::get_state() const {
  std::lock_guard lock(mu_);
  return {seed_, offset_};
}

void Generator::set_state(const GeneratorState& state) {
  std::lock_guard lock(mu_);
  seed_ = state.seed;
  key_ = splitmix64(state.seed);
  offset_ = state.offset;
}

// The child's seed is Philox (a keyed pseudo-random function) applied to the
// stream id under the parent's key, on a side stream (Note [Philox side
// streams]): distinct ids give unrelated seeds, and the parent's offset is
// neither read nor changed.
Generator Generator::fork(uint64_t stream) const {
  uint64_t key;
  {
    std::lock_guard lock(mu_);
    key = key_;
  }
  const auto out =
      detail::philox4x32(detail::philox_counter(stream, 0, kForkTag), detail::philox_key(key));
  return Generator(join(out[0], out[1]));
}

uint64_t Generator::reserve(uint64_t n) {
  std::lock_guard lock(mu_);
  const uint64_t first = offset_;
  offset_ += n;
  return first;
}

uint64_t Generator::key() const {
  std::lock_guard lock(mu_);
  return key_;
}

uint64_t Generator::next_u64() {
  uint64_t key, counter;
  {
    std::lock_guard lock(mu_);
    key = key_;
    counter = offset_++;
  }
  const auto out = detail::philox4x32(detail::philox_counter(counter), detail::philox_key(key));
  return join(out[0], out[1]);
}

Generator& default_generator() {
  static Generator gen(kDefaultSeed);
  return gen;
}

}  // namespace stride
