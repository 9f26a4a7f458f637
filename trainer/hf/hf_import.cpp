// --init_from_hf: a Hugging Face Llama checkpoint's config.json checked
// against the model flags, its weights read into the sharded model's units.
#include "hf/hf_import.hpp"

#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <tuple>

#include "checkpoint/checkpoint_files.hpp"
#include "hf/hf_weights.hpp"
#include "hf/peft_files.hpp"
#include "hf/safetensors.hpp"
#include "models/family_registry.hpp"
#include "models/sharded_model.hpp"
#include "wireup/error.hpp"
#include "wireup/sha256.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wireup::train {
namespace {

bool rank0() {
  const char* r = std::getenv("RANK");
  return r == nullptr || std::string(r) == "0";
}

}  // namespace

std::string base_fingerprint(const fs::path& dir) {
  if (path_exists(dir / "metadata.json"))  // it names every chunk's SHA-256
    return sha256_hex(read_text(dir / "metadata.json"));
  const std::string config = read_text(dir / "config.json", hf::kMaxConfigBytes);
  return sha256_hex(config + "\n" + HfWeights(dir).tensor_lines());
}

hf::ConfigFacts check_hf_config(const fs::path& dir, const ModelConfig& m) {
  const fs::path path = dir / "config.json";
  const hf::ConfigFacts facts =
      hf::check_config(read_text(path, hf::kMaxConfigBytes), path.string(), m);
  if (rank0() && facts.max_position_embeddings && *facts.max_position_embeddings < m.context)
    std::fprintf(stderr,
                 "wireup-train: WARNING: %s: max_position_embeddings=%lld is below "
                 "--max_context_width %lld\n",
                 path.c_str(), static_cast<long long>(*facts.max_position_embeddings),
                 static_cast<long long>(m.context));
  return facts;
}

void load_hf_into(ShardedModel& model, const std::string& dir_str, const HfAdapter* adapter) {
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path dir(dir_str);
  if (!directory_exists(dir)) throw InputError("--init_from_hf " + dir_str + ": no such directory");
  const ModelConfig& m = model.config();
  // Tied in the file, untied here: lm_head starts as a copy of the embedding.
  const bool untie = check_hf_config(dir, m).tied && !m.tied;
  const HfWeights weights(dir);
  const auto& units = model.base_units();  // LoRA's adapters are not the base's
  std::int64_t params = 0;
  std::size_t used = 0;
  for (std::size_t u = 0; u < units.size(); ++u) {
    const auto specs = model.spec().hf_tensors(m, u);
    // Each tensor checked, then read straight into the unit's buffer (one
    // rank: its parameters themselves).
    const auto read = [&](std::size_t i, at::Tensor& slot) {
      const auto& spec = specs[i];
      auto [reader, entry] = weights.find(spec.name);
      if (!entry && untie && spec.name == "lm_head.weight")
        std::tie(reader, entry) = weights.find("model.embed_tokens.weight");
      else if (entry)
        ++used;
      if (!entry)
        throw InputError(weights.describe() + ": no tensor " + spec.name + " (not a " +
                         model_family(m).display + " checkpoint of this shape?)");
      if (entry->shape != spec.shape)
        throw InputError(reader->path().string() + ": " + spec.name + " has shape " +
                         shape_str(entry->shape) + ", the model flags need " +
                         shape_str(spec.shape));
      reader->read_f32(*entry, slot.data_ptr<float>());
      if (adapter)  // in HF's layout, before the family's row order is applied
        if (const at::Tensor d = adapter->delta(spec.name); d.defined()) slot.add_(d.view_as(slot));
      params += slot.numel();
    };
    units[u]->load_full([&](at::Tensor& flat) { model.spec().unit_from_hf(m, u, flat, read); });
  }
  if (rank0()) {
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[init] from_hf=%s tensors=%zu params=%lld ignored=%zu%s seconds=%.2f\n",
                dir_str.c_str(), used, static_cast<long long>(params), weights.size() - used,
                untie    ? " tied_embeddings=untied"
                : m.tied ? " tied_embeddings=tied"
                         : "",
                s);
    std::fflush(stdout);
  }
}

}  // namespace wireup::train
