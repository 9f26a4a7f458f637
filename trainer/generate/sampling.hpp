#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

// The next token from a row of logits: greedy (temperature 0) or sampled from
// softmax(logits / temperature) restricted to the nucleus (top_p). Plain C++,
// no LibTorch; the same bits on every machine for a seed.
namespace wireup::train::generate {

struct SamplingRule {
  double temperature = 0.0;  // 0: greedy
  double top_p = 1.0;        // in (0, 1]
};

// The smallest set of the most probable tokens whose probabilities, of
// softmax(logits / temperature) computed in double, sum to at least top_p
// (ties in probability: the lower id first), most probable first, with their
// probabilities renormalised over the set; top_p 1: every token, in id order
// (nothing to sort). temperature > 0.
struct Nucleus {
  std::vector<std::int32_t> ids;
  std::vector<double> probs;
};
Nucleus nucleus(const float* logits, std::size_t n, const SamplingRule& rule);

// The lowest id among the largest logits.
std::int32_t argmax(const float* logits, std::size_t n);

// SplitMix64-seeded xoshiro256** with uniforms from its top 53 bits: the
// generator and its conversion are written here, so a seed gives the same
// draws with any standard library.
class Random {
 public:
  // `stream`: independent sequences of one seed (one per prompt).
  explicit Random(std::uint64_t seed, std::uint64_t stream = 0);
  std::uint64_t next();
  double uniform();  // [0, 1)

 private:
  std::uint64_t s_[4];
};

// Picks the next token: argmax for temperature 0 (no draw), else one uniform
// draw against the nucleus's cumulative probabilities.
class TokenSampler {
 public:
  TokenSampler(const SamplingRule& rule, std::uint64_t seed, std::uint64_t stream = 0)
      : rule_(rule), random_(seed, stream) {}
  std::int32_t pick(const float* logits, std::size_t n);

 private:
  SamplingRule rule_;
  Random random_;
};

}  // namespace wireup::train::generate
