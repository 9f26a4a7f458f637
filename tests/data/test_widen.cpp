// The loader's row kernels (data/format/src/widen.hpp, internal to
// wireup_data): every length around the vector widths, both token widths,
// every row type, with and without a next row to prefetch.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <vector>

#include "widen.hpp"

using namespace wireup::data;

namespace {

// Little-endian tokens of `width` bytes with high bits set where they fit,
// so a sign-extending or truncating kernel shows.
std::vector<unsigned char> stored_tokens(std::uint64_t n, unsigned width) {
  std::vector<unsigned char> v(n * width + 64);  // slack: kernels must not need it
  std::uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (std::uint64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const std::uint32_t t = width == 2 ? static_cast<std::uint32_t>(x >> 48)
                                       : static_cast<std::uint32_t>(x >> 33);  // < 2^31
    std::memcpy(&v[i * width], &t, width);  // little-endian host
  }
  return v;
}

std::uint64_t token(const std::vector<unsigned char>& v, std::uint64_t i, unsigned width) {
  std::uint32_t t = 0;
  std::memcpy(&t, &v[i * width], width);
  return t;
}

}  // namespace

TEST_CASE("row kernels widen every length and width exactly", "[format]") {
  for (const unsigned width : {2u, 4u}) {
    for (std::uint64_t n = 0; n <= 200; n += (n < 80 ? 1 : 7)) {
      for (const std::uint64_t big : {std::uint64_t{0}, std::uint64_t{2049}}) {
        const std::uint64_t count = n + big;
        CAPTURE(width, count);
        const auto src = stored_tokens(count, width);
        const auto next = stored_tokens(count + 3, width);
        for (const unsigned char* nx : {static_cast<const unsigned char*>(nullptr), next.data()}) {
          std::vector<std::int64_t> o64(count + 1, -1), w64(count + 1, -1);
          std::vector<std::int32_t> o32(count + 1, -1), w32(count + 1, -1);
          std::vector<unsigned char> raw(count * width + 1, 0xEE);
          detail::copy_row(src.data(), width, count, o64.data(), nx);
          detail::copy_row(src.data(), width, count, o32.data(), nx);
          detail::copy_row(src.data(), width, count, raw.data(), nx);
          detail::widen(src.data(), width, count, w64.data());
          detail::widen(src.data(), width, count, w32.data());
          for (std::uint64_t i = 0; i < count; ++i) {
            const auto t = token(src, i, width);
            REQUIRE(o64[i] == static_cast<std::int64_t>(t));
            REQUIRE(w64[i] == static_cast<std::int64_t>(t));
            REQUIRE(o32[i] == static_cast<std::int32_t>(t));
            REQUIRE(w32[i] == static_cast<std::int32_t>(t));
          }
          // Nothing written past the row.
          CHECK(o64[count] == -1);
          CHECK(w64[count] == -1);
          CHECK(o32[count] == -1);
          CHECK(w32[count] == -1);
          CHECK(std::memcmp(raw.data(), src.data(), count * width) == 0);
          CHECK(raw[count * width] == 0xEE);
        }
      }
    }
  }
}
