#pragma once
#include <string>

// --float8: which linear layers' GEMMs run in float8 and how they are scaled
// (model/float8_linear.hpp does it with ATen's scaled matmul). Plain C++: the
// recipe names and the scaling rule, unit-tested without LibTorch.
namespace wireup::train {

enum class Float8Recipe {
  Off,         // bf16 GEMMs
  Tensorwise,  // one scale per tensor; e4m3 forward, e5m2 for gradients
  Rowwise,     // one scale per row of each GEMM operand (along the reduced dimension); e4m3 for
               // all operands, gradients too (ATen's row-wise scaled matmul takes e4m3 only)
};

// "off", "tensorwise", "rowwise"; anything else throws InputError naming the
// flag and the choices.
Float8Recipe parse_float8_recipe(const std::string& s);
const char* float8_recipe_name(Float8Recipe r);

// The largest finite values of the two float8 formats (OCP FP8: E4M3FN has
// no infinities, max 448; E5M2 max 57344).
inline constexpr float kFloat8E4M3Max = 448.0f;
inline constexpr float kFloat8E5M2Max = 57344.0f;

// Dynamic scaling: the factor that maps a tensor (or row) whose largest
// magnitude is `amax` onto the format's range, x_fp8 = saturate(x * scale),
// and x ~= x_fp8 / scale. An all-zero tensor (amax 0) and amax below 1e-12
// take the factor of 1e-12 (finite: the zeros stay zeros). NaN or an infinite
// amax gives NaN: such a step's loss is NaN and is reported as one.
float float8_scale(float amax, float format_max);

// x rounded to E4M3FN (round to nearest, ties to even, saturating at +-448):
// the reference the tests hold ATen's cast against.
float round_to_e4m3(float x);

}  // namespace wireup::train
