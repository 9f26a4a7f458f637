#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "models/model_config.hpp"
#include "models/model_spec.hpp"

// The Llama's Hugging Face adapter: its units <-> HF Llama tensors. Pure tensor
// code: no files.
//
// Units (as llama_units lays them out): 0 = embedding, 1..L = blocks 0..L-1,
// L+1 = head (final norm + output). Each unit is one flat fp32 buffer holding
// its parameters back to back (llama_model.hpp):
//   embedding  tok_embeddings.weight [V,H]            -> model.embed_tokens.weight
//   block i    attention_norm.weight [H]              -> model.layers.i.input_layernorm.weight
//              attention.wqkv.weight [H+2*kv_dim, H]  -> self_attn.{q,k,v}_proj.weight
//              attention.wo.weight [H,H]              -> self_attn.o_proj.weight
//              ffn_norm.weight [H]                    -> post_attention_layernorm.weight
//              feed_forward.w13.weight [2I, H]        -> mlp.gate_proj (W1), mlp.up_proj (W3)
//              feed_forward.w2.weight [H, I]          -> mlp.down_proj.weight
//   head       norm.weight [H], output.weight [V,H]   -> model.norm.weight, lm_head.weight
//              (tied: norm.weight only; lm_head is model.embed_tokens.weight)
//
// RoPE: wireup (like Meta) rotates consecutive pairs (2j, 2j+1) of each head;
// Hugging Face rotates halves (j, j + head_dim/2). The Q and K rows are
// permuted per head so both compute the same function (as HF's
// convert_llama_weights_to_hf.py does).
namespace wireup::train::llama {

// The HF tensors one unit maps to, in a fixed order.
std::vector<HfTensor> unit_tensors(const ModelConfig& m, std::size_t unit);

// Q/K projection rows [n_heads * head_dim, in]: Meta pair order -> HF half
// order, and back. Exact (a permutation of rows).
at::Tensor rope_rows_to_hf(const at::Tensor& w, std::int64_t n_heads);
at::Tensor rope_rows_from_hf(const at::Tensor& w, std::int64_t n_heads);

// Which of a unit's HF tensors are rotary rows, and of how many heads each
// (0: not rotary): the permutation between Meta's pairs and HF's halves.
using RotaryHeads = std::function<std::int64_t(std::size_t index)>;
// The adapter's two loops, for any family whose HF tensors cover a unit's
// flat buffer in order: the buffer sliced into `tensors` (contiguous fp32,
// rotary rows to HF's halves), and filled from them in place (rotary rows
// back to pairs). std::invalid_argument naming `unit` for a buffer of
// another size.
std::vector<at::Tensor> slice_to_hf(const std::vector<HfTensor>& tensors, std::size_t unit,
                                    const at::Tensor& flat, const RotaryHeads& heads);
void fill_from_hf(const std::vector<HfTensor>& tensors, std::size_t unit, at::Tensor& flat,
                  const ReadHfTensor& read, const RotaryHeads& heads);

// A unit's flat fp32 buffer (numel elements, padding excluded) -> its HF
// tensors (unit_tensors order, contiguous fp32).
std::vector<at::Tensor> unit_to_hf(const ModelConfig& m, std::size_t unit, const at::Tensor& flat);
// Fills a unit's flat fp32 buffer (numel elements, contiguous) from its HF
// tensors, read in place: `read(i, slot)` fills slot, a view of the buffer
// with tensor i's shape (unit_tensors order); Q/K rows are then put in this
// model's order. One tensor's copy is all it allocates.
void unit_from_hf(const ModelConfig& m, std::size_t unit, at::Tensor& flat,
                  const ReadHfTensor& read);

// LoRA: projection t's output rows, this skeleton's order <-> HF's (Q and K
// permuted per head as their weights are; the others as they are).
at::Tensor adapter_rows(const ModelConfig& m, lora::Target t, const at::Tensor& rows, bool to_hf);

}  // namespace wireup::train::llama
