#include <catch2/catch.hpp>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "wireup/crc32c.hpp"

using wireup::crc32c_extend;
using wireup::crc32c_extend_portable;

namespace {
std::vector<char> random_bytes(std::size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::vector<char> v(n);
  for (char& c : v) c = static_cast<char>(gen() & 0xFFU);
  return v;
}
}  // namespace

TEST_CASE("crc32c: the published check values, by instruction and by table") {
  const std::string nine = "123456789";
  std::vector<unsigned char> zeros(32, 0), ones(32, 0xFF), ascending(32);
  for (int i = 0; i < 32; ++i)
    ascending[static_cast<std::size_t>(i)] = static_cast<unsigned char>(i);
  for (const auto f : {&crc32c_extend, &crc32c_extend_portable}) {
    CHECK(f(0, nine.data(), nine.size()) == 0xE3069283U);
    CHECK(f(0, zeros.data(), 32) == 0x8A9136AAU);  // RFC 3720, B.4
    CHECK(f(0, ones.data(), 32) == 0x62A8AB43U);
    CHECK(f(0, ascending.data(), 32) == 0x46DD794EU);
    CHECK(f(0, nine.data(), 0) == 0U);
  }
}

TEST_CASE("crc32c: extending by A then B equals extending by A+B, at any length and alignment") {
  const auto data = random_bytes(4096 + 64, 7);
  for (std::size_t start = 0; start < 9; ++start)
    for (std::size_t n : {std::size_t{0}, std::size_t{1}, std::size_t{7}, std::size_t{8},
                          std::size_t{9}, std::size_t{63}, std::size_t{4096}}) {
      const char* p = data.data() + start;
      const std::uint32_t whole = crc32c_extend(0, p, n);
      CHECK(whole == crc32c_extend_portable(0, p, n));
      for (std::size_t cut : {std::size_t{0}, n / 3, n / 2, n}) {
        INFO("start " << start << " n " << n << " cut " << cut);
        CHECK(crc32c_extend(crc32c_extend(0, p, cut), p + cut, n - cut) == whole);
      }
    }
}

TEST_CASE("crc32c: four lanes at once equal four single CRCs") {
  const auto data = random_bytes(4 * 1000 + 3, 11);
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{8}, std::size_t{1000}}) {
    const char* const lanes[4] = {data.data() + 1, data.data() + 1001, data.data() + 2002,
                                  data.data() + 3003};
    std::uint32_t crc[4] = {0, 1, 0xFFFFFFFFU, 42};
    std::uint32_t expect[4];
    for (int k = 0; k < 4; ++k) expect[k] = crc32c_extend_portable(crc[k], lanes[k], n);
    wireup::crc32c_extend4(crc, lanes, n);
    for (int k = 0; k < 4; ++k) CHECK(crc[k] == expect[k]);
  }
}

TEST_CASE("crc32c quarters: each a plain CRC-32C of its range; a flipped byte changes its own") {
  for (std::size_t n : {std::size_t{0}, std::size_t{7}, std::size_t{31}, std::size_t{32},
                        std::size_t{33}, std::size_t{1000}, std::size_t{65543}}) {
    INFO("size " << n);
    auto data = random_bytes(n, static_cast<unsigned>(n));
    const std::size_t q = wireup::crc32c_quarter_bytes(n);
    CHECK(q % 8 == 0);
    CHECK(4 * q <= n);
    CHECK(n - 4 * q < 32);
    const std::uint32_t expect[4] = {crc32c_extend_portable(0, data.data(), q),
                                     crc32c_extend_portable(0, data.data() + q, q),
                                     crc32c_extend_portable(0, data.data() + 2 * q, q),
                                     crc32c_extend_portable(0, data.data() + 3 * q, n - 3 * q)};
    const std::string hex = wireup::crc32c_quarters_hex(data.data(), n);
    CHECK(hex == wireup::crc32c_quarters_hex(expect));
    CHECK(wireup::is_crc32c_quarters_hex(hex));
    if (n == 0) continue;
    for (std::size_t at : {std::size_t{0}, q, 2 * q, n - 1}) {
      if (at >= n) continue;
      data[at] = static_cast<char>(data[at] ^ 0x10);
      const std::string flipped = wireup::crc32c_quarters_hex(data.data(), n);
      data[at] = static_cast<char>(data[at] ^ 0x10);
      const std::size_t quarter = q == 0 ? 3 : std::min<std::size_t>(at / q, 3);
      for (std::size_t k = 0; k < 4; ++k)
        CHECK((flipped.substr(8 * k, 8) != hex.substr(8 * k, 8)) == (k == quarter));
    }
  }
}

TEST_CASE("crc32c quarters read in pieces: the same checksum, each piece inside its quarter") {
  for (std::size_t n : {std::size_t{0}, std::size_t{31}, std::size_t{1000}, std::size_t{65543}}) {
    const auto data = random_bytes(n, static_cast<unsigned>(n) + 7);
    const std::size_t q = wireup::crc32c_quarter_bytes(n);
    for (std::size_t chunk :
         {std::size_t{0}, std::size_t{1}, std::size_t{5}, std::size_t{4096}, n}) {
      INFO("size " << n << ", chunk " << chunk);
      std::vector<char> lane_buf[4];
      std::size_t asked = 0;
      bool inside = true;
      const std::string hex = wireup::crc32c_quarters_hex(
          n, chunk, [&](int lane, std::uint64_t offset, std::size_t bytes) {
            const std::uint64_t begin = lane * q, end = lane == 3 ? n : (lane + 1) * q;
            inside = inside && offset >= begin && offset + bytes <= end &&
                     bytes <= std::max<std::size_t>(chunk, 32);
            asked += bytes;
            // a copy, as a file's reader hands over: only the newest piece per lane is valid
            lane_buf[lane].assign(data.begin() + static_cast<std::ptrdiff_t>(offset),
                                  data.begin() + static_cast<std::ptrdiff_t>(offset + bytes));
            return static_cast<const char*>(lane_buf[lane].data());
          });
      CHECK(hex == wireup::crc32c_quarters_hex(data.data(), n));
      CHECK(inside);
      CHECK(asked == n);  // every byte read once
    }
  }
}

TEST_CASE("crc32c quarters: the text form") {
  const std::uint32_t v[4] = {0xE3069283U, 0, 0xFFFFFFFFU, 0x0000abcdU};
  CHECK(wireup::crc32c_quarters_hex(v) == "e306928300000000ffffffff0000abcd");
  CHECK_FALSE(wireup::is_crc32c_quarters_hex("E306928300000000ffffffff0000abcd"));
  CHECK_FALSE(wireup::is_crc32c_quarters_hex("e306928300000000ffffffff0000abc"));
  CHECK_FALSE(wireup::is_crc32c_quarters_hex(std::string(64, 'a')));
  CHECK_FALSE(wireup::is_crc32c_quarters_hex("e306928300000000ffffffff0000abcg"));
}
