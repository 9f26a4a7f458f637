#include "ops/fused_ops.hpp"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>

#include "ops/cpu_gemm.hpp"
#include "ops/cross_entropy_kernel.hpp"
#include "ops/rms_norm_kernel.hpp"
#include "ops/swiglu_kernel.hpp"

namespace wireup::train::ops {

namespace {

// What the plain-C++ kernels take: fp32 in CPU memory (made contiguous first).
bool fp32_cpu(const at::Tensor& t) { return t.device().is_cpu() && t.scalar_type() == at::kFloat; }

// Rows per task of the kernels' parallel_for: big enough to beat the overhead.
constexpr std::int64_t kGrainRows = 64;

// RMSNorm with its backward written out: autograd's chain of the forward's
// small ops would make twice the passes over the activations.
struct RmsNorm : public torch::autograd::Function<RmsNorm> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                            const at::Tensor& w, double eps) {
    if (fp32_cpu(x) && fp32_cpu(w)) return forward_kernel(ctx, x.contiguous(), w.contiguous(), eps);
    at::Tensor x32 = x.to(at::kFloat);
    at::Tensor rstd = at::rsqrt((x32 * x32).mean(-1, true).add_(eps));
    ctx->save_for_backward({x, w, rstd});
    return (x32 * rstd).to(x.scalar_type()).mul_(w);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1], &rstd = saved[2];
    if (ctx->saved_data.count("kernel")) return backward_kernel(x, w, rstd, grads[0].contiguous());
    const at::Tensor dy = grads[0].to(at::kFloat);
    at::Tensor xhat = x.to(at::kFloat) * rstd;
    std::vector<std::int64_t> rows(static_cast<std::size_t>(x.dim() - 1));
    for (std::size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<std::int64_t>(i);
    at::Tensor dw = (dy * xhat).sum(rows).to(w.scalar_type());
    at::Tensor dxhat = dy * w;
    at::Tensor dot = (dxhat * xhat).mean(-1, true);
    at::Tensor dx = dxhat.sub_(xhat.mul_(dot)).mul_(rstd).to(x.scalar_type());
    return {dx, dw, at::Tensor()};
  }

  // fp32 on the CPU: rms_norm_kernel.cpp, rows split over the ATen threads.
  static at::Tensor forward_kernel(torch::autograd::AutogradContext* ctx, const at::Tensor& x,
                                   const at::Tensor& w, double eps) {
    const auto n = x.size(-1), rows = x.numel() / n;
    at::Tensor y = at::empty_like(x), rstd = at::empty({rows}, x.options());
    const float *px = x.data_ptr<float>(), *pw = w.data_ptr<float>();
    float *py = y.data_ptr<float>(), *pr = rstd.data_ptr<float>();
    at::parallel_for(0, rows, kGrainRows, [&](std::int64_t r0, std::int64_t r1) {
      rms_norm_forward(px + r0 * n, pw, py + r0 * n, pr + r0, static_cast<std::size_t>(r1 - r0),
                       static_cast<std::size_t>(n), static_cast<float>(eps));
    });
    ctx->save_for_backward({x, w, rstd});
    ctx->saved_data["kernel"] = true;
    return y;
  }

  static torch::autograd::variable_list backward_kernel(const at::Tensor& x, const at::Tensor& w,
                                                        const at::Tensor& rstd,
                                                        const at::Tensor& dy) {
    const auto n = x.size(-1), rows = x.numel() / n;
    at::Tensor dx = at::empty_like(x);
    // one dw row per chunk of rows, summed after: no sharing between threads
    const std::int64_t chunks =
        std::clamp<std::int64_t>(rows / kGrainRows, 1, at::get_num_threads());
    at::Tensor dw_acc = at::zeros({chunks, n}, x.options().dtype(at::kDouble));
    const float *px = x.data_ptr<float>(), *pw = w.data_ptr<float>();
    const float *pr = rstd.data_ptr<float>(), *pdy = dy.data_ptr<float>();
    float* pdx = dx.data_ptr<float>();
    double* pacc = dw_acc.data_ptr<double>();
    at::parallel_for(0, chunks, 1, [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t c = c0; c < c1; ++c) {
        const std::int64_t r0 = rows * c / chunks, r1 = rows * (c + 1) / chunks;
        rms_norm_backward(px + r0 * n, pw, pr + r0, pdy + r0 * n, pdx + r0 * n, pacc + c * n,
                          static_cast<std::size_t>(r1 - r0), static_cast<std::size_t>(n));
      }
    });
    return {dx, dw_acc.sum(0).to(at::kFloat), at::Tensor()};
  }
};

// silu(gate) * up from the fused W1/W3 output [..., 2I] (swiglu_kernel.cpp):
// one pass each way, the gradient written straight into one [..., 2I]
// tensor (no cat), and only the input kept for backward.
struct SwiGlu : public torch::autograd::Function<SwiGlu> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& gu_in) {
    const at::Tensor gu = gu_in.contiguous();
    const auto I = gu.size(-1) / 2, rows = gu.numel() / gu.size(-1);
    auto shape = gu.sizes().vec();
    shape.back() = I;
    at::Tensor y = at::empty(shape, gu.options());
    const float* pgu = gu.data_ptr<float>();
    float* py = y.data_ptr<float>();
    at::parallel_for(0, rows, kGrainRows, [&](std::int64_t r0, std::int64_t r1) {
      swiglu_forward(pgu + r0 * 2 * I, py + r0 * I, static_cast<std::size_t>(r1 - r0),
                     static_cast<std::size_t>(I));
    });
    ctx->save_for_backward({gu});
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor gu = ctx->get_saved_variables()[0];
    const at::Tensor dy = grads[0].contiguous();
    const auto I = gu.size(-1) / 2, rows = gu.numel() / gu.size(-1);
    at::Tensor dgu = at::empty_like(gu);
    const float *pgu = gu.data_ptr<float>(), *pdy = dy.data_ptr<float>();
    float* pdgu = dgu.data_ptr<float>();
    at::parallel_for(0, rows, kGrainRows, [&](std::int64_t r0, std::int64_t r1) {
      swiglu_backward(pgu + r0 * 2 * I, pdy + r0 * I, pdgu + r0 * 2 * I,
                      static_cast<std::size_t>(r1 - r0), static_cast<std::size_t>(I));
    });
    return {dgu};
  }
};

// Mean cross-entropy over rows of fp32 logits [N, V], computed in row chunks
// that stay in cache. Its backward turns the logits' own memory into the
// gradient (softmax minus one-hot): no log-softmax copy, no zeroed one-hot.
// Token ids were checked against the vocabulary on the host (the model, before the step).
// Each row's logsumexp through ATen, in chunks of rows: 64 on the CPU; on a
// GPU, chunks only bound the temporary (4096 x V fp32), since 64-row chunks
// would be thousands of tiny kernel launches per step.
at::Tensor chunked_logsumexp(const at::Tensor& logits) {
  const auto N = logits.size(0);
  const std::int64_t rows = logits.is_cpu() ? 64 : 4096;
  at::Tensor lse = at::empty({N}, logits.options());
  for (std::int64_t r = 0; r < N; r += rows) {
    const auto n = std::min(rows, N - r);
    lse.narrow(0, r, n).copy_(at::logsumexp(logits.narrow(0, r, n), {1}));
  }
  return lse;
}

struct CrossEntropy : public torch::autograd::Function<CrossEntropy> {
  static constexpr std::int64_t kRows = 64;

  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits,
                            const at::Tensor& targets) {
    if (fp32_cpu(logits) && logits.is_contiguous()) return forward_kernel(ctx, logits, targets);
    const at::Tensor lse = chunked_logsumexp(logits);
    at::Tensor picked = logits.gather(1, targets.unsqueeze(1)).squeeze(1);
    ctx->save_for_backward({logits, targets, lse});
    return (lse - picked).mean();
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    at::Tensor g = saved[0];  // the logits: nothing else reads them after this
    const at::Tensor& targets = saved[1];
    const at::Tensor& lse = saved[2];
    const auto N = g.size(0);
    if (ctx->saved_data.count("kernel")) {
      const float scale = grads[0].item<float>() / static_cast<float>(N);
      const auto V = g.size(1);
      float* pg = g.data_ptr<float>();
      const std::int64_t* pt = targets.data_ptr<std::int64_t>();
      const float* pl = lse.data_ptr<float>();
      at::parallel_for(0, N, kGrainRows, [&](std::int64_t r0, std::int64_t r1) {
        cross_entropy_backward(pg + r0 * V, pt + r0, pl + r0, scale,
                               static_cast<std::size_t>(r1 - r0), static_cast<std::size_t>(V));
      });
      return {g, at::Tensor()};
    }
    const at::Tensor scale = grads[0] / static_cast<double>(N);
    if (g.is_cpu()) {
      for (std::int64_t r = 0; r < N; r += kRows) {
        const auto n = std::min(kRows, N - r);
        g.narrow(0, r, n).sub_(lse.narrow(0, r, n).unsqueeze(1)).exp_();
      }
    } else {
      g.sub_(lse.unsqueeze(1)).exp_();  // in place: two kernels, no temporary
    }
    g.scatter_add_(1, targets.unsqueeze(1), at::full({N, 1}, -1.0, g.options()));
    g.mul_(scale);
    return {g, at::Tensor()};
  }

  // fp32 on the CPU (cross_entropy_kernel.cpp): lse per row in two passes
  // over the row, the loss summed in double; backward one pass, scale folded
  // in.
  static at::Tensor forward_kernel(torch::autograd::AutogradContext* ctx, const at::Tensor& logits,
                                   const at::Tensor& targets_in) {
    const auto N = logits.size(0), V = logits.size(1);
    const at::Tensor targets = targets_in.to(at::kLong).contiguous();
    at::Tensor lse = at::empty({N}, logits.options());
    const std::int64_t chunks = std::clamp<std::int64_t>(N / kGrainRows, 1, at::get_num_threads());
    std::vector<double> partial(static_cast<std::size_t>(chunks), 0.0);
    const float* pl = logits.data_ptr<float>();
    const std::int64_t* pt = targets.data_ptr<std::int64_t>();
    float* plse = lse.data_ptr<float>();
    at::parallel_for(0, chunks, 1, [&](std::int64_t c0, std::int64_t c1) {
      for (std::int64_t c = c0; c < c1; ++c) {
        const std::int64_t r0 = N * c / chunks, r1 = N * (c + 1) / chunks;
        partial[static_cast<std::size_t>(c)] =
            cross_entropy_forward(pl + r0 * V, pt + r0, plse + r0,
                                  static_cast<std::size_t>(r1 - r0), static_cast<std::size_t>(V));
      }
    });
    double total = 0;
    for (double p : partial) total += p;
    ctx->save_for_backward({logits, targets, lse});
    ctx->saved_data["kernel"] = true;
    return at::scalar_tensor(total / static_cast<double>(N), logits.options());
  }
};

// Each row's loss, lse[r] - logits[r, t_r]; backward scales row r's
// (softmax - one-hot) by its own incoming gradient. fp32 on the CPU: the
// kernels of cross_entropy_kernel.cpp, one row at a time in backward.
struct CrossEntropyRows : public torch::autograd::Function<CrossEntropyRows> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& logits,
                            const at::Tensor& targets_in) {
    const auto N = logits.size(0), V = logits.size(1);
    const at::Tensor targets = targets_in.to(at::kLong).contiguous();
    at::Tensor lse;
    if (fp32_cpu(logits) && logits.is_contiguous()) {
      lse = at::empty({N}, logits.options());
      const float* pl = logits.data_ptr<float>();
      const std::int64_t* pt = targets.data_ptr<std::int64_t>();
      float* plse = lse.data_ptr<float>();
      at::parallel_for(0, N, kGrainRows, [&](std::int64_t r0, std::int64_t r1) {
        cross_entropy_forward(pl + r0 * V, pt + r0, plse + r0, static_cast<std::size_t>(r1 - r0),
                              static_cast<std::size_t>(V));
      });
      ctx->saved_data["kernel"] = true;
    } else {
      lse = chunked_logsumexp(logits);
    }
    ctx->save_for_backward({logits, targets, lse});
    return lse - logits.gather(1, targets.unsqueeze(1)).squeeze(1);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    at::Tensor g = saved[0];  // the logits: nothing else reads them after this
    const at::Tensor& targets = saved[1];
    const at::Tensor& lse = saved[2];
    const auto N = g.size(0), V = g.size(1);
    const at::Tensor row_grad = grads[0].to(at::kFloat).contiguous();
    if (ctx->saved_data.count("kernel")) {
      float* pg = g.data_ptr<float>();
      const std::int64_t* pt = targets.data_ptr<std::int64_t>();
      const float *pl = lse.data_ptr<float>(), *ps = row_grad.data_ptr<float>();
      at::parallel_for(0, N, kGrainRows, [&](std::int64_t r0, std::int64_t r1) {
        for (std::int64_t r = r0; r < r1; ++r)
          cross_entropy_backward(pg + r * V, pt + r, pl + r, ps[r], 1, static_cast<std::size_t>(V));
      });
      return {g, at::Tensor()};
    }
    g.sub_(lse.unsqueeze(1)).exp_();
    g.scatter_add_(1, targets.unsqueeze(1), at::full({N, 1}, -1.0, g.options()));
    g.mul_(row_grad.to(g.scalar_type()).unsqueeze(1));
    return {g, at::Tensor()};
  }
};

// y = x W^T through cpu_sgemm (fp32 CPU, oneDNN built in): the three GEMMs
// ATen's linear and MmBackward would make, on the faster library. x [..., in]
// and W [out, in] are kept for backward, as ATen keeps them.
struct Linear : public torch::autograd::Function<Linear> {
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x_in,
                            const at::Tensor& w_in) {
    const at::Tensor x = x_in.contiguous(), w = w_in.contiguous();
    const auto in = w.size(1), out = w.size(0), rows = x.numel() / in;
    auto shape = x.sizes().vec();
    shape.back() = out;
    at::Tensor y = at::empty(shape, x.options());
    cpu_sgemm(false, true, rows, out, in, 1.0f, x.data_ptr<float>(), in, w.data_ptr<float>(), in,
              0.0f, y.data_ptr<float>(), out);
    ctx->save_for_backward({x, w});
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &x = saved[0], &w = saved[1];
    const at::Tensor dy = grads[0].contiguous();
    const auto in = w.size(1), out = w.size(0), rows = x.numel() / in;
    at::Tensor dx, dw;
    if (ctx->needs_input_grad(0)) {  // dX = dY W
      dx = at::empty_like(x);
      cpu_sgemm(false, false, rows, in, out, 1.0f, dy.data_ptr<float>(), out, w.data_ptr<float>(),
                in, 0.0f, dx.data_ptr<float>(), in);
    }
    if (ctx->needs_input_grad(1)) {  // dW = dY^T X
      dw = at::empty_like(w);
      cpu_sgemm(true, false, out, in, rows, 1.0f, dy.data_ptr<float>(), out, x.data_ptr<float>(),
                in, 0.0f, dw.data_ptr<float>(), in);
    }
    return {dx, dw};
  }
};

}  // namespace

at::Tensor rms_norm(const at::Tensor& x, const at::Tensor& w, double eps) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 8)
  // LibTorch's fused CUDA RMSNorm (one kernel each way, fp32 inside).
  if (x.is_cuda()) return at::rms_norm(x, {x.size(-1)}, w, eps);
#endif
  return RmsNorm::apply(x, w, eps);
}

at::Tensor linear(const at::Tensor& x, const at::Tensor& w) {
  if (cpu_sgemm_available() && fp32_cpu(x) && fp32_cpu(w) && w.dim() == 2 &&
      x.size(-1) == w.size(1))
    return Linear::apply(x, w);
  return at::linear(x, w);  // GPUs (cuBLAS), other dtypes, no oneDNN, bad shapes' own error
}

at::Tensor swiglu(const at::Tensor& gate_up) {
  if (fp32_cpu(gate_up)) return SwiGlu::apply(gate_up);
  const auto halves = gate_up.chunk(2, -1);  // autograd's own ops elsewhere (bf16, GPU)
  return at::silu(halves[0]) * halves[1];
}

at::Tensor cross_entropy(const at::Tensor& logits, const at::Tensor& targets) {
  return CrossEntropy::apply(logits, targets);
}

at::Tensor cross_entropy_rows(const at::Tensor& logits, const at::Tensor& targets) {
  return CrossEntropyRows::apply(logits, targets);
}

}  // namespace wireup::train::ops
