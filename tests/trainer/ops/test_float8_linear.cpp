// The float8 linear layer (model/float8_linear.hpp) on the CPU: the operands
// are quantized exactly as on a GPU (ATen's float8 dtypes), and the product of
// the quantized operands is taken in fp32 where a GPU takes _scaled_mm. So the
// scaling, saturation, row-wise axes and the three GEMMs' operands are held
// against the rule (config/float8_recipe.hpp) and the bf16/fp32 layer; the
// GPU's own GEMM is tests/gpu/gpu_check.sh's (throughput, float8loss).
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>
#include <torch/version.h>

#include <catch2/catch.hpp>

#include "config/float8_recipe.hpp"
#include "ops/float8_linear.hpp"
#include "ops/fused_ops.hpp"

using namespace wireup::train;

TEST_CASE("float8 linear layers: a LibTorch without the scaled matmul says so") {
  const at::Tensor x = at::randn({16, 32}), w = at::randn({16, 32});
  CHECK(at::equal(ops::float8_linear(x, w, Float8Recipe::Off), ops::linear(x, w)));
  if (ops::float8_built()) {
    CHECK_THAT(ops::float8_unavailable(at::kCPU, Float8Recipe::Tensorwise),
               Catch::Contains("--device cuda"));
    return;
  }
  CHECK_THROWS_WITH(ops::float8_linear(x, w, Float8Recipe::Tensorwise),
                    Catch::Contains("LibTorch 2.5 or newer"));
  CHECK_THAT(ops::float8_unavailable(at::kCPU, Float8Recipe::Rowwise),
             Catch::Contains("LibTorch 2.5 or newer"));
}

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
namespace {

double rel_err(const at::Tensor& got, const at::Tensor& want) {
  return (got.to(at::kDouble) - want.to(at::kDouble)).norm().item<double>() /
         want.to(at::kDouble).norm().item<double>();
}

at::Tensor leaf(const at::Tensor& t) { return t.detach().clone().requires_grad_(true); }

}  // namespace

TEST_CASE("float8 quantization: scale from amax, values rounded to E4M3, saturated") {
  const bool rowwise = GENERATE(false, true);
  INFO("rowwise " << rowwise);
  at::Tensor t = at::randn({32, 48}) * 3;
  t.index_put_({5, 7}, 1000.0);  // one outlier: its row (or the tensor) scales down
  const auto q = ops::quantize_float8(t, at::kFloat8_e4m3fn, rowwise);
  REQUIRE(q.values.scalar_type() == at::kFloat8_e4m3fn);
  CHECK(q.inv_scale.sizes() == (rowwise ? at::IntArrayRef{32, 1} : at::IntArrayRef{}));
  const at::Tensor amax = rowwise ? t.abs().amax({1}, true) : t.abs().amax();
  // inv_scale = amax / 448: the largest magnitude lands on the format's maximum
  CHECK(at::allclose(q.inv_scale * kFloat8E4M3Max, amax, 1e-6, 0));
  const at::Tensor v = q.values.to(at::kFloat);
  const at::Tensor scaled = t / q.inv_scale;
  for (std::int64_t i = 0; i < t.numel(); i += 37) {
    const float x = scaled.reshape({-1})[i].item<float>();
    CHECK(v.reshape({-1})[i].item<float>() == round_to_e4m3(x));
  }
  CHECK(v.abs().max().item<float>() == kFloat8E4M3Max);
  // Row-wise keeps the rows without the outlier at full resolution.
  const double err = rel_err(v * q.inv_scale, t);
  CHECK(err < (rowwise ? 0.04 : 0.5));
}

TEST_CASE("float8 linear: forward and both gradients close to the exact layer, not equal") {
  const auto recipe = GENERATE(Float8Recipe::Tensorwise, Float8Recipe::Rowwise);
  INFO("recipe " << float8_recipe_name(recipe));
  const at::Tensor x0 = at::randn({2, 16, 64}), w0 = at::randn({48, 64}) * 0.05;
  at::Tensor x = leaf(x0), w = leaf(w0), rx = leaf(x0), rw = leaf(w0);
  const at::Tensor y = ops::float8_linear(x, w, recipe);
  const at::Tensor ry = at::linear(rx, rw);
  REQUIRE(y.sizes() == ry.sizes());
  const double fwd = rel_err(y, ry);
  CHECK(fwd > 1e-4);  // it was quantized
  CHECK(fwd < 0.05);
  const at::Tensor dy = at::randn(y.sizes());
  const auto got = torch::autograd::grad({y}, {x, w}, {dy});
  const auto want = torch::autograd::grad({ry}, {rx, rw}, {dy});
  REQUIRE(got[0].sizes() == x.sizes());
  REQUIRE(got[1].sizes() == w.sizes());
  // Gradients in E5M2 (2 mantissa bits) tensor-wise, E4M3 row-wise.
  for (int i = 0; i < 2; ++i) {
    const double e = rel_err(got[i], want[i]);
    INFO("gradient " << i << " relative error " << e);
    CHECK(e > 1e-4);
    CHECK(e < 0.1);
  }
}

TEST_CASE("float8 linear: shapes cuBLAS cannot take in float8 run the exact layer") {
  const at::Tensor x = at::randn({3, 64}), w = at::randn({48, 64});  // 3 rows: not 16's
  CHECK(at::equal(ops::float8_linear(x, w, Float8Recipe::Tensorwise), ops::linear(x, w)));
}

#endif  // LibTorch 2.5+
