// llama_math's fused Functions (rms_norm, linear, swiglu, cross_entropy) against the
// plain ATen composition they replace: values and gradients, fp32 (the
// plain-C++ kernels) and double (the ATen path), odd sizes, non-contiguous
// inputs and an upstream gradient other than 1.
#include <ATen/ATen.h>
#include <torch/csrc/autograd/autograd.h>

#include <catch2/catch.hpp>

#include "models/family_registry.hpp"
#include "models/llama/llama_model.hpp"
#include "ops/cpu_gemm.hpp"
#include "ops/fused_ops.hpp"

using namespace wireup::train;

namespace {

at::Tensor leaf(const at::Tensor& t) { return t.detach().clone().requires_grad_(true); }

// fp32 rounding (the ATen path of rms_norm computes in fp32 even for double).
// The absolute part scales with the tensor: a gradient summed over rows can
// cancel to near zero while its terms' rounding does not, and the inputs
// themselves differ between CPUs (randn's vectorized fill). Seen: errors up to
// 2.2e-7 of the largest element, against 1e-5 here; a wrong formula is off by
// a sizeable fraction of it.
bool close(const at::Tensor& a, const at::Tensor& b) {
  const double scale = b.abs().max().item<double>();
  return at::allclose(a, b, 1e-5, 1e-5 * scale);
}

// Non-contiguous on request: the same values, read through a transpose.
at::Tensor make(std::vector<std::int64_t> shape, at::ScalarType dt, bool contiguous) {
  if (contiguous) return at::randn(shape, at::TensorOptions(dt));
  std::swap(shape[0], shape[1]);
  return at::randn(shape, at::TensorOptions(dt)).transpose(0, 1);
}

}  // namespace

TEST_CASE("fused rms_norm matches ATen's composition, values and gradients") {
  const auto dt = GENERATE(at::kFloat, at::kDouble);
  const bool contiguous = GENERATE(true, false);
  INFO("dtype " << dt << " contiguous " << contiguous);
  at::Tensor x0 = make({3, 5, 67}, dt, contiguous), w0 = at::randn({67}, at::TensorOptions(dt));
  at::Tensor x = leaf(x0), w = leaf(w0), rx = leaf(x0), rw = leaf(w0);
  at::Tensor y = ops::rms_norm(x, w, 1e-5);
  at::Tensor ry = rx * at::rsqrt(rx.pow(2).mean(-1, true) + 1e-5) * rw;
  CHECK(close(y, ry));
  at::Tensor dy = at::randn(y.sizes(), y.options());
  auto got = torch::autograd::grad({y}, {x, w}, {dy});
  auto want = torch::autograd::grad({ry}, {rx, rw}, {dy});
  CHECK(close(got[0], want[0]));
  CHECK(close(got[1], want[1]));
}

TEST_CASE("linear matches at::linear, values and gradients, either input leaf or not") {
  // fp32: oneDNN's sgemm where built in (cpu_gemm.hpp); double: ATen itself
  const auto dt = GENERATE(at::kFloat, at::kDouble);
  const bool contiguous = GENERATE(true, false);
  const bool x_needs_grad = GENERATE(true, false);
  INFO("dtype " << dt << " contiguous " << contiguous << " x needs grad " << x_needs_grad
                << " gemm " << cpu_sgemm_name());
  at::Tensor x0 = make({6, 5, 67}, dt, contiguous), w0 = at::randn({43, 67}, at::TensorOptions(dt));
  at::Tensor x = x0.detach().clone().requires_grad_(x_needs_grad), w = leaf(w0);
  at::Tensor rx = x0.detach().clone().requires_grad_(x_needs_grad), rw = leaf(w0);
  if (!contiguous) {  // the clone made them contiguous again: read through a transpose
    x = x.detach().transpose(0, 1).contiguous().transpose(0, 1).requires_grad_(x_needs_grad);
    rx = x.detach().clone().requires_grad_(x_needs_grad);
    CHECK_FALSE(x.is_contiguous());
  }
  at::Tensor y = ops::linear(x, w);
  at::Tensor ry = at::linear(rx, rw);
  CHECK(y.sizes() == ry.sizes());
  CHECK(close(y, ry));
  at::Tensor dy = make({6, 5, 43}, dt, contiguous);
  if (x_needs_grad) {
    auto got = torch::autograd::grad({y}, {x, w}, {dy});
    auto want = torch::autograd::grad({ry}, {rx, rw}, {dy});
    CHECK(close(got[0], want[0]));
    CHECK(close(got[1], want[1]));
  } else {
    CHECK(close(torch::autograd::grad({y}, {w}, {dy})[0],
                torch::autograd::grad({ry}, {rw}, {dy})[0]));
  }
}

TEST_CASE("fused swiglu matches silu(gate) * up, values and gradients") {
  const auto dt = GENERATE(at::kFloat, at::kDouble);
  const bool contiguous = GENERATE(true, false);
  INFO("dtype " << dt << " contiguous " << contiguous);
  at::Tensor gu0 = make({4, 3, 2 * 37}, dt, contiguous).mul(3);
  at::Tensor gu = leaf(gu0), rgu = leaf(gu0);
  at::Tensor y = ops::swiglu(gu);
  const auto halves = rgu.split(37, -1);
  at::Tensor ry = at::silu(halves[0]) * halves[1];
  CHECK(y.sizes() == ry.sizes());
  CHECK(close(y, ry));
  at::Tensor dy = make({4, 3, 37}, dt, contiguous);
  CHECK(close(torch::autograd::grad({y}, {gu}, {dy})[0],
              torch::autograd::grad({ry}, {rgu}, {dy})[0]));
}

TEST_CASE("fused cross_entropy matches at::cross_entropy_loss, upstream gradient not 1") {
  const auto dt = GENERATE(at::kFloat, at::kDouble);
  INFO("dtype " << dt);
  const std::int64_t N = 133, V = 301;
  at::Tensor l0 = at::randn({N, V}, at::TensorOptions(dt)).mul(4);
  at::Tensor targets = at::randint(V, {N}, at::kLong);
  at::Tensor l = leaf(l0), rl = leaf(l0);
  // the Function turns its saved logits into the gradient: give it its own copy
  at::Tensor loss = ops::cross_entropy(l * 1, targets);
  at::Tensor rloss = at::cross_entropy_loss(rl, targets);
  CHECK(loss.item<double>() == Approx(rloss.item<double>()).epsilon(1e-6));
  at::Tensor up = at::full({}, 0.3, l0.options());
  CHECK(close(torch::autograd::grad({loss}, {l}, {up})[0],
              torch::autograd::grad({rloss}, {rl}, {up})[0]));
}

TEST_CASE("apply_rope rotates Meta's pairs in fp32, fp64 and bf16, values and gradients") {
  // Reduced types go through fp32 and back (the GPU's bf16 path); the
  // reference rotates the real pairs in double.
  ModelConfig m = preset("tiny");
  const std::int64_t T = 7, h = 3, d = m.head_dim();
  const ops::Rope rope = llama::make_rope(m, T);
  at::Tensor x0 = at::randn({2, T, h, d}, at::kDouble);
  at::Tensor c = rope.cos.to(at::kDouble).view({1, T, 1, d / 2});
  at::Tensor s = rope.sin.to(at::kDouble).view({1, T, 1, d / 2});
  const auto reference = [&](const at::Tensor& x) {
    at::Tensor pairs = x.view({2, T, h, d / 2, 2});
    at::Tensor re = pairs.select(-1, 0), im = pairs.select(-1, 1);
    return at::stack({re * c - im * s, re * s + im * c}, -1).view({2, T, h, d});
  };
  const auto dt = GENERATE(at::kFloat, at::kDouble, at::kBFloat16);
  INFO("dtype " << dt);
  const double tol = dt == at::kBFloat16 ? 2e-2 : (dt == at::kFloat ? 1e-5 : 1e-6);
  at::Tensor x = leaf(x0.to(dt)), rx = leaf(x0.to(dt).to(at::kDouble));
  at::Tensor y = ops::apply_rope(x, rope);
  at::Tensor ry = reference(rx);
  CHECK(y.scalar_type() == dt);
  CHECK(at::allclose(y.to(at::kDouble), ry, tol, tol));
  at::Tensor dy = at::randn(y.sizes(), at::kDouble);
  at::Tensor got = torch::autograd::grad({y}, {x}, {dy.to(dt)})[0];
  at::Tensor want = torch::autograd::grad({ry}, {rx}, {dy})[0];
  CHECK(got.scalar_type() == dt);
  CHECK(at::allclose(got.to(at::kDouble), want, tol, tol));
}
