#include "model/float8_linear.hpp"

#include <ATen/ATen.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/version.h>

#include <cmath>

#include "model/llama_model.hpp"

#define WIREUP_TORCH_FLOAT8 \
  (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5))

namespace wireup::train::llama {

bool float8_built() { return WIREUP_TORCH_FLOAT8; }

#if WIREUP_TORCH_FLOAT8

namespace {

constexpr at::ScalarType kE4M3 = at::kFloat8_e4m3fn;
constexpr at::ScalarType kE5M2 = at::kFloat8_e5m2;

float format_max(at::ScalarType t) { return t == kE4M3 ? kFloat8E4M3Max : kFloat8E5M2Max; }

// The GEMMs of one linear layer; `grad` is the gradients' float8 format.
struct Float8Linear : public torch::autograd::Function<Float8Linear> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& w, bool rowwise) {
    const auto in = w.size(1), out = w.size(0);
    const at::Tensor x2 = x.reshape({-1, in});
    at::Tensor y = float8_gemm(x2, w, kE4M3, kE4M3, rowwise, /*fast_accum=*/true);
    ctx->save_for_backward({x, w});
    ctx->saved_data["rowwise"] = rowwise;
    auto shape = x.sizes().vec();
    shape.back() = out;
    return y.view(shape);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1];
    const bool rowwise = ctx->saved_data["rowwise"].toBool();
    const at::ScalarType grad = rowwise ? kE4M3 : kE5M2;
    const auto in = w.size(1), out = w.size(0);
    const at::Tensor dy = grads[0].reshape({-1, out}).contiguous();
    at::Tensor dx, dw;
    if (ctx->needs_input_grad(0))  // dX = dY W: b = W^T as [in, out] rows
      dx = float8_gemm(dy, w.t().contiguous(), grad, kE4M3, rowwise, false).view(x.sizes());
    if (ctx->needs_input_grad(1))  // dW = dY^T X: [out, rows] x [in, rows]^T
      dw = float8_gemm(dy.t().contiguous(), x.reshape({-1, in}).t().contiguous(), grad, kE4M3,
                       rowwise, false)
               .to(w.scalar_type());
    return {dx, dw, at::Tensor()};
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
  at::Tensor values = (t.to(at::kFloat) * scale).clamp_(-fmax, fmax).to(fp8);
  return {values, scale.reciprocal()};
}

at::Tensor float8_gemm(const at::Tensor& a, const at::Tensor& b, at::ScalarType ta,
                       at::ScalarType tb, bool rowwise, bool fast_accum) {
  const Float8Operand qa = quantize_float8(a, ta, rowwise);
  const Float8Operand qb = quantize_float8(b, tb, rowwise);
  // _scaled_mm's second operand is column-major [K, N]: b's rows transposed.
  const at::Tensor sb = rowwise ? qb.inv_scale.t() : qb.inv_scale;  // [1, N] row-wise
  if (a.is_cuda())
    return at::_scaled_mm(qa.values, qb.values.t(), qa.inv_scale, sb, std::nullopt, std::nullopt,
                          a.scalar_type(), fast_accum);
  const at::Tensor pa = qa.values.to(at::kFloat) * qa.inv_scale;
  const at::Tensor pb = qb.values.to(at::kFloat).t() * sb;
  return at::mm(pa, pb).to(a.scalar_type());
}

at::Tensor float8_linear(const at::Tensor& x, const at::Tensor& w, Float8Recipe r) {
  const auto in = w.size(1), out = w.size(0);
  const auto rows = x.numel() / std::max<std::int64_t>(in, 1);
  if (r == Float8Recipe::Off || in % 16 != 0 || out % 16 != 0 || rows % 16 != 0)
    return llama::linear(x, w);
  return Float8Linear::apply(x, w, r == Float8Recipe::Rowwise);
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
  if (r == Float8Recipe::Off) return llama::linear(x, w);
  throw std::runtime_error("float8 needs LibTorch 2.5 or newer");
}
std::string float8_unavailable(at::Device, Float8Recipe r) {
  if (r == Float8Recipe::Off) return "";
  return "this LibTorch (" TORCH_VERSION
         ") has no scaled matmul: float8 needs LibTorch 2.5 or newer";
}

#endif

}  // namespace wireup::train::llama
