#include "wireup/data/permutation.hpp"

#include <bit>
#include <stdexcept>

namespace wireup::data {

namespace {
inline std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
}  // namespace

std::uint64_t mix64(std::uint64_t z) { return mix(z); }

std::uint64_t splitmix64_next(std::uint64_t& state) {
  state += 0x9e3779b97f4a7c15ULL;
  return mix64(state);
}

Permutation::Permutation(std::uint64_t n, std::uint64_t key) : n_(n) {
  // Bits needed for indices 0..n-1, rounded up to even, at least 2.
  const unsigned bits = n <= 1 ? 1u : static_cast<unsigned>(std::bit_width(n - 1));
  half_bits_ = (bits + 1) / 2;
  half_mask_ = (std::uint64_t{1} << half_bits_) - 1;
  std::uint64_t state = key;
  for (auto& k : keys_) k = splitmix64_next(state);
}

std::uint64_t Permutation::encrypt(std::uint64_t x) const {
  std::uint64_t left = x >> half_bits_;
  std::uint64_t right = x & half_mask_;
  for (const auto k : keys_) {
    const std::uint64_t f = mix(right ^ k) & half_mask_;
    const std::uint64_t next = left ^ f;
    left = right;
    right = next;
  }
  return (left << half_bits_) | right;
}

std::uint64_t Permutation::operator()(std::uint64_t i) const {
  if (i >= n_) throw std::out_of_range("Permutation: index past the end");
  // Cycle-walking: the domain is < 4n, so about 4 steps at worst on average,
  // and the walk ends because i's own cycle returns into [0, n).
  std::uint64_t x = encrypt(i);
  while (x >= n_) x = encrypt(x);
  return x;
}

// One encryption of kLanes independent values at once: their multiply
// chains overlap, where one value alone waits on each multiply in turn.
void Permutation::encrypt_lanes(std::uint64_t* x) const {
  std::uint64_t left[kLanes], right[kLanes];
#pragma GCC unroll 8
  for (std::size_t j = 0; j < kLanes; ++j) {
    left[j] = x[j] >> half_bits_;
    right[j] = x[j] & half_mask_;
  }
#pragma GCC unroll 6
  for (const auto k : keys_) {
#pragma GCC unroll 8
    for (std::size_t j = 0; j < kLanes; ++j) {
      const std::uint64_t next = left[j] ^ (mix(right[j] ^ k) & half_mask_);
      left[j] = right[j];
      right[j] = next;
    }
  }
#pragma GCC unroll 8
  for (std::size_t j = 0; j < kLanes; ++j) x[j] = (left[j] << half_bits_) | right[j];
}

// The indices stream through kLanes lanes: each round encrypts every lane
// once; a lane whose value landed in range writes its result and takes the
// next index. Selects, not branches: whether a value lands in range is a
// coin toss (the domain is up to 4n) that a branch predictor always loses.
// Lanes past the last index walk from 0 and write into a scratch word. A
// result goes to out[s] only once in[s] was read: in == out is safe.
void Permutation::map(const std::uint64_t* in, std::size_t count, std::uint64_t* out) const {
  for (std::size_t i = 0; i < count; ++i)
    if (in[i] >= n_) throw std::out_of_range("Permutation: index past the end");
  std::uint64_t scratch = 0;
  std::uint64_t walk[kLanes];
  std::uint64_t* dest[kLanes];
  std::size_t taken = 0;
  for (std::size_t j = 0; j < kLanes; ++j) {
    const bool real = taken < count;
    walk[j] = real ? in[taken] : 0;
    dest[j] = real ? out + taken : &scratch;
    taken += real ? 1 : 0;
  }
  for (std::size_t left = count; left > 0;) {
    encrypt_lanes(walk);
#pragma GCC unroll 8
    for (std::size_t j = 0; j < kLanes; ++j) {
      const bool done = walk[j] < n_;
      *(done ? dest[j] : &scratch) = walk[j];
      left -= done && dest[j] != &scratch ? 1 : 0;
      const bool refill = done && taken < count;
      walk[j] = refill ? in[taken] : (done ? 0 : walk[j]);
      dest[j] = refill ? out + taken : (done ? &scratch : dest[j]);
      taken += refill ? 1 : 0;
    }
  }
}

std::uint64_t epoch_key(std::uint64_t seed, std::uint64_t epoch) {
  return mix64(mix64(seed) + epoch);
}

}  // namespace wireup::data
