#pragma once
#include <bit>
#include <cstdint>
#include <limits>

// exp(x) for float, written so that GCC vectorizes the loops it sits in
// (libm's expf is a call the vectorizer cannot widen without -ffast-math).
// The including file needs -fno-trapping-math, or the selects stay branches.
// Range reduction x = n*ln2 + r, |r| <= ln2/2, then the degree-7 Taylor
// polynomial of e^r (truncation < 1e-8 relative, below half an ulp), then
// the 2^n scale built in the exponent bits: about 1 ulp from expf. Below
// -86 it gives 0 (expf: under 5e-38), above expf's overflow +inf; NaN stays
// NaN.
namespace wireup::train {

inline float vec_exp(float x0) {
  const float x = x0 < -86.0f ? -86.0f : (x0 > 88.7228f ? 88.7228f : x0);
  // n = round(x / ln2), -124..128, by the 1.5*2^23 trick (nearbyint is a
  // call at AVX2); r = x - n*ln2 with ln2 in two parts, exact in the first
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.0f / 5040.0f;
  p = p * r + 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  // 2^n as 2 * 2^(n-1): 2^128 itself is not a float
  const float e = p * 2.0f * std::bit_cast<float>((static_cast<std::int32_t>(n) + 126) << 23);
  return x0 < -86.0f ? 0.0f : (x0 > 88.7228f ? std::numeric_limits<float>::infinity() : e);
}

}  // namespace wireup::train
