#include "ops/attention.hpp"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <c10/core/InferenceMode.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/version.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

namespace wireup::train::ops {

#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
#define WIREUP_SDPA_GQA 1  // scaled_dot_product_attention with enable_gqa
// at::_flash_attention_forward(q, k, v, cum_seq_q, cum_seq_k, max_q, max_k,
// dropout_p, is_causal, return_debug_mask, ...): q [total, nh, hd], k and v
// [total, kv, hd], nh a multiple of kv; the same positional arguments from
// 2.5 to 2.8+ (later ones added with defaults), autograd's backward
// (derivatives.yaml: _flash_attention_backward) for q, k and v.
#define WIREUP_VARLEN_FLASH 1
#endif

namespace {

// The blocks of causal_attention as one autograd node. Autograd on the
// per-block narrow() of Q, K and V would zero-pad each block's gradient to
// full size and sum the pads (K and V: a full-size zero, copy and add per
// block); here each block's gradient GEMMs write into slices of dQ or
// accumulate into prefixes of dK and dV, and the outputs go straight into one
// tensor (no cat). qg [BK, T*g, hd] (g query rows per token), kg and vg
// [BK, T, hd]. mask additive: [T, T] (causal, the same for every row: added
// to each block's diagonal square only, the keys before the block being all
// visible) or [B, T, T] (document masking, one per row: added to the whole
// rectangle of scores a block computes).
struct BlockedAttention : public torch::autograd::Function<BlockedAttention> {
  struct Block {
    std::int64_t t1, row0, rows;  // keys [0, t1); query rows [row0, row0 + rows)
  };

  // Blocks of 32 tokens or more, at most 8: n blocks compute (n + 1) / 2n of
  // the full scores. At T = 256 (the bench's `small`) eight blocks of 32 ran
  // ~1% faster than four of 64 (smaller GEMMs, but fewer of their FLOPs),
  // two of 128 ~1.3% slower.
  static std::vector<Block> blocks_of(std::int64_t T, std::int64_t g) {
    const std::int64_t n = std::clamp<std::int64_t>(T / 32, 1, 8);
    std::vector<Block> out;
    for (std::int64_t b = 0; b < n; ++b) {
      const std::int64_t t0 = T * b / n, t1 = T * (b + 1) / n;  // tokens [t0, t1)
      out.push_back({t1, t0 * g, (t1 - t0) * g});
    }
    return out;
  }

  static void add_mask(at::Tensor& scores, const at::Tensor& mask, const Block& b, std::int64_t g) {
    const std::int64_t t0 = b.row0 / g, tb = b.t1 - t0;
    if (mask.dim() == 2) {
      scores.narrow(2, t0, tb)
          .view({-1, tb, g, tb})
          .add_(mask.narrow(0, t0, tb).narrow(1, t0, tb).unsqueeze(1));
      return;
    }
    const auto B = mask.size(0);  // scores [B*kv, tb*g, t1]: rows token-major
    scores.view({B, -1, tb, g, b.t1})
        .add_(mask.narrow(1, t0, tb).narrow(2, 0, b.t1).view({B, 1, tb, 1, b.t1}));
  }

  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& qg,
                            const at::Tensor& kg, const at::Tensor& vg, const at::Tensor& mask,
                            double scale) {
    const auto T = kg.size(1), g = qg.size(1) / T;
    at::Tensor out = at::empty_like(qg);
    std::vector<at::Tensor> saved = {qg, kg, vg};
    for (const Block& b : blocks_of(T, g)) {
      at::Tensor scores = at::empty({qg.size(0), b.rows, b.t1}, qg.options());
      at::baddbmm_out(scores, scores, qg.narrow(1, b.row0, b.rows),
                      kg.narrow(1, 0, b.t1).transpose(1, 2), 0.0, scale);  // beta 0: not read
      add_mask(scores, mask, b, g);
      at::Tensor p = at::_softmax(scores, -1, false);
      at::Tensor o = out.narrow(1, b.row0, b.rows);
      at::bmm_out(o, p, vg.narrow(1, 0, b.t1));
      saved.push_back(p);
    }
    ctx->save_for_backward(saved);
    ctx->saved_data["scale"] = scale;
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor &qg = saved[0], &kg = saved[1], &vg = saved[2];
    const double scale = ctx->saved_data["scale"].toDouble();
    const at::Tensor dout = grads[0].contiguous();
    const auto T = kg.size(1), g = qg.size(1) / T;
    at::Tensor dq = at::empty_like(qg), dk = at::empty_like(kg), dv = at::empty_like(vg);
    // Last block first: it sees every key, so its GEMMs (beta 0) fill dK and
    // dV whole and the others add to prefixes; nothing is zeroed.
    const auto blocks = blocks_of(T, g);
    for (std::size_t i = blocks.size(); i-- > 0;) {
      const Block& b = blocks[i];
      const double beta = i + 1 == blocks.size() ? 0.0 : 1.0;
      const at::Tensor& p = saved[3 + i];  // [BK, rows, t1]
      const at::Tensor dout_b = dout.narrow(1, b.row0, b.rows);
      const at::Tensor k = kg.narrow(1, 0, b.t1), v = vg.narrow(1, 0, b.t1);
      dv.narrow(1, 0, b.t1).baddbmm_(p.transpose(1, 2), dout_b, beta, 1.0);
      at::Tensor ds =
          at::_softmax_backward_data(at::bmm(dout_b, v.transpose(1, 2)), p, -1, p.scalar_type());
      dq.narrow(1, b.row0, b.rows).baddbmm_(ds, k, 0.0, scale);  // beta 0: dq is not read
      dk.narrow(1, 0, b.t1).baddbmm_(ds.transpose(1, 2), qg.narrow(1, b.row0, b.rows), beta, scale);
    }
    return {dq, dk, dv, at::Tensor(), at::Tensor()};
  }
};

// q [B,T,nh,hd], k and v [B,T,kv,hd] through BlockedAttention -> [B,T,nh*hd].
// Per KV head, the rows of its nh/kv query heads are stacked (token-major)
// into one taller matrix, so K and V are never copied per query head and the
// GEMMs are taller.
at::Tensor blocked_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                             const at::Tensor& mask) {
  const auto B = q.size(0), T = q.size(1), nh = q.size(2), hd = q.size(3), kv = k.size(2);
  const auto g = nh / kv;
  at::Tensor qg = q.reshape({B, T, kv, g, hd}).transpose(1, 2).reshape({B * kv, T * g, hd});
  at::Tensor kg = k.transpose(1, 2).reshape({B * kv, T, hd});
  at::Tensor vg = v.transpose(1, 2).reshape({B * kv, T, hd});
  const double scale = 1.0 / std::sqrt(static_cast<double>(hd));
  at::Tensor o = BlockedAttention::apply(qg, kg, vg, mask.to(q.scalar_type()), scale);
  return o.view({B, kv, T, g, hd}).transpose(1, 2).reshape({B, T, nh * hd});  // o [B*kv, T*g, hd]
}

#ifdef WIREUP_SDPA_GQA
// ATen's fused attention (flash attention where the shapes allow; grouped KV
// heads natively): it never materialises the scores, which at T = 4096 are
// GiBs per layer. `mask` bool [B,1,T,T] or undefined (causal).
at::Tensor sdpa(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                const at::Tensor& mask) {
  const auto B = q.size(0), T = q.size(1), nh = q.size(2), hd = q.size(3), kv = k.size(2);
  const std::optional<at::Tensor> m =
      mask.defined() ? std::optional<at::Tensor>(mask) : std::nullopt;
  const at::Tensor o =
      at::scaled_dot_product_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), m,
                                       0.0, /*is_causal=*/!mask.defined(), std::nullopt,
                                       /*enable_gqa=*/nh > kv);
  return o.transpose(1, 2).reshape({B, T, nh * hd});  // o [B, nh, T, hd]
}
#endif

#ifdef WIREUP_VARLEN_FLASH
// q [B,T,nh,hd], k and v [B,T,kv,hd] as B*T tokens end to end, each
// sequence of cu_seqlens causal on its own -> [B,T,nh*hd]. No mask, no scores
// across conversations.
at::Tensor varlen_flash(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                        const DocumentMask& docs) {
  const auto B = q.size(0), T = q.size(1), nh = q.size(2), hd = q.size(3), kv = k.size(2);
  const auto out = at::_flash_attention_forward(
      q.reshape({B * T, nh, hd}), k.reshape({B * T, kv, hd}), v.contiguous().view({B * T, kv, hd}),
      docs.cu_seqlens, docs.cu_seqlens, docs.max_len, docs.max_len, 0.0, /*is_causal=*/true,
      /*return_debug_mask=*/false);
  return std::get<0>(out).reshape({B, T, nh * hd});  // [B*T, nh, hd]
}

// Empty when a forward and backward of two sequences (3 and 1 tokens, two
// query heads on one KV head) run on `device` and reach q, k and v (autograd
// covers the op: derivatives.yaml's entry, FlashAttentionBackward0 in 2.6);
// else the error's first line.
std::string varlen_flash_refusal(at::Device device, at::ScalarType dtype, std::int64_t hd) {
  try {
    const c10::InferenceMode not_inference(false);  // a graph, whatever the caller's mode
    const c10::AutoGradMode with_grad(true);
    const auto o = at::TensorOptions().device(device).dtype(dtype);
    const at::Tensor q = at::randn({1, 4, 2, hd}, o).requires_grad_();
    const at::Tensor k = at::randn({1, 4, 1, hd}, o).requires_grad_();
    const at::Tensor v = at::randn({1, 4, 1, hd}, o).requires_grad_();
    const at::Tensor cu = at::tensor(std::vector<std::int32_t>{0, 3, 4}, at::kInt).to(device);
    varlen_flash(q, k, v, varlen_documents(cu, 3)).sum().backward();
    if (!q.grad().defined() || !k.grad().defined() || !v.grad().defined())
      return "no gradient reached q, k and v";
    return "";
  } catch (const c10::Error& e) {
    const std::string what = e.what_without_backtrace();
    return what.substr(0, what.find('\n'));
  }
}
#endif

}  // namespace

// The rows are cut into blocks of tokens and each block meets only the keys
// up to its last token: the scores above the diagonal are never computed.
// The 1/sqrt(hd) scale rides in the score GEMM (baddbmm); the mask is added
// to each block's diagonal square only. On CUDA with LibTorch 2.5 or newer,
// ATen's fused attention instead.
at::Tensor causal_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                            const at::Tensor& causal) {
#ifdef WIREUP_SDPA_GQA
  if (q.is_cuda()) return sdpa(q, k, v, at::Tensor());
#endif
  return blocked_attention(q, k, v, causal);
}

DocumentMask document_mask(const at::Tensor& segments, at::ScalarType dtype) {
  const auto T = segments.size(1);
  // may_attend (document_layout.hpp): same segment, key not after the query
  const at::Tensor allowed =
      segments.unsqueeze(2)
          .eq(segments.unsqueeze(1))
          .logical_and_(at::ones({T, T}, segments.options().dtype(at::kBool)).tril_());
  DocumentMask d;
#ifdef WIREUP_SDPA_GQA
  if (segments.is_cuda()) {
    d.mask = allowed.unsqueeze(1);
    return d;
  }
#endif
  d.mask = at::zeros(allowed.sizes(), segments.options().dtype(dtype))
               .masked_fill_(allowed.logical_not(), -INFINITY);
  return d;
}

DocumentMask varlen_documents(const at::Tensor& cu_seqlens, std::int64_t max_len) {
  DocumentMask d;
  d.cu_seqlens = cu_seqlens;
  d.max_len = max_len;
  return d;
}

DocumentAttentionChoice document_attention_for(at::Device device, at::ScalarType dtype,
                                               std::int64_t head_dim) {
  AttentionBuild built;
#ifdef WIREUP_SDPA_GQA
  built.sdpa = true;
#endif
#ifdef WIREUP_VARLEN_FLASH
  built.varlen = true;
#endif
  const bool half = dtype == at::kBFloat16 || dtype == at::kHalf;
  DocumentAttentionChoice c;
  c.path = choose_document_attention(device.is_cuda(), built, half, head_dim,
                                     std::getenv("WIREUP_DOCUMENT_ATTENTION"));
#ifdef WIREUP_VARLEN_FLASH
  if (c.path == DocumentAttention::VarlenFlash) {
    c.note = varlen_flash_refusal(device, dtype, head_dim);
    if (!c.note.empty()) c.path = DocumentAttention::SdpaMask;
  }
#endif
  return c;
}

at::Tensor document_attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v,
                              const DocumentMask& docs) {
#ifdef WIREUP_VARLEN_FLASH
  if (docs.cu_seqlens.defined()) return varlen_flash(q, k, v, docs);
#endif
  TORCH_CHECK(docs.mask.defined(), "document_attention: no mask (varlen flash is not built)");
#ifdef WIREUP_SDPA_GQA
  if (q.is_cuda()) return sdpa(q, k, v, docs.mask);
#endif
  return blocked_attention(q, k, v, docs.mask);
}

}  // namespace wireup::train::ops
