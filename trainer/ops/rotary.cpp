#include "ops/rotary.hpp"

#include <ATen/ATen.h>
#include <torch/version.h>

#include <cmath>

namespace wireup::train::ops {

Rope make_rope(const std::vector<double>& freqs, std::int64_t seq, bool with_causal) {
  // Made here on the host in double and moved to the device whole (rope_to),
  // so the CPU and GPU paths rotate by the same table.
  at::Tensor inv = at::empty({static_cast<std::int64_t>(freqs.size())}, at::kDouble);
  std::copy(freqs.begin(), freqs.end(), inv.data_ptr<double>());
  at::Tensor angles = at::outer(at::arange(seq, at::kDouble), inv);
  Rope r{angles.cos().to(at::kFloat), angles.sin().to(at::kFloat), {}, {}};
  r.cis = at::view_as_complex(at::stack({r.cos, r.sin}, -1));
  if (with_causal) r.causal = at::full({seq, seq}, -INFINITY, at::kFloat).triu_(1);
  return r;
}

bool attention_needs_mask(at::Device device) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 5)
  return !device.is_cuda();  // CUDA: scaled_dot_product_attention's own causal masking
#else
  (void)device;
  return true;
#endif
}

Rope rope_to(const Rope& r, at::Device device) {
  return {r.cos.to(device), r.sin.to(device), r.cis.to(device),
          r.causal.defined() ? r.causal.to(device) : at::Tensor()};
}

// Meta's layout: consecutive pairs (2i, 2i+1) rotate together. x: [B,T,h,d].
// One complex multiplication in fp32 (a single pass each way); complex bf16
// does not exist, so bf16 goes to fp32 and back around it, as Meta's
// reference does: three kernels, where rotating the real pairs took seven.
at::Tensor apply_rope(const at::Tensor& x, const Rope& rope, const at::Tensor& positions) {
  const auto B = x.size(0), T = x.size(1), h = x.size(2), d = x.size(3);
  at::Tensor cis = positions.defined()
                       ? rope.cis.index_select(0, positions.reshape({-1})).view({B, T, 1, d / 2})
                       : rope.cis.narrow(0, 0, T).view({1, T, 1, d / 2});
  const bool reduced = x.scalar_type() != at::kFloat && x.scalar_type() != at::kDouble;
  const at::Tensor wide = reduced ? x.to(at::kFloat) : x;
  if (wide.scalar_type() == at::kDouble) cis = cis.to(at::kComplexDouble);  // tests' fp64
  at::Tensor out = at::view_as_real(at::view_as_complex(wide.view({B, T, h, d / 2, 2})) * cis);
  out = out.view({B, T, h, d});
  return reduced ? out.to(x.scalar_type()) : out;
}

}  // namespace wireup::train::ops
