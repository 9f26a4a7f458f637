#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <stdexcept>
#include <vector>

#include "wireup/data/permutation.hpp"

using namespace wireup::data;

TEST_CASE("permutation is a bijection for many sizes", "[sampler]") {
  for (std::uint64_t n :
       {0ull, 1ull, 2ull, 3ull, 5ull, 16ull, 17ull, 100ull, 1000ull, 4097ull, 65537ull}) {
    const Permutation p(n, 42);
    std::vector<char> seen(n, 0);
    for (std::uint64_t i = 0; i < n; ++i) {
      const auto v = p(i);
      REQUIRE(v < n);
      REQUIRE(seen[v] == 0);
      seen[v] = 1;
    }
  }
}

TEST_CASE("permutation values are pinned across platforms", "[sampler]") {
  // splitmix64 and the Feistel rounds use only 64-bit integer arithmetic:
  // these values must never change, or resumed runs would see other data.
  std::uint64_t s = 0;
  CHECK(splitmix64_next(s) == 0xe220a8397b1dcdafULL);
  CHECK(splitmix64_next(s) == 0x6e789e6aa1b965f4ULL);
  const Permutation p(10, epoch_key(1234, 0));
  std::vector<std::uint64_t> got;
  for (std::uint64_t i = 0; i < 10; ++i) got.push_back(p(i));
  CHECK(got == std::vector<std::uint64_t>{0, 8, 1, 7, 4, 3, 5, 2, 6, 9});
}

TEST_CASE("different keys give different orders", "[sampler]") {
  const std::uint64_t n = 1000;
  const Permutation a(n, epoch_key(7, 0)), b(n, epoch_key(7, 1)), c(n, epoch_key(8, 0));
  std::uint64_t same_ab = 0, same_ac = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    same_ab += a(i) == b(i);
    same_ac += a(i) == c(i);
  }
  // A random permutation pair agrees in about one place.
  CHECK(same_ab < 10);
  CHECK(same_ac < 10);
}

TEST_CASE("permutation looks shuffled", "[sampler]") {
  // Neighbours should not stay neighbours: count i -> i+1 adjacencies kept.
  const std::uint64_t n = 10000;
  const Permutation p(n, 99);
  std::uint64_t kept = 0, fixed = 0;
  for (std::uint64_t i = 0; i + 1 < n; ++i) kept += p(i + 1) == p(i) + 1;
  for (std::uint64_t i = 0; i < n; ++i) fixed += p(i) == i;
  CHECK(kept < 10);
  CHECK(fixed < 10);
  // Each tenth of the output range gets about a tenth of the first half's values.
  std::vector<int> bucket(10, 0);
  for (std::uint64_t i = 0; i < n / 2; ++i) ++bucket[p(i) * 10 / n];
  for (const int b : bucket) CHECK((b > 400 && b < 600));
}

TEST_CASE("map gives what operator() gives, for any count and in place", "[sampler]") {
  for (std::uint64_t n :
       {1ull, 2ull, 3ull, 5ull, 16ull, 17ull, 100ull, 1000ull, 4097ull, 65537ull}) {
    CAPTURE(n);
    const Permutation p(n, epoch_key(9, n));
    std::vector<std::uint64_t> in;
    for (std::uint64_t i = 0; i < n; ++i) in.push_back((i * 7919) % n);  // not in order
    for (std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{8},
                              std::size_t{9}, std::size_t{100}, static_cast<std::size_t>(n)}) {
      count = std::min<std::size_t>(count, in.size());
      CAPTURE(count);
      std::vector<std::uint64_t> out(count + 1, 12345);  // one past: must stay untouched
      p.map(in.data(), count, out.data());
      for (std::size_t j = 0; j < count; ++j) REQUIRE(out[j] == p(in[j]));
      CHECK(out[count] == 12345);
      std::vector<std::uint64_t> same(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(count));
      p.map(same.data(), count, same.data());
      CHECK(std::equal(same.begin(), same.end(), out.begin()));
    }
  }
  const Permutation p(10, 1);
  const std::uint64_t bad[] = {3, 10};
  std::uint64_t out[2];
  CHECK_THROWS_AS(p.map(bad, 2, out), std::out_of_range);
}
