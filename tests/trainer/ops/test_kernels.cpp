// The plain-C++ fp32 kernels of llama_math.cpp against their formulas in
// double, on odd sizes (no multiple of any vector width) and edge values; the
// linear layers' GEMM adapter against a triple loop.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "ops/cpu_gemm.hpp"
#include "ops/cross_entropy_kernel.hpp"
#include "ops/rms_norm_kernel.hpp"
#include "ops/swiglu_kernel.hpp"
#include "ops/vec_exp.hpp"

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

TEST_CASE("rms_norm kernels match the formula, dw accumulating over calls") {
  const std::size_t rows = 7, n = 45;
  const float eps = 1e-5f;
  std::vector<float> x = random_floats(rows * n, 2.0f, 3), w = random_floats(n, 1.0f, 4);
  std::vector<float> dy = random_floats(rows * n, 1.0f, 5);
  std::vector<float> y(rows * n), rstd(rows), dx(rows * n);
  std::vector<double> dw(n, 0.5);  // added to, not overwritten
  rms_norm_forward(x.data(), w.data(), y.data(), rstd.data(), rows, n, eps);
  rms_norm_backward(x.data(), w.data(), rstd.data(), dy.data(), dx.data(), dw.data(), rows, n);
  std::vector<double> want_dw(n, 0.5);
  for (std::size_t r = 0; r < rows; ++r) {
    double ss = 0, dot = 0;
    for (std::size_t j = 0; j < n; ++j) ss += double(x[r * n + j]) * x[r * n + j];
    const double rs = 1.0 / std::sqrt(ss / n + eps);
    CHECK(near(rstd[r], rs));
    for (std::size_t j = 0; j < n; ++j) dot += double(dy[r * n + j]) * w[j] * x[r * n + j] * rs;
    dot /= n;
    for (std::size_t j = 0; j < n; ++j) {
      const double xhat = x[r * n + j] * rs, g = dy[r * n + j];
      INFO("r=" << r << " j=" << j);
      CHECK(near(y[r * n + j], xhat * w[j]));
      CHECK(near(dx[r * n + j], (g * w[j] - xhat * dot) * rs, 2e-6,
                 (std::fabs(g * w[j]) + std::fabs(xhat * dot)) * rs));
      want_dw[j] += g * xhat;
    }
  }
  for (std::size_t j = 0; j < n; ++j) CHECK(near(dw[j], want_dw[j], 2e-6, 1e-3));
}

TEST_CASE("cross_entropy kernels match log-softmax and softmax minus one-hot") {
  const std::size_t rows = 6, V = 1001;
  std::vector<float> logits = random_floats(rows * V, 4.0f, 6);
  logits[2] = -std::numeric_limits<float>::infinity();  // a masked class
  const std::vector<std::int64_t> targets = {0, 1000, 17, 17, 500, 999};
  std::vector<float> lse(rows);
  const double total = cross_entropy_forward(logits.data(), targets.data(), lse.data(), rows, V);
  double want_total = 0;
  std::vector<double> want_lse(rows);
  for (std::size_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (std::size_t j = 0; j < V; ++j) sum += std::exp(double(logits[r * V + j]));
    want_lse[r] = std::log(sum);
    CHECK(near(lse[r], want_lse[r]));
    want_total += want_lse[r] - logits[r * V + static_cast<std::size_t>(targets[r])];
  }
  CHECK(near(total, want_total));
  const float scale = 0.37f;
  std::vector<float> g = logits;
  cross_entropy_backward(g.data(), targets.data(), lse.data(), scale, rows, V);
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t j = 0; j < V; ++j) {
      const double p = std::exp(double(logits[r * V + j]) - lse[r]);
      const double want = (p - (j == static_cast<std::size_t>(targets[r]) ? 1.0 : 0.0)) * scale;
      INFO("r=" << r << " j=" << j);
      CHECK(near(g[r * V + j], want, 2e-6, 1e-6));
    }
  }
  CHECK(g[2] == 0.0f);
}

TEST_CASE("cpu_sgemm is the row-major GEMM, every transpose, leading dimension and beta") {
  if (!cpu_sgemm_available()) {  // built without oneDNN: a clear refusal, never a wrong answer
    std::vector<float> a(4), c(4);
    CHECK_THROWS_WITH(cpu_sgemm(false, false, 2, 2, 2, 1, a.data(), 2, a.data(), 2, 0, c.data(), 2),
                      Catch::Contains("libdnnl-dev"));
    return;
  }
  CHECK(std::string(cpu_sgemm_name()) == "onednn");
  const std::int64_t M = 37, N = 29, K = 53, pad = 3;  // odd sizes, rows wider than the matrix
  for (const bool ta : {false, true}) {
    for (const bool tb : {false, true}) {
      for (const float beta : {0.0f, 1.0f, -0.5f}) {
        INFO("trans_a " << ta << " trans_b " << tb << " beta " << beta);
        // op(A) is M x K: stored K x M when transposed; ld = stored columns + pad
        const std::int64_t lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
        const auto A = random_floats(static_cast<std::size_t>((ta ? K : M) * lda), 1.0f, 7);
        const auto B = random_floats(static_cast<std::size_t>((tb ? N : K) * ldb), 1.0f, 8);
        auto C = random_floats(static_cast<std::size_t>(M * ldc), 1.0f, 9);
        if (beta == 0.0f)  // beta 0 must not read C: NaN there would poison the sum
          for (auto& x : C) x = std::numeric_limits<float>::quiet_NaN();
        const auto C0 = C;
        const float alpha = 0.75f;
        cpu_sgemm(ta, tb, M, N, K, alpha, A.data(), lda, B.data(), ldb, beta, C.data(), ldc);
        for (std::int64_t i = 0; i < M; ++i) {
          for (std::int64_t j = 0; j < N; ++j) {
            double dot = 0, mag = 0;
            for (std::int64_t k = 0; k < K; ++k) {
              const double a = A[static_cast<std::size_t>(ta ? k * lda + i : i * lda + k)];
              const double b = B[static_cast<std::size_t>(tb ? j * ldb + k : k * ldb + j)];
              dot += a * b;
              mag += std::fabs(a * b);
            }
            const auto at = static_cast<std::size_t>(i * ldc + j);
            const double want = alpha * dot + (beta == 0.0f ? 0.0 : beta * double(C0[at]));
            INFO("i=" << i << " j=" << j);
            CHECK(std::fabs(C[at] - want) <= 1e-5 * (mag + std::fabs(want)) + 1e-6);
          }
        }
        // the padding between rows is left alone
        for (std::int64_t i = 0; i < M; ++i)
          for (std::int64_t j = N; j < ldc; ++j) {
            const auto at = static_cast<std::size_t>(i * ldc + j);
            CHECK((std::isnan(C0[at]) ? std::isnan(C[at]) : C[at] == C0[at]));
          }
      }
    }
  }
}

TEST_CASE("cpu_sgemm's edges: empty sizes, an empty sum, a negative size") {
  if (!cpu_sgemm_available()) return;  // the refusal is tested above
  std::vector<float> c = {std::numeric_limits<float>::quiet_NaN(), 2.0f};
  cpu_sgemm(false, false, 1, 2, 0, 1, nullptr, 1, nullptr, 2, 0.0f, c.data(), 2);  // K = 0
  CHECK(c[0] == 0.0f);
  CHECK(c[1] == 0.0f);
  c = {1.0f, 2.0f};
  cpu_sgemm(false, false, 1, 2, 0, 1, nullptr, 1, nullptr, 2, 3.0f, c.data(), 2);
  CHECK(c[0] == 3.0f);
  CHECK(c[1] == 6.0f);
  cpu_sgemm(false, false, 0, 2, 5, 1, nullptr, 5, nullptr, 2, 0.0f, nullptr, 2);  // M = 0
  CHECK_THROWS_WITH(cpu_sgemm(false, false, -1, 2, 2, 1, nullptr, 2, nullptr, 2, 0, nullptr, 2),
                    Catch::Contains("negative size M=-1"));
}
