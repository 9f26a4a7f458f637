#include "wireup/data/permutation.hpp"

#include <bit>
#include <stdexcept>

namespace wireup::data {

std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

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
    const std::uint64_t f = mix64(right ^ k) & half_mask_;
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

std::uint64_t epoch_key(std::uint64_t seed, std::uint64_t epoch) {
  return mix64(mix64(seed) + epoch);
}

}  // namespace wireup::data
