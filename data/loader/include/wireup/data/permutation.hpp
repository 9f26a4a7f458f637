#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace wireup::data {

// splitmix64 (Steele, Lea, Flood 2014): the portable mixer behind every
// random choice here, so results are the same with any compiler or libc.
std::uint64_t splitmix64_next(std::uint64_t& state);
std::uint64_t mix64(std::uint64_t x);  // splitmix64's finaliser

// A keyed pseudo-random bijection of [0, n): a 6-round Feistel network on
// the smallest even-bit power of two >= n, cycle-walking back into range.
// Unlike Fisher-Yates it needs no O(n) table and maps any index in O(1), so
// a loader with 10^9 windows can start or seek anywhere instantly.
class Permutation {
 public:
  Permutation(std::uint64_t n, std::uint64_t key);
  std::uint64_t size() const { return n_; }
  // Requires i < size().
  std::uint64_t operator()(std::uint64_t i) const;
  // out[j] = (*this)(in[j]) for j < count (in == out allowed): the same
  // values, computed several at a time.
  void map(const std::uint64_t* in, std::size_t count, std::uint64_t* out) const;

 private:
  static constexpr int kRounds = 6;
  static constexpr std::size_t kLanes = 8;
  std::uint64_t encrypt(std::uint64_t x) const;
  void encrypt_lanes(std::uint64_t* x) const;  // x[kLanes]

  std::uint64_t n_ = 0;
  unsigned half_bits_ = 1;
  std::uint64_t half_mask_ = 1;
  std::array<std::uint64_t, kRounds> keys_{};
};

// The key for one epoch's order: mix64(mix64(seed) + epoch).
std::uint64_t epoch_key(std::uint64_t seed, std::uint64_t epoch);

}  // namespace wireup::data
