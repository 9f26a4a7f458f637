#pragma once
#include <ATen/core/Tensor.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "batch/batch_tokens.hpp"
#include "config/float8_recipe.hpp"
#include "fsdp/fsdp_model.hpp"
#include "fsdp/unit_plan.hpp"
#include "lora/lora_config.hpp"
#include "models/model_config.hpp"
#include "models/model_family.hpp"
#include "ops/attention.hpp"

// What a model family gives the trainer, tied together as torchtitan's
// ModelSpec ties a model, its parallelization and its state-dict adapter: its
// FSDP units, their initial values, their computation, and its Hugging Face
// names and layouts. The sharding engine (fsdp/), the checkpoints and the
// optimizer see units only; a new family is a folder under models/ and its
// registration (a line in model_registry.cpp and family_registry.cpp, or
// register_model_spec: docs/trainer-models.md, "Adding a family").
namespace wireup::train {

// How a model is built and computes: its sharding, its linear layers' float8
// recipe, whether its parameters start at the family's random values
// (false: zeros, for a caller that loads every one of them next: eval,
// generate), and LoRA (enabled: the family's units frozen, adapters trained:
// lora/lora_units.hpp).
struct ModelOptions {
  FsdpOptions fsdp;
  Float8Recipe float8 = Float8Recipe::Off;
  bool random_init = true;
  lora::LoraConfig lora;
};

// One model's computation for a run: made once (its rotary tables, its
// attention choice), asked once per micro-batch.
class ModelCompute {
 public:
  virtual ~ModelCompute() = default;
  // The first unit's input and every unit's computation for one micro-batch
  // (tokens [B, T+1] on the host; ids outside the vocabulary are refused
  // here, std::runtime_error naming the vocabulary). The last unit returns
  // the mean loss; a masked batch's is the sum of its trained targets'
  // cross-entropy over `loss_divisor` (> 0), with positions and attention
  // per conversation where it has segments. `training`: LoRA's dropout
  // applies (a forward for backward).
  struct Step {
    at::Tensor input;
    UnitCompute compute;
  };
  virtual Step prepare(const ModelBatch& batch, double loss_divisor, bool training = false) = 0;
  // The attention of packed micro-batches with segments (chosen, and on CUDA
  // probed, on first use).
  virtual const ops::DocumentAttentionChoice& document_attention() = 0;
};

// Decoding one sequence with a KV cache (generate): inference only.
class TokenDecoder {
 public:
  virtual ~TokenDecoder() = default;
  // Runs `tokens` (int64 [T], T >= 1, position() + T <= capacity()) at the
  // next positions, keeping their keys and values. Returns fp32 logits: of
  // the last position [V], or with `all_rows` of each [T, V].
  virtual at::Tensor feed(const at::Tensor& tokens, bool all_rows = false) = 0;
  virtual void reset() = 0;  // the next feed starts at position 0
  virtual std::int64_t position() const = 0;
  virtual std::int64_t capacity() const = 0;
};

// One Hugging Face tensor: its name and shape.
struct HfTensor {
  std::string name;
  std::vector<std::int64_t> shape;
};
// Fills `slot` (a view of a unit's flat buffer, tensor `index`'s shape) with
// HF tensor `index` of the unit.
using ReadHfTensor = std::function<void(std::size_t index, at::Tensor& slot)>;

struct ModelSpec {
  const char* name;  // the family: "llama"
  // The units in order, their parameters' names and shapes.
  std::vector<UnitPlan> (*units)(const ModelConfig& m);
  // Unit `unit`'s initial values, flat fp32, the same on every rank and world
  // size for a seed.
  at::Tensor (*init_unit)(const UnitPlan& unit, const ModelConfig& m, std::uint64_t seed);
  std::unique_ptr<ModelCompute> (*compute)(const ModelConfig& m, const ModelOptions& o);
  // The Hugging Face adapter: the HF tensors unit `unit` maps to, in a fixed
  // order; a unit's flat fp32 buffer (padding excluded) to them (contiguous
  // fp32), and from them, read in place.
  std::vector<HfTensor> (*hf_tensors)(const ModelConfig& m, std::size_t unit);
  std::vector<at::Tensor> (*unit_to_hf)(const ModelConfig& m, std::size_t unit,
                                        const at::Tensor& flat);
  void (*unit_from_hf)(const ModelConfig& m, std::size_t unit, at::Tensor& flat,
                       const ReadHfTensor& read);
  // A decoder of `capacity` positions (1..context) over the units' parameters
  // (each unit's, in units() order; a tied head's output is the embedding's),
  // kept alive by it.
  std::unique_ptr<TokenDecoder> (*decoder)(const ModelConfig& m,
                                           std::vector<std::vector<at::Tensor>> unit_params,
                                           std::int64_t capacity);
  // LoRA's part of the HF adapter: the rows of projection `t`'s output (an
  // adapter's B [out, rank]) in this family's order -> Hugging Face's
  // (`to_hf`), or back. Exact (a permutation of rows, as for the weights).
  at::Tensor (*adapter_rows)(const ModelConfig& m, lora::Target t, const at::Tensor& rows,
                             bool to_hf);
  // The family's plain facts (presets, counts, config.json), which the parts
  // without LibTorch reach through family_registry.hpp.
  const ModelFamily* family;
};

}  // namespace wireup::train
