// Loader rows as stored (uint16/uint32) to the int64 ids the model takes:
// values at and past the signed range must come out unsigned.
#include <ATen/ATen.h>

#include <catch2/catch.hpp>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "batch/batch_tokens.hpp"

using wireup::train::stored_tokens_to_long;

TEST_CASE("stored uint16 and uint32 tokens widen to their unsigned values") {
  const std::vector<std::uint16_t> u16 = {0, 1, 32767, 32768, 40000, 65535};
  at::Tensor t = stored_tokens_to_long(u16.data(), 2, 3, 2);
  REQUIRE(t.scalar_type() == at::kLong);
  REQUIRE(t.sizes() == at::IntArrayRef({2, 3}));
  for (std::size_t i = 0; i < u16.size(); ++i)
    CHECK(t.view({-1})[static_cast<std::int64_t>(i)].item<std::int64_t>() == u16[i]);

  const std::vector<std::uint32_t> u32 = {0, 65536, 2147483647u, 2147483648u, 4294967295u, 7};
  t = stored_tokens_to_long(u32.data(), 3, 2, 4);
  REQUIRE(t.sizes() == at::IntArrayRef({3, 2}));
  for (std::size_t i = 0; i < u32.size(); ++i)
    CHECK(t.view({-1})[static_cast<std::int64_t>(i)].item<std::int64_t>() ==
          static_cast<std::int64_t>(u32[i]));
}

TEST_CASE("the widened tokens are a copy, not a view of the loader's buffer") {
  std::vector<std::uint16_t> u16 = {5, 6};
  const at::Tensor t = stored_tokens_to_long(u16.data(), 1, 2, 2);
  u16[0] = 9;
  CHECK(t[0][0].item<std::int64_t>() == 5);
  CHECK_THROWS_AS(stored_tokens_to_long(u16.data(), 1, 1, 3), std::invalid_argument);
}
