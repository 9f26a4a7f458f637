// `wireup-train export`'s work: a wireup checkpoint's units, read through
// ChunkReader, written as Hugging Face safetensors files and config.json.
#include "hf/hf_export.hpp"

#include <ATen/ATen.h>

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "checkpoint/checkpoint_files.hpp"
#include "checkpoint/checkpoint_format.hpp"
#include "hf/hf_config.hpp"
#include "hf/hf_import.hpp"
#include "hf/hf_weights.hpp"
#include "hf/peft_files.hpp"
#include "hf/safetensors.hpp"
#include "models/family_registry.hpp"
#include "models/model_registry.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace fs = std::filesystem;

namespace wireup::train {
namespace {

fs::path resolve_step_dir(const fs::path& p) {
  if (!path_exists(p)) throw InputError(p.string() + ": no such checkpoint directory");
  if (path_exists(p / "metadata.json")) return p;
  if (!directory_exists(p)) throw InputError(p.string() + ": not a checkpoint directory");
  const auto complete = complete_checkpoints(p);
  if (complete.empty()) {
    if (p.filename().string().rfind("step-", 0) == 0)
      throw InputError((p / "metadata.json").string() +
                       ": missing (an incomplete checkpoint: its save never committed)");
    throw InputError(p.string() + ": no complete checkpoint in it (no step-*/metadata.json)");
  }
  return complete.front();
}

// The checkpoint must hold wireup's Llama units, as this build lays them out.
void check_layout(const fs::path& meta_path, const CheckpointMeta& meta) {
  const ModelConfig& m = meta.model;
  try {
    check_model_config(m);
  } catch (const InputError& e) {
    throw InputError(meta_path.string() + ": " + e.what());
  }
  const std::vector<UnitPlan> units = model_spec(m).units(m);
  if (meta.units.size() != units.size())
    throw InputError(meta_path.string() + ": " + std::to_string(meta.units.size()) + " units, a " +
                     std::to_string(m.layers) + "-layer " + model_spec(m).name + " has " +
                     std::to_string(units.size()));
  for (std::size_t u = 0; u < meta.units.size(); ++u) {
    const auto& specs = units[u].specs;
    const UnitMeta& um = meta.units[u];
    bool same = um.param_names.size() == specs.size() && um.param_shapes.size() == specs.size();
    std::int64_t numel = 0;
    for (std::size_t i = 0; same && i < specs.size(); ++i) {
      same = um.param_names[i] == specs[i].name && um.param_shapes[i] == specs[i].shape;
      numel += specs[i].numel();
    }
    if (!same || numel != um.numel)
      throw InputError(meta_path.string() + ": unit " + um.name + " does not have the " +
                       model_family(meta.model).display + " parameter layout this build exports");
  }
}

// The weight files and index of an earlier export that this one replaces.
bool stale_weight_file(const std::string& name) {
  return name == "model.safetensors" || name == "model.safetensors.index.json" ||
         (name.rfind("model-", 0) == 0 && name.size() > 12 &&
          name.compare(name.size() - 12, 12, ".safetensors") == 0 &&
          name.find("-of-") != std::string::npos);
}

// The tensors in file order (a tied model has no lm_head.weight) and the file
// each goes to; one shard is model.safetensors.
struct ExportFiles {
  std::vector<safetensors::TensorEntry> entries;
  std::vector<std::string> files;  // of each entry
  std::uint64_t total_bytes = 0;
  std::size_t shards = 1;
};

ExportFiles plan_files(const ModelConfig& m, const std::string& dtype,
                       std::uint64_t max_shard_bytes) {
  const std::string st_dtype = dtype == "bfloat16" ? "BF16" : "F32";
  ExportFiles p;
  std::vector<std::uint64_t> sizes;
  const ModelSpec& spec = model_spec(m);
  const std::size_t units = spec.units(m).size();
  for (std::size_t u = 0; u < units; ++u)
    for (const auto& t : spec.hf_tensors(m, u)) {
      safetensors::TensorEntry e;
      e.name = t.name;
      e.dtype = st_dtype;
      e.shape = t.shape;
      sizes.push_back(e.numel() * safetensors::dtype_size(st_dtype));
      p.total_bytes += sizes.back();
      p.entries.push_back(e);
    }
  const auto shard_of = hf::plan_shards(sizes, max_shard_bytes);
  p.shards = shard_of.empty() ? 1 : shard_of.back() + 1;
  for (std::size_t i = 0; i < p.entries.size(); ++i)
    p.files.push_back(p.shards == 1 ? "model.safetensors"
                                    : hf::shard_file_name(shard_of[i], p.shards));
  return p;
}

// Unit u's HF tensors (unit_tensors order, contiguous fp32).
using UnitTensors = std::function<std::vector<at::Tensor>(std::size_t unit)>;

// Every unit's HF tensors, from `source`, into the safetensors files of `p`
// under `dir`; adds the parameters and bytes written to `r`.
void write_weights(const CheckpointMeta& meta, const ExportFiles& p, const fs::path& dir,
                   ExportResult& r, const UnitTensors& source) {
  const ModelConfig& m = meta.model;
  const std::map<std::string, std::string> st_meta = {
      {"format", "pt"},
      {"wireup_step", std::to_string(meta.step)},
      {"wireup_source", r.step_dir.filename().string()}};
  std::unique_ptr<safetensors::Writer> writer;
  std::size_t next = 0;  // index of the next tensor to write
  auto open_shard = [&] {
    std::vector<safetensors::TensorEntry> mine;
    for (std::size_t i = next; i < p.entries.size() && p.files[i] == p.files[next]; ++i)
      mine.push_back(p.entries[i]);
    writer = std::make_unique<safetensors::Writer>(dir / p.files[next], mine, st_meta);
  };
  const std::size_t units = model_spec(m).units(m).size();
  for (std::size_t u = 0; u < units; ++u) {
    for (const auto& t : source(u)) {
      if (!writer) open_shard();
      writer->write_next(p.entries[next].name, t.data_ptr<float>(),
                         static_cast<std::uint64_t>(t.numel()));
      r.params += t.numel();
      ++next;
      if (next == p.entries.size() || p.files[next] != p.files[next - 1]) {
        writer->commit();
        r.bytes += writer->bytes_written();
        writer.reset();
      }
    }
  }
}

// A checkpoint's units as HF tensors.
UnitTensors checkpoint_tensors(const fs::path& step_dir, const CheckpointMeta& meta_in) {
  auto meta = std::make_shared<CheckpointMeta>(meta_in);  // the reader keeps a reference
  auto reader = std::make_shared<ChunkReader>(step_dir, *meta);
  reader->open_all();  // the files bear out the sizes below before they are allocated
  return [reader, meta](std::size_t u) {
    const std::int64_t numel = meta->units[u].numel;
    at::Tensor flat = at::empty({numel}, at::kFloat);
    reader->read(static_cast<int>(u), "param", 0, numel, flat.data_ptr<float>());
    return model_spec(meta->model).unit_to_hf(meta->model, u, flat);
  };
}

// A full model's checkpoint as a LoRA base: its units as HF tensors, deltas added.
UnitTensors merged_checkpoint_tensors(const fs::path& base, const ModelConfig& m,
                                      const HfAdapter& adapter) {
  const fs::path meta_path = base / "metadata.json";
  const CheckpointMeta meta = checkpoint_meta_from_json(read_text(meta_path), meta_path.string());
  if (meta.lora) throw InputError(meta_path.string() + ": a LoRA checkpoint, not a model");
  check_layout(meta_path, meta);
  const UnitTensors read = checkpoint_tensors(base, meta);
  return [read, &m, &adapter](std::size_t u) {
    std::vector<at::Tensor> out = read(u);
    const auto names = model_spec(m).hf_tensors(m, u);
    for (std::size_t i = 0; i < out.size(); ++i)
      if (const at::Tensor d = adapter.delta(names[i].name); d.defined()) out[i].add_(d);
    return out;
  };
}

// A base's HF tensors with an adapter's deltas added (each read as fp32).
UnitTensors merged_tensors(const fs::path& base, const ModelConfig& m, const HfAdapter& adapter) {
  if (path_exists(base / "metadata.json")) return merged_checkpoint_tensors(base, m, adapter);
  check_hf_config(base, m);
  auto weights = std::make_shared<HfWeights>(base);
  return [weights, base, &m, &adapter](std::size_t u) {
    std::vector<at::Tensor> out;
    for (const auto& t : model_spec(m).hf_tensors(m, u)) {
      const auto [reader, entry] = weights->find(t.name);
      if (!entry) throw InputError(weights->describe() + ": no tensor " + t.name);
      if (entry->shape != t.shape)
        throw InputError(reader->path().string() + ": " + t.name + " has shape " +
                         shape_str(entry->shape) + ", the checkpoint's model needs " +
                         shape_str(t.shape));
      at::Tensor v = at::empty(t.shape, at::kFloat);
      reader->read_f32(*entry, v.data_ptr<float>());
      if (const at::Tensor d = adapter.delta(t.name); d.defined()) v.add_(d);
      out.push_back(v);
    }
    return out;
  };
}

fs::path adapter_base(const fs::path& meta_path, const CheckpointMeta& meta,
                      const AdapterExport& a) {
  const fs::path base = a.base.empty() ? fs::path(meta.lora->base) : a.base;
  if (!directory_exists(base))
    throw InputError(meta_path.string() + ": its base " + base.string() +
                     " is not a directory here: pass --base DIR (the base's Hugging Face files)");
  const std::string now = base_fingerprint(base);
  if (now != meta.lora->base_fingerprint)
    throw InputError(base.string() + ": not the base the adapters were trained on (fingerprint " +
                     now.substr(0, 16) + ", the checkpoint's " +
                     meta.lora->base_fingerprint.substr(0, 16) + ")");
  return base;
}

void make_output_dir(const fs::path& out) {
  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out))
    throw InputError(out.string() + ": cannot create the output directory" +
                     (ec ? " (" + ec.message() + ")" : ""));
}

// A LoRA checkpoint as a PEFT adapter directory.
ExportResult export_peft(ExportResult r, const CheckpointMeta& meta, const fs::path& out,
                         const std::string& dtype) {
  const HfAdapter adapter = checkpoint_adapter(r.step_dir, meta);
  make_output_dir(out);
  io::StagingDir stage(out, "wireup-export");
  r.bytes = write_peft_adapter(adapter, meta.model, stage.path(), dtype);
  stage.move_into_output({"adapter_model.safetensors", "adapter_config.json"});
  for (const auto& [name, pair] : adapter.weights) r.params += pair.a.numel() + pair.b.numel();
  r.tensors = static_cast<std::int64_t>(2 * adapter.weights.size());
  r.kind = "peft";
  return r;
}

// The model's weights from `source` as an HF directory in `out`.
ExportResult write_model(ExportResult r, const CheckpointMeta& meta, const fs::path& out,
                         const std::string& dtype, std::uint64_t max_shard_bytes,
                         const UnitTensors& source) {
  make_output_dir(out);
  // Everything is written into a staging directory first and moved in at the
  // end: a failed export leaves an earlier one as it was.
  io::StagingDir stage(out, "wireup-export");

  const ExportFiles files = plan_files(meta.model, dtype, max_shard_bytes);
  r.tensors = static_cast<std::int64_t>(files.entries.size());
  r.files = files.shards;
  write_weights(meta, files, stage.path(), r, source);
  std::vector<std::string> staged(files.files.begin(), files.files.end());
  staged.erase(std::unique(staged.begin(), staged.end()), staged.end());
  if (files.shards > 1) {
    std::vector<std::string> names;
    for (const auto& e : files.entries) names.push_back(e.name);
    io::write_atomically(stage.file("model.safetensors.index.json"),
                         hf::index_json(names, files.files, files.total_bytes));
    staged.push_back("model.safetensors.index.json");
  }

  // Moved in: the old config.json goes first (a directory with config.json
  // holds a complete export), then the earlier weights, then the new ones,
  // config.json last.
  std::error_code ec;
  fs::remove(out / "config.json", ec);
  for (const auto& e : fs::directory_iterator(out))
    if (e.is_regular_file() && stale_weight_file(e.path().filename().string()))
      fs::remove(e.path(), ec);
  stage.move_into_output(staged);
  io::write_atomically(out / "config.json", hf::config_json(meta.model, dtype));
  return r;
}

}  // namespace

ExportResult export_hf(const fs::path& checkpoint, const fs::path& out, const std::string& dtype,
                       std::uint64_t max_shard_bytes, const AdapterExport& adapter) {
  if (dtype != "float32" && dtype != "bfloat16")
    throw InputError("--dtype " + dtype + ": expected float32 or bfloat16");
  ExportResult r;
  r.step_dir = resolve_step_dir(checkpoint);
  const fs::path meta_path = r.step_dir / "metadata.json";
  const CheckpointMeta meta = checkpoint_meta_from_json(read_text(meta_path), meta_path.string());
  r.step = meta.step;
  if (!meta.lora) {
    if (adapter.merge || !adapter.base.empty())
      throw InputError(meta_path.string() +
                       ": --merge and --base apply to a LoRA checkpoint; this one holds a model");
    check_layout(meta_path, meta);
    return write_model(r, meta, out, dtype, max_shard_bytes, checkpoint_tensors(r.step_dir, meta));
  }
  try {
    check_model_config(meta.model);
  } catch (const InputError& e) {
    throw InputError(meta_path.string() + ": " + e.what());
  }
  if (!adapter.merge) {
    if (!adapter.base.empty()) throw InputError("--base applies with --merge only");
    return export_peft(r, meta, out, dtype);
  }
  const fs::path base = adapter_base(meta_path, meta, adapter);
  const HfAdapter weights = checkpoint_adapter(r.step_dir, meta);
  r = write_model(r, meta, out, dtype, max_shard_bytes, merged_tensors(base, meta.model, weights));
  r.kind = "merged";
  return r;
}

}  // namespace wireup::train
