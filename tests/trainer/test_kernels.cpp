// The plain-C++ fp32 kernels of llama_math.cpp against their formulas in
// double, on odd sizes (no multiple of any vector width) and edge values.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "swiglu_kernel.hpp"
#include "vec_exp.hpp"

using namespace wireup::train;

namespace {

std::vector<float> random_floats(std::size_t n, float spread, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist(0.0f, spread);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(gen);
  return v;
}

// |got - want| within rel * (|want| + floor): float rounding of a few steps.
// Where terms cancel, floor is the size of the terms.
bool near(double got, double want, double rel = 2e-6, double floor = 1e-6) {
  return std::fabs(got - want) <= rel * (std::fabs(want) + floor);
}

double silu(double g) { return g / (1.0 + std::exp(-g)); }

}  // namespace

TEST_CASE("vec_exp is expf to about an ulp, with its edges") {
  for (float x = -85.0f; x < 88.0f; x += 0.01f) {
    INFO("x=" << x);
    CHECK(near(vec_exp(x), std::exp(double(x)), 1.5e-7, 0));
  }
  CHECK(vec_exp(0.0f) == 1.0f);
  CHECK(vec_exp(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(vec_exp(-200.0f) == 0.0f);
  CHECK(std::isinf(vec_exp(89.0f)));
  CHECK(std::isinf(vec_exp(std::numeric_limits<float>::infinity())));
  CHECK(std::isnan(vec_exp(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("swiglu kernels match silu(gate) * up and its derivative") {
  const std::size_t rows = 5, inter = 37;
  std::vector<float> gu = random_floats(rows * 2 * inter, 3.0f, 1);
  gu[3] = 95.0f;   // exp(-g) underflows
  gu[4] = -95.0f;  // exp(-g) overflows
  gu[5] = 0.0f;
  std::vector<float> dy = random_floats(rows * inter, 1.0f, 2);
  std::vector<float> y(rows * inter), dgu(rows * 2 * inter);
  swiglu_forward(gu.data(), y.data(), rows, inter);
  swiglu_backward(gu.data(), dy.data(), dgu.data(), rows, inter);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < inter; ++j) {
      const double g = gu[r * 2 * inter + j], u = gu[r * 2 * inter + inter + j];
      const double d = dy[r * inter + j], s = 1.0 / (1.0 + std::exp(-g));
      INFO("r=" << r << " j=" << j << " g=" << g);
      CHECK(near(y[r * inter + j], silu(g) * u));
      // silu' crosses 0 near g = -1.28: rounding relative to its terms
      CHECK(near(dgu[r * 2 * inter + j], d * u * s * (1.0 + g * (1.0 - s)), 2e-6,
                 std::fabs(d * u) * (1.0 + std::fabs(g))));
      CHECK(near(dgu[r * 2 * inter + inter + j], d * silu(g)));
    }
  }
  gu[7] = std::numeric_limits<float>::quiet_NaN();  // a diverged run must stay visible
  swiglu_forward(gu.data(), y.data(), rows, inter);
  CHECK(std::isnan(y[7]));
}
