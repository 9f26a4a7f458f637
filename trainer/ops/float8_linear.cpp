#include "ops/float8_linear.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/version.h>

#include <cmath>

#include "ops/fused_ops.hpp"

#define WIREUP_TORCH_FLOAT8 \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5))

namespace wireup::train::ops {

bool float8_built() { return WIREUP_TORCH_FLOAT8; }

#if WIREUP_TORCH_FLOAT8

namespace {

constexpr at::ScalarType kE4M3 = at::kFloat8_e4m3fn;
constexpr at::ScalarType kE5M2 = at::kFloat8_e5m2;

float format_max(at::ScalarType t) { return t == kE4M3 ? kFloat8E4M3Max : kFloat8E5M2Max; }

// a [M, K] times b [N, K] transposed from quantized operands (b's rows along
// K); the result in `out`. CUDA: _scaled_mm, whose second operand is
// column-major [K, N]: b's rows, transposed as a view. CPU: fp32.
at::Tensor scaled_gemm(const Float8Operand& a, const Float8Operand& b, bool rowwise,
                       at::ScalarType out, bool fast_accum) {
  const at::Tensor sb = rowwise ? b.inv_scale.t() : b.inv_scale;  // [1, N] row-wise
  if (a.values.is_cuda())
    return at::_scaled_mm(a.values, b.values.t(), a.inv_scale, sb, std::nullopt, std::nullopt, out,
                          fast_accum);
  const at::Tensor pa = a.values.to(at::kFloat) * a.inv_scale;
  const at::Tensor pb = b.values.to(at::kFloat).t() * sb;
  return at::mm(pa, pb).to(out);
}

// An operand's float8 values transposed (a copy of one byte per element),
// its scale unchanged: tensor-wise scales do not depend on the layout.
Float8Operand transposed(const Float8Operand& q) {
  return {q.values.t().contiguous(), q.inv_scale};
}

// Tensor-wise: each operand is cast once. Forward keeps X and W in float8
// for backward (half the bytes of bf16), and the backward GEMMs take their
// transposes: dX = dY W and dW = dY^T X with dY cast once to e5m2.
struct TensorwiseFloat8Linear : public torch::autograd::Function<TensorwiseFloat8Linear> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& w) {
    const auto in = w.size(1), out = w.size(0);
    const Float8Operand qx = quantize_float8(x.reshape({-1, in}), kE4M3, false);
    const Float8Operand qw = quantize_float8(w, kE4M3, false);
    at::Tensor y = scaled_gemm(qx, qw, false, x.scalar_type(), /*fast_accum=*/true);
    ctx->save_for_backward({qx.values, qx.inv_scale, qw.values, qw.inv_scale});
    ctx->saved_data["x_shape"] = x.sizes().vec();
    ctx->saved_data["dtypes"] = std::vector<std::int64_t>{
        static_cast<std::int64_t>(x.scalar_type()), static_cast<std::int64_t>(w.scalar_type())};
    auto shape = x.sizes().vec();
    shape.back() = out;
    return y.view(shape);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const Float8Operand qx{saved[0], saved[1]}, qw{saved[2], saved[3]};
    const auto dtypes = ctx->saved_data["dtypes"].toIntVector();
    const auto x_dtype = static_cast<at::ScalarType>(dtypes[0]);
    const auto w_dtype = static_cast<at::ScalarType>(dtypes[1]);
    const auto out = qw.values.size(0);
    const Float8Operand qdy = quantize_float8(grads[0].reshape({-1, out}), kE5M2, false);
    at::Tensor dx, dw;
    if (ctx->needs_input_grad(0))  // dX = dY W: W's rows along `out` are W^T's
      dx = scaled_gemm(qdy, transposed(qw), false, x_dtype, false)
               .view(ctx->saved_data["x_shape"].toIntVector());
    if (ctx->needs_input_grad(1))  // dW = dY^T X: [out, rows] x ([in, rows])^T
      dw = scaled_gemm(transposed(qdy), transposed(qx), false, w_dtype, false);
    return {dx, dw};
  }
};

// Row-wise: each GEMM scales its operands' rows along its own reduced
// dimension, so the backward GEMMs cast X, W and dY again from bf16 (kept
// for backward, as the bf16 layer keeps them), e4m3 throughout.
struct RowwiseFloat8Linear : public torch::autograd::Function<RowwiseFloat8Linear> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& w) {
    const auto in = w.size(1), out = w.size(0);
    at::Tensor y = float8_gemm(x.reshape({-1, in}), w, kE4M3, kE4M3, true, /*fast_accum=*/true);
    ctx->save_for_backward({x, w});
    auto shape = x.sizes().vec();
    shape.back() = out;
    return y.view(shape);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1];
    const auto in = w.size(1), out = w.size(0);
    const at::Tensor dy = grads[0].reshape({-1, out}).contiguous();
    at::Tensor dx, dw;
    if (ctx->needs_input_grad(0))  // dX = dY W: b = W^T as [in, out] rows
      dx = float8_gemm(dy, w.t().contiguous(), kE4M3, kE4M3, true, false).view(x.sizes());
    if (ctx->needs_input_grad(1))  // dW = dY^T X: [out, rows] x [in, rows]^T
      dw = float8_gemm(dy.t().contiguous(), x.reshape({-1, in}).t().contiguous(), kE4M3, kE4M3,
                       true, false)
               .to(w.scalar_type());
    return {dx, dw};
  }
};

}  // namespace

Float8Operand quantize_float8(const at::Tensor& t, at::ScalarType fp8, bool rowwise) {
  const float fmax = format_max(fp8);
  // The rule of float8_scale (float8_recipe.cpp), on the device: no sync.
  // amax as the infinity norm: one pass over t, no |t| temporary.
  const at::Tensor amax = rowwise ? at::linalg_vector_norm(t, INFINITY, {1}, true, at::kFloat)
                                  : at::linalg_vector_norm(t, INFINITY, {}, false, at::kFloat);
  const at::Tensor scale = at::reciprocal(amax.clamp_min(1e-12f)).mul_(fmax);
  // |t * scale| <= fmax by construction (rounding reaches fmax at most), so
  // no clamp: two passes, the product in t's dtype (a 0-dim fp32 scale does
  // not widen bf16; a row-wise [rows, 1] one does).
  at::Tensor values = (t * scale).to(fp8);
  return {values, scale.reciprocal()};
}

at::Tensor float8_gemm(const at::Tensor& a, const at::Tensor& b, at::ScalarType ta,
                       at::ScalarType tb, bool rowwise, bool fast_accum) {
  return scaled_gemm(quantize_float8(a, ta, rowwise), quantize_float8(b, tb, rowwise), rowwise,
                     a.scalar_type(), fast_accum);
}

at::Tensor float8_linear(const at::Tensor& x, const at::Tensor& w, Float8Recipe r) {
  const auto in = w.size(1), out = w.size(0);
  const auto rows = x.numel() / std::max<std::int64_t>(in, 1);
  if (r == Float8Recipe::Off || in % 16 != 0 || out % 16 != 0 || rows % 16 != 0)
    return ops::linear(x, w);
  if (r == Float8Recipe::Rowwise) return RowwiseFloat8Linear::apply(x, w);
  return TensorwiseFloat8Linear::apply(x, w);
}

std::string float8_unavailable(at::Device device, Float8Recipe r) {
  if (r == Float8Recipe::Off) return "";
  if (!device.is_cuda())
    return "float8 GEMMs need --device cuda (a GPU of compute capability 8.9+)";
  try {
    const auto opts = at::TensorOptions().dtype(at::kBFloat16).device(device);
    const at::Tensor a = at::randn({16, 16}, opts), b = at::randn({16, 16}, opts);
    const bool rowwise = r == Float8Recipe::Rowwise;
    (void)float8_gemm(a, b, kE4M3, kE4M3, rowwise, true).sum().item<float>();
    if (!rowwise) (void)float8_gemm(a, b, kE5M2, kE4M3, false, false).sum().item<float>();
  } catch (const std::exception& e) {
    const std::string what = e.what();
    return "this GPU or LibTorch has no float8 GEMM (" + what.substr(0, what.find('\n')) + ")";
  }
  return "";
}

#else  // LibTorch older than 2.5: no scaled matmul

Float8Operand quantize_float8(const at::Tensor&, at::ScalarType, bool) {
  throw std::runtime_error("float8 needs LibTorch 2.5 or newer");
}
at::Tensor float8_gemm(const at::Tensor&, const at::Tensor&, at::ScalarType, at::ScalarType, bool,
                       bool) {
  throw std::runtime_error("float8 needs LibTorch 2.5 or newer");
}
at::Tensor float8_linear(const at::Tensor& x, const at::Tensor& w, Float8Recipe r) {
  if (r == Float8Recipe::Off) return ops::linear(x, w);
  throw std::runtime_error("float8 needs LibTorch 2.5 or newer");
}
std::string float8_unavailable(at::Device, Float8Recipe r) {
  if (r == Float8Recipe::Off) return "";
  return "this LibTorch (" TORCH_VERSION
         ") has no scaled matmul: float8 needs LibTorch 2.5 or newer";
}

#endif

}  // namespace wireup::train::ops
