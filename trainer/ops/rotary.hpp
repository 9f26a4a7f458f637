#pragma once
#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

// Rotary position embedding (Meta's interleaved pairs) and the tables it
// rotates by, made once per model from the model's inverse frequencies.
namespace wireup::train::ops {

// What depends on positions only: rotary tables and the causal mask.
struct Rope {
  at::Tensor cos, sin;  // [T, head_dim/2]
  at::Tensor cis;       // cos + i sin, complex64 [T, head_dim/2] (the fp32 path)
  at::Tensor causal;    // [T, T] additive: 0 where key <= query, -inf after (or undefined)
};
// The tables of `seq` positions for inverse frequencies `inv_freq` (head_dim/2
// of them). Without `with_causal` (where attention_needs_mask is false) the
// mask is left undefined: at 131072 positions it would be 64 GiB.
Rope make_rope(const std::vector<double>& inv_freq, std::int64_t seq, bool with_causal = true);
bool attention_needs_mask(at::Device device);
Rope rope_to(const Rope& r, at::Device device);
// Rotary embedding of x [B,T,h,head_dim] (consecutive pairs rotate together);
// bf16 computes in fp32 and rounds once. Token t of row b is at position t, or
// at positions[b][t] when given ([B,T] int64, below the table's length).
at::Tensor apply_rope(const at::Tensor& x, const Rope& rope,
                      const at::Tensor& positions = at::Tensor());

}  // namespace wireup::train::ops
