#include "hf/peft_files.hpp"

#include <ATen/ATen.h>

#include <vector>

#include "checkpoint/checkpoint_files.hpp"
#include "hf/safetensors.hpp"
#include "lora/lora_units.hpp"
#include "lora/peft_adapter.hpp"
#include "models/family_registry.hpp"
#include "models/model_registry.hpp"
#include "models/sharded_model.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace fs = std::filesystem;

namespace wireup::train {

namespace {

lora::BaseShape base_shape(const ModelConfig& m) {
  return {m.layers, m.hidden, m.q_dim(), m.kv_dim(), m.intermediate};
}

std::string pair_key(const lora::PeftTensorId& id) {
  return adapted_weight_name(id.layer, id.target);
}

}  // namespace

std::string adapted_weight_name(std::int64_t layer, lora::Target t) {
  return "model.layers." + std::to_string(layer) + "." + lora::hf_parent(t) + "." +
         lora::hf_module(t) + ".weight";
}

at::Tensor HfAdapter::delta(const std::string& hf_weight) const {
  const auto it = weights.find(hf_weight);
  if (it == weights.end()) return at::Tensor();
  // In double, then rounded once: the merge adds one rounding to W's.
  return at::matmul(it->second.b.to(at::kDouble), it->second.a.to(at::kDouble))
      .mul_(lora.scale())
      .to(at::kFloat);
}

HfAdapter read_peft_adapter(const fs::path& dir, const ModelConfig& m) {
  if (!directory_exists(dir))
    throw InputError("--lora_adapter " + dir.string() + ": no such directory");
  const lora::PeftAdapterConfig c = lora::read_adapter_config(dir.string());
  check_lora_targets(m, c.lora.targets, (dir / "adapter_config.json").string() + " target_modules");
  const fs::path file = dir / "adapter_model.safetensors";
  if (!path_exists(file) && path_exists(dir / "adapter_model.bin"))
    throw InputError((dir / "adapter_model.bin").string() +
                     ": a pickled PyTorch adapter is not read; save it with safetensors "
                     "(PEFT's save_pretrained(..., safe_serialization=True), the default)");
  const safetensors::Reader reader(file);
  std::vector<lora::TensorShape> found;
  for (const auto& t : reader.tensors()) found.push_back({t.name, t.shape});
  HfAdapter a{c.lora, c.base_model_name_or_path, {}};
  for (const auto& t : lora::check_adapter_tensors(found, c.lora, base_shape(m), file.string())) {
    at::Tensor v = at::empty(t.shape, at::kFloat);
    reader.read_f32(*reader.find(t.name), v.data_ptr<float>());
    auto& pair = a.weights[pair_key(t.id)];
    (t.id.matrix == lora::Matrix::A ? pair.a : pair.b) = v;
  }
  return a;
}

HfAdapter checkpoint_adapter(const fs::path& step_dir, const CheckpointMeta& meta) {
  const fs::path meta_path = step_dir / "metadata.json";
  if (!meta.lora) throw InputError(meta_path.string() + ": not a LoRA checkpoint (no \"lora\")");
  const ModelConfig& m = meta.model;
  const lora::LoraConfig& c = meta.lora->lora;
  const std::vector<ParamSpec> specs = lora::adapter_specs(m, c);
  if (meta.units.size() != static_cast<std::size_t>(m.layers))
    throw InputError(meta_path.string() + ": " + std::to_string(meta.units.size()) +
                     " adapter units, a " + std::to_string(m.layers) + "-layer model has " +
                     std::to_string(m.layers));
  ChunkReader reader(step_dir, meta);
  reader.open_all();
  const ModelSpec& spec = model_spec(m);
  HfAdapter a{c, meta.lora->base, {}};
  for (std::size_t u = 0; u < meta.units.size(); ++u) {
    const UnitMeta& um = meta.units[u];
    bool same = um.name == "lora" + std::to_string(u) && um.param_names.size() == specs.size();
    for (std::size_t i = 0; same && i < specs.size(); ++i)
      same = um.param_names[i] == specs[i].name && um.param_shapes[i] == specs[i].shape;
    if (!same)
      throw InputError(meta_path.string() + ": unit " + um.name + " is not the rank-" +
                       std::to_string(c.rank) + " adapters of layer " + std::to_string(u) +
                       " for targets " + lora::targets_csv(c.targets));
    at::Tensor flat = at::empty({um.numel}, at::kFloat);
    reader.read(static_cast<int>(u), "param", 0, um.numel, flat.data_ptr<float>());
    std::int64_t off = 0;
    for (std::size_t k = 0; k < c.targets.size(); ++k) {
      const lora::Target t = c.targets[k];
      const auto& sa = specs[2 * k];
      const auto& sb = specs[2 * k + 1];
      at::Tensor am = flat.narrow(0, off, sa.numel()).view(sa.shape).clone();
      off += sa.numel();
      at::Tensor bm = flat.narrow(0, off, sb.numel()).view(sb.shape);
      off += sb.numel();
      a.weights[adapted_weight_name(static_cast<std::int64_t>(u), t)] = {
          am, spec.adapter_rows(m, t, bm, /*to_hf=*/true).clone()};
    }
  }
  return a;
}

void add_adapter_into(ShardedModel& model, const HfAdapter& a) {
  const ModelConfig& m = model.config();
  const ModelSpec& spec = model.spec();
  const auto& units = model.base_units();
  for (std::size_t u = 0; u < units.size(); ++u) {
    const auto tensors = spec.hf_tensors(m, u);
    bool adapted = false;
    for (const auto& t : tensors) adapted = adapted || a.weights.count(t.name) > 0;
    if (!adapted) continue;
    FlatUnit& unit = *units[u];
    // The unit's deltas, zeros where none, in the family's layout.
    at::Tensor flat = at::zeros({unit.numel()}, at::kFloat);
    spec.unit_from_hf(m, u, flat, [&](std::size_t i, at::Tensor& slot) {
      if (const at::Tensor d = a.delta(tensors[i].name); d.defined()) slot.copy_(d.view_as(slot));
    });
    const std::int64_t begin = unit.shard_offset();
    const std::int64_t end = std::min(begin + unit.shard_numel(), unit.numel());
    if (end > begin)
      unit.master()
          .narrow(0, 0, end - begin)
          .add_(flat.narrow(0, begin, end - begin).to(unit.master().device()));
  }
}

std::uint64_t write_peft_adapter(const HfAdapter& a, const ModelConfig& m, const fs::path& out,
                                 const std::string& dtype) {
  const std::string st_dtype = dtype == "bfloat16" ? "BF16" : "F32";
  std::vector<safetensors::TensorEntry> entries;
  std::vector<const at::Tensor*> values;
  for (std::int64_t layer = 0; layer < m.layers; ++layer)
    for (const lora::Target t : a.lora.targets) {
      const auto it = a.weights.find(adapted_weight_name(layer, t));
      if (it == a.weights.end()) continue;
      for (const lora::Matrix x : {lora::Matrix::A, lora::Matrix::B}) {
        const at::Tensor& v = x == lora::Matrix::A ? it->second.a : it->second.b;
        safetensors::TensorEntry e;
        e.name = lora::peft_tensor_name(layer, t, x);
        e.dtype = st_dtype;
        e.shape = v.sizes().vec();
        entries.push_back(e);
        values.push_back(&v);
      }
    }
  safetensors::Writer w(out / "adapter_model.safetensors", entries, {{"format", "pt"}});
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const at::Tensor v = values[i]->contiguous();
    w.write_next(entries[i].name, v.data_ptr<float>(), static_cast<std::uint64_t>(v.numel()));
  }
  w.commit();
  io::write_atomically(out / "adapter_config.json", lora::adapter_config_json(a.lora, a.base));
  return w.bytes_written();
}

}  // namespace wireup::train
