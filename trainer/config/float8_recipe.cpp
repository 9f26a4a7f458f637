#include "config/float8_recipe.hpp"

#include <algorithm>
#include <cmath>

#include "wireup/error.hpp"

namespace wireup::train {

Float8Recipe parse_float8_recipe(const std::string& s) {
  if (s == "off") return Float8Recipe::Off;
  if (s == "tensorwise") return Float8Recipe::Tensorwise;
  if (s == "rowwise") return Float8Recipe::Rowwise;
  throw InputError("--float8 '" + s + "': expected off, tensorwise or rowwise");
}

const char* float8_recipe_name(Float8Recipe r) {
  switch (r) {
    case Float8Recipe::Tensorwise:
      return "tensorwise";
    case Float8Recipe::Rowwise:
      return "rowwise";
    case Float8Recipe::Off:
      break;
  }
  return "off";
}

float float8_scale(float amax, float format_max) {
  if (std::isnan(amax) || std::isinf(amax)) return NAN;
  return format_max / std::fmax(amax, 1e-12f);
}

float round_to_e4m3(float x) {
  if (std::isnan(x)) return x;
  const float a = std::fabs(x);
  if (a >= kFloat8E4M3Max) return std::copysign(kFloat8E4M3Max, x);
  // E4M3: 3 mantissa bits; normal exponents -6..8; below 2^-6 the spacing is
  // fixed at 2^-9 (subnormals).
  int e = 0;
  std::frexp(a, &e);  // a = m * 2^e, m in [0.5, 1)
  const int exp = std::max(e - 1, -6);
  const float step = std::ldexp(1.0f, exp - 3);
  const float q = std::nearbyint(a / step) * step;  // ties to even (default rounding mode)
  return std::copysign(std::fmin(q, kFloat8E4M3Max), x);
}

}  // namespace wireup::train
