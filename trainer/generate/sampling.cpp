#include "generate/sampling.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace wireup::train::generate {

std::int32_t argmax(const float* logits, std::size_t n) {
  std::size_t best = 0;
  for (std::size_t i = 1; i < n; ++i)
    if (logits[i] > logits[best]) best = i;
  return static_cast<std::int32_t>(best);
}

Nucleus nucleus(const float* logits, std::size_t n, const SamplingRule& rule) {
  const double max = logits[argmax(logits, n)];
  std::vector<double> p(n);
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += p[i] = std::exp((logits[i] - max) / rule.temperature);
  std::vector<std::int32_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  Nucleus out;
  if (rule.top_p >= 1.0) {  // every token, in id order: no sort needed
    out.ids = std::move(order);
    for (double& q : p) q /= sum;
    out.probs = std::move(p);
    return out;
  }
  std::stable_sort(order.begin(), order.end(), [&](std::int32_t a, std::int32_t b) {
    return p[static_cast<std::size_t>(a)] > p[static_cast<std::size_t>(b)];
  });
  double kept = 0;
  for (std::int32_t id : order) {
    const double q = p[static_cast<std::size_t>(id)] / sum;
    out.ids.push_back(id);
    out.probs.push_back(q);
    kept += q;
    if (kept >= rule.top_p) break;
  }
  for (double& q : out.probs) q /= kept;
  return out;
}

namespace {
std::uint64_t splitmix64(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}
std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
}  // namespace

Random::Random(std::uint64_t seed, std::uint64_t stream) {
  std::uint64_t x = splitmix64(seed) ^ stream;
  for (auto& s : s_) s = splitmix64(x);
}

std::uint64_t Random::next() {
  const std::uint64_t result = rotl(s_[1] * 5, 7) * 9;
  const std::uint64_t t = s_[1] << 17;
  s_[2] ^= s_[0];
  s_[3] ^= s_[1];
  s_[1] ^= s_[2];
  s_[0] ^= s_[3];
  s_[2] ^= t;
  s_[3] = rotl(s_[3], 45);
  return result;
}

double Random::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

std::int32_t TokenSampler::pick(const float* logits, std::size_t n) {
  if (rule_.temperature <= 0) return argmax(logits, n);
  const Nucleus nu = nucleus(logits, n, rule_);
  const double u = random_.uniform();
  double c = 0;
  for (std::size_t i = 0; i < nu.ids.size(); ++i) {
    c += nu.probs[i];
    if (u < c) return nu.ids[i];
  }
  return nu.ids.back();  // u within rounding of 1
}

}  // namespace wireup::train::generate
