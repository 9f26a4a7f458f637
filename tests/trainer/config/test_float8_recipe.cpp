// --float8's recipe names and the scaling rule (config/float8_recipe.hpp), no Torch.
#include <catch2/catch.hpp>
#include <cmath>

#include "config/float8_recipe.hpp"
#include "config/train_options.hpp"
#include "wireup/error.hpp"

using namespace wireup::train;

TEST_CASE("--float8 names its three recipes and refuses others, naming the choices") {
  CHECK(parse_float8_recipe("off") == Float8Recipe::Off);
  CHECK(parse_float8_recipe("tensorwise") == Float8Recipe::Tensorwise);
  CHECK(parse_float8_recipe("rowwise") == Float8Recipe::Rowwise);
  CHECK(std::string(float8_recipe_name(Float8Recipe::Rowwise)) == "rowwise");
  CHECK_THROWS_WITH(parse_float8_recipe("e4m3"),
                    "--float8 'e4m3': expected off, tensorwise or rowwise");
}

TEST_CASE("--float8 needs --device cuda --bf16 1, refused at start otherwise") {
  auto opts = [](std::vector<const char*> args) {
    args.insert(args.begin(), "wireup-train");
    TrainOptions o;
    REQUIRE(parse_train_options(static_cast<int>(args.size()), args.data(), o));
    return o;
  };
  const auto cpu = opts({"--synthetic_data", "--float8", "tensorwise"});
  CHECK(cpu.compute.float8 == Float8Recipe::Tensorwise);
  CHECK_THROWS_WITH(check_train_options(cpu, 1, 1),
                    "--float8 tensorwise: float8 GEMMs need --device cuda --bf16 1");
  const auto fp32 = opts({"--synthetic_data", "--float8", "rowwise", "--device", "cuda"});
  CHECK_THROWS_AS(check_train_options(fp32, 1, 1), wireup::InputError);
  const auto ok =
      opts({"--synthetic_data", "--float8", "rowwise", "--device", "cuda", "--bf16", "1"});
  CHECK_NOTHROW(check_train_options(ok, 1, 1));
  CHECK(opts({"--synthetic_data"}).compute.float8 == Float8Recipe::Off);
}

TEST_CASE("a float8 scale maps amax onto the format's largest value") {
  CHECK(float8_scale(2.0f, kFloat8E4M3Max) == 224.0f);
  CHECK(float8_scale(57344.0f, kFloat8E5M2Max) == 1.0f);
  // All zeros: a finite scale (zeros stay zeros), not a division by zero.
  CHECK(std::isfinite(float8_scale(0.0f, kFloat8E4M3Max)));
  CHECK(float8_scale(0.0f, kFloat8E4M3Max) == float8_scale(1e-13f, kFloat8E4M3Max));
  CHECK(std::isnan(float8_scale(NAN, kFloat8E4M3Max)));
  CHECK(std::isnan(float8_scale(INFINITY, kFloat8E4M3Max)));
}

TEST_CASE("E4M3 rounding: 3 mantissa bits, ties to even, saturating at 448") {
  CHECK(round_to_e4m3(1.0f) == 1.0f);
  CHECK(round_to_e4m3(1.0625f) == 1.0f);    // halfway between 1 and 1.125: even
  CHECK(round_to_e4m3(1.1875f) == 1.25f);   // halfway between 1.125 and 1.25: even
  CHECK(round_to_e4m3(300.0f) == 288.0f);   // spacing 32 in [256, 512)
  CHECK(round_to_e4m3(1000.0f) == 448.0f);  // saturates
  CHECK(round_to_e4m3(-1000.0f) == -448.0f);
  CHECK(round_to_e4m3(0.001f) == std::ldexp(1.0f, -9));  // subnormal spacing 2^-9
  CHECK(round_to_e4m3(-0.75f) == -0.75f);
}
