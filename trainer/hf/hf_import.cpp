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
#include "hf/safetensors.hpp"
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

std::string shape_str(const std::vector<std::int64_t>& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

// The weight files of an HF directory: model.safetensors, or the shards an
// index names.
class HfWeights {
 public:
  explicit HfWeights(const fs::path& dir) {
    const fs::path single = dir / "model.safetensors";
    const fs::path index = dir / "model.safetensors.index.json";
    if (path_exists(single)) {
      readers_.push_back(std::make_unique<safetensors::Reader>(single));
      for (const auto& t : readers_[0]->tensors()) where_[t.name] = 0;
      return;
    }
    if (!path_exists(index))
      throw InputError(single.string() + ": missing (and no model.safetensors.index.json)");
    const auto weight_map =
        safetensors::parse_index(read_text(index, safetensors::kMaxIndexBytes), index.string());
    std::map<std::string, std::size_t> opened;
    for (const auto& [tensor, file] : weight_map) {
      auto o = opened.find(file);
      if (o == opened.end() && !path_exists(dir / file))
        throw InputError((dir / file).string() + ": missing (" + index.filename().string() +
                         " maps " + tensor + " to it)");
      if (o == opened.end()) {
        readers_.push_back(std::make_unique<safetensors::Reader>(dir / file));
        o = opened.emplace(file, readers_.size() - 1).first;
      }
      if (!readers_[o->second]->find(tensor))
        throw InputError((dir / file).string() + ": no tensor " + tensor + " (named in " +
                         index.filename().string() + ")");
      where_[tensor] = o->second;
    }
  }

  // nullptr if absent.
  std::pair<const safetensors::Reader*, const safetensors::TensorEntry*> find(
      const std::string& name) const {
    const auto it = where_.find(name);
    if (it == where_.end()) return {nullptr, nullptr};
    const auto* r = readers_[it->second].get();
    return {r, r->find(name)};
  }
  std::size_t size() const { return where_.size(); }
  // "name dtype [shape]" of every tensor, sorted by name, a line each.
  std::string tensor_lines() const {
    std::string out;
    for (const auto& [name, r] : where_) {
      const auto* e = readers_[r]->find(name);
      out += name + " " + e->dtype + " " + shape_str(e->shape) + "\n";
    }
    return out;
  }
  std::string describe() const {
    return readers_.size() == 1 ? readers_[0]->path().string()
                                : readers_[0]->path().parent_path().string() + " (" +
                                      std::to_string(readers_.size()) + " safetensors files)";
  }

 private:
  std::vector<std::unique_ptr<safetensors::Reader>> readers_;
  std::map<std::string, std::size_t> where_;
};

}  // namespace

std::string hf_base_fingerprint(const fs::path& dir) {
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

void load_hf_into(ShardedModel& model, const std::string& dir_str) {
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
        throw InputError(weights.describe() + ": no tensor " + spec.name +
                         " (not a Llama checkpoint of this shape?)");
      if (entry->shape != spec.shape)
        throw InputError(reader->path().string() + ": " + spec.name + " has shape " +
                         shape_str(entry->shape) + ", the model flags need " +
                         shape_str(spec.shape));
      reader->read_f32(*entry, slot.data_ptr<float>());
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
