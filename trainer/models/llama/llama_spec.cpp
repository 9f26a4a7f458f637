#include "models/llama/llama_spec.hpp"

#include <ATen/ATen.h>

#include <optional>
#include <string>

#include "models/llama/kv_decode.hpp"
#include "models/llama/llama_family.hpp"
#include "models/llama/llama_hf.hpp"
#include "models/llama/llama_model.hpp"

namespace wireup::train::llama {
namespace {

// The decoder's step: embedding lookup, blocks (the family's BlockRecipe),
// final norm and loss.
class DecoderCompute final : public ModelCompute {
 public:
  DecoderCompute(const ModelConfig& m, const ModelOptions& o, BlockRecipe recipe)
      : cfg_(m),
        recipe_(recipe),
        device_(o.fsdp.device),
        dtype_(o.fsdp.compute_dtype),
        float8_(o.float8),
        lora_(o.lora),
        rope_(ops::rope_to(make_rope(m, m.context, ops::attention_needs_mask(device_)), device_)) {
    if (rope_.causal.defined())
      rope_.causal = rope_.causal.to(dtype_);  // added to the scores in that dtype
  }

  Step prepare(const ModelBatch& batch, double loss_divisor, bool training) override;

  const ops::DocumentAttentionChoice& document_attention() override {
    if (!document_attention_)
      document_attention_ = ops::document_attention_for(device_, dtype_, cfg_.head_dim());
    return *document_attention_;
  }

 private:
  ModelConfig cfg_;
  BlockRecipe recipe_;
  at::Device device_;
  at::ScalarType dtype_;
  Float8Recipe float8_;
  lora::LoraConfig lora_;
  ops::Rope rope_;
  std::optional<ops::DocumentAttentionChoice> document_attention_;
};

// LoRA dropout's seed for a training micro-batch: a hash of its tokens (FNV-1a),
// so that a recomputed block and a resumed run draw the same masks; 0: none.
std::uint64_t dropout_seed(const lora::LoraConfig& c, const at::Tensor& host_tokens,
                           bool training) {
  if (!c.enabled() || c.dropout <= 0 || !training) return 0;
  const at::Tensor t = host_tokens.contiguous();
  const auto* ids = t.data_ptr<std::int64_t>();
  std::uint64_t h = 1469598103934665603ULL;
  for (std::int64_t i = 0; i < t.numel(); ++i)
    h = (h ^ static_cast<std::uint64_t>(ids[i])) * 1099511628211ULL;
  return h | 1;
}

ModelCompute::Step DecoderCompute::prepare(const ModelBatch& batch, double loss_divisor,
                                           bool training) {
  const at::Tensor& host_tokens = batch.tokens;
  // Ids index the embedding and pick the logits: check them here, on the host
  // (on a GPU a check there would stall the step on a device-to-host copy).
  const auto [lo, hi] = at::aminmax(host_tokens);
  TORCH_CHECK(lo.item<std::int64_t>() >= 0 && hi.item<std::int64_t>() < cfg_.vocab,
              "token id outside the vocabulary of ", cfg_.vocab, " (--vocab_size)");
  const at::Tensor tokens = host_tokens.to(device_);
  const auto T = tokens.size(1) - 1;
  const at::Tensor targets = tokens.narrow(1, 1, T);
  const at::Tensor trained =
      batch.masked() ? batch.trained.to(device_) : at::Tensor();  // undefined: every target
  Documents docs;
  if (batch.segments.defined()) {
    const at::Tensor positions = batch.positions.to(device_);
    docs = document_attention().path == DocumentAttention::VarlenFlash
               ? Documents{positions,
                           ops::varlen_documents(batch.cu_seqlens.to(device_), batch.max_seqlen)}
               : make_documents(positions, batch.segments.to(device_), dtype_);
  }
  const std::size_t head = static_cast<std::size_t>(cfg_.layers) + 1;
  const std::uint64_t seed = dropout_seed(lora_, host_tokens, training);
  const bool adapters = lora_.enabled() && !batch.adapters_off;
  // Pair mode: per-side sums of the trained targets' log-probs, into the objective.
  const at::Tensor sides = batch.paired() ? batch.sides.to(device_) : at::Tensor();
  const std::int64_t pairs = batch.pair_count;
  const auto objective = batch.side_objective;
  UnitCompute compute = [this, docs, targets, trained, loss_divisor, head, seed, adapters, sides,
                         pairs, objective](std::size_t unit, const std::vector<at::Tensor>& p,
                                           const at::Tensor& x) {
    if (unit == 0) return embed(p, x);
    if (unit < head && !lora_.enabled()) return block(p, x, rope_, cfg_, float8_, docs, recipe_);
    if (unit < head) {  // the block's parameters, then its adapters (a held unit it borrows)
      const auto n = static_cast<std::ptrdiff_t>(p.size() - 2 * lora_.targets.size());
      const std::vector<at::Tensor> base(p.begin(), p.begin() + n);
      if (!adapters) return block(base, x, rope_, cfg_, float8_, docs, recipe_);
      const lora::BlockAdapters adapted(lora_, cfg_, {p.begin() + n, p.end()},
                                        seed == 0 ? 0 : seed ^ (unit * 0x9E3779B97F4A7C15ULL));
      return block(base, x, rope_, cfg_, float8_, docs, recipe_, &adapted);
    }
    if (pairs > 0) return head_pair_loss(p, x, targets, cfg_, trained, sides, pairs, objective);
    return head_loss(p, x, targets, cfg_, trained, loss_divisor);
  };
  return {tokens.narrow(1, 0, T), std::move(compute)};
}

std::unique_ptr<ModelCompute> llama_compute(const ModelConfig& m, const ModelOptions& o) {
  return decoder_compute(m, o, {});
}

std::unique_ptr<TokenDecoder> llama_decoder(const ModelConfig& m,
                                            std::vector<std::vector<at::Tensor>> unit_params,
                                            std::int64_t capacity) {
  return skeleton_decoder(m, std::move(unit_params), capacity, {});
}

}  // namespace

std::vector<UnitPlan> llama_units(const ModelConfig& m) { return decoder_units(m, block_specs); }

at::Tensor init_decoder_unit(const UnitPlan& unit, const ModelConfig& m, std::uint64_t seed) {
  return init_unit(unit.specs, m, seed);
}

std::unique_ptr<ModelCompute> decoder_compute(const ModelConfig& m, const ModelOptions& o,
                                              BlockRecipe recipe) {
  return std::make_unique<DecoderCompute>(m, o, recipe);
}

std::vector<UnitPlan> decoder_units(const ModelConfig& m,
                                    std::vector<ParamSpec> (*blocks)(const ModelConfig&)) {
  std::vector<UnitPlan> units;
  UnitPlan embedding{"embedding", embedding_specs(m)};
  embedding.backward_reads_params = false;  // a scatter
  units.push_back(std::move(embedding));
  for (std::int64_t i = 0; i < m.layers; ++i) {
    UnitPlan b{"block" + std::to_string(i), blocks(m)};
    b.recompute = true;
    b.layer = i;
    units.push_back(std::move(b));
  }
  UnitPlan head{"head", head_specs(m)};
  if (m.tied) head.borrows = 0;  // the output projection is the embedding's matrix
  units.push_back(std::move(head));
  return units;
}

const ModelSpec& llama_spec() {
  static const ModelSpec spec{"llama",      llama_units,    init_decoder_unit, llama_compute,
                              unit_tensors, unit_to_hf,     unit_from_hf,      llama_decoder,
                              adapter_rows, &llama_family()};
  return spec;
}

}  // namespace wireup::train::llama
