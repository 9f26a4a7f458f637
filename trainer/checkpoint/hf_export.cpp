#include "checkpoint/hf_export.hpp"

#include <ATen/ATen.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <tuple>

#include "checkpoint/checkpoint_files.hpp"
#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint/hf_config.hpp"
#include "checkpoint/hf_layout.hpp"
#include "checkpoint/safetensors.hpp"
#include "fsdp/fsdp_llama.hpp"
#include "model/llama_model.hpp"
#include "wireup/error.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wireup::train {
namespace {

const char* const kUsage =
    "usage: wireup-train export --checkpoint DIR_OR_STEP_DIR --out OUTDIR "
    "[--dtype float32|bfloat16] [--max_shard_size SIZE]\n"
    "  --checkpoint  a step directory (DIR/step-NNNNNNNN) or a checkpoint directory\n"
    "                (its newest complete step)\n"
    "  --out         where model.safetensors and config.json go (created if missing)\n"
    "  --dtype       float32 (default: the checkpoint's exact values) or bfloat16\n"
    "  --max_shard_size  above this, model-0000i-of-0000n.safetensors files and\n"
    "                model.safetensors.index.json (default 5GB, as Hugging Face)\n";

bool rank0() {
  const char* r = std::getenv("RANK");
  return r == nullptr || std::string(r) == "0";
}

// ------------------------------------------------------------ checkpoint side

fs::path resolve_step_dir(const fs::path& p) {
  std::error_code ec;
  if (!fs::exists(p, ec)) throw InputError(p.string() + ": no such checkpoint directory");
  if (fs::exists(p / "metadata.json")) return p;
  if (!fs::is_directory(p)) throw InputError(p.string() + ": not a checkpoint directory");
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
    validate(m);
  } catch (const InputError& e) {
    throw InputError(meta_path.string() + ": " + e.what());
  }
  if (meta.units.size() != hf::num_units(m))
    throw InputError(meta_path.string() + ": " + std::to_string(meta.units.size()) + " units, a " +
                     std::to_string(m.layers) + "-layer Llama has " +
                     std::to_string(hf::num_units(m)));
  for (std::size_t u = 0; u < meta.units.size(); ++u) {
    const auto specs = u == 0                       ? llama::embedding_specs(m)
                       : u + 1 == meta.units.size() ? llama::head_specs(m)
                                                    : llama::block_specs(m);
    const UnitMeta& um = meta.units[u];
    bool same = um.param_names.size() == specs.size() && um.param_shapes.size() == specs.size();
    std::int64_t numel = 0;
    for (std::size_t i = 0; same && i < specs.size(); ++i) {
      same = um.param_names[i] == specs[i].name && um.param_shapes[i] == specs[i].shape;
      numel += specs[i].numel();
    }
    if (!same || numel != um.numel)
      throw InputError(meta_path.string() + ": unit " + um.name +
                       " does not have the Llama parameter layout this build exports");
  }
}

// ------------------------------------------------------------ HF side

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
    if (fs::exists(single)) {
      readers_.push_back(std::make_unique<safetensors::Reader>(single));
      for (const auto& t : readers_[0]->tensors()) where_[t.name] = 0;
      return;
    }
    if (!fs::exists(index))
      throw InputError(single.string() + ": missing (and no model.safetensors.index.json)");
    json j;
    try {
      j = json::parse(read_text(index));
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      throw InputError(index.string() + ": not JSON (" + e.what() + ")");
    }
    if (!j.contains("weight_map") || !j["weight_map"].is_object())
      throw InputError(index.string() + ": no weight_map");
    std::map<std::string, std::size_t> opened;
    for (auto it = j["weight_map"].begin(); it != j["weight_map"].end(); ++it) {
      const std::string file = it->get<std::string>();
      if (file.empty() || file.find('/') != std::string::npos)
        throw InputError(index.string() + ": bad file name '" + file + "'");
      auto o = opened.find(file);
      if (o == opened.end() && !fs::exists(dir / file))
        throw InputError((dir / file).string() + ": missing (" + index.filename().string() +
                         " maps " + it.key() + " to it)");
      if (o == opened.end()) {
        readers_.push_back(std::make_unique<safetensors::Reader>(dir / file));
        o = opened.emplace(file, readers_.size() - 1).first;
      }
      if (!readers_[o->second]->find(it.key()))
        throw InputError((dir / file).string() + ": no tensor " + it.key() + " (named in " +
                         index.filename().string() + ")");
      where_[it.key()] = o->second;
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

// ------------------------------------------------------------ export

namespace {

// Removes the staging directory of an export that did not finish.
struct StageGuard {
  fs::path dir;
  ~StageGuard() {
    std::error_code ec;
    if (!dir.empty()) fs::remove_all(dir, ec);
  }
};

// The weight files and index of an earlier export that this one replaces.
bool stale_weight_file(const std::string& name) {
  return name == "model.safetensors" || name == "model.safetensors.index.json" ||
         (name.rfind("model-", 0) == 0 && name.size() > 12 &&
          name.compare(name.size() - 12, 12, ".safetensors") == 0 &&
          name.find("-of-") != std::string::npos);
}

}  // namespace

ExportResult export_hf(const fs::path& checkpoint, const fs::path& out, const std::string& dtype,
                       std::uint64_t max_shard_bytes) {
  if (dtype != "float32" && dtype != "bfloat16")
    throw InputError("--dtype " + dtype + ": expected float32 or bfloat16");
  ExportResult r;
  r.step_dir = resolve_step_dir(checkpoint);
  const fs::path meta_path = r.step_dir / "metadata.json";
  const CheckpointMeta meta = checkpoint_meta_from_json(read_text(meta_path), meta_path.string());
  check_layout(meta_path, meta);
  r.step = meta.step;
  const ModelConfig& m = meta.model;

  std::error_code ec;
  fs::create_directories(out, ec);
  if (ec || !fs::is_directory(out))
    throw InputError(out.string() + ": cannot create the output directory" +
                     (ec ? " (" + ec.message() + ")" : ""));
  // Everything is written into a staging directory first and moved in at the
  // end: a failed export leaves an earlier one as it was.
  StageGuard stage{out / ".wireup-export-partial"};
  fs::remove_all(stage.dir, ec);
  fs::create_directory(stage.dir, ec);
  if (ec) throw InputError(stage.dir.string() + ": cannot create (" + ec.message() + ")");

  // The tensors in file order (a tied model has no lm_head.weight), split into
  // shards; one shard is model.safetensors.
  const std::string st_dtype = dtype == "bfloat16" ? "BF16" : "F32";
  std::vector<safetensors::TensorEntry> entries;
  std::vector<std::uint64_t> sizes;
  for (std::size_t u = 0; u < hf::num_units(m); ++u)
    for (const auto& t : hf::unit_tensors(m, u)) {
      safetensors::TensorEntry e;
      e.name = t.name;
      e.dtype = st_dtype;
      e.shape = t.shape;
      sizes.push_back(e.numel() * safetensors::dtype_size(st_dtype));
      entries.push_back(e);
    }
  const auto shard_of = hf::plan_shards(sizes, max_shard_bytes);
  const std::size_t shards = shard_of.empty() ? 1 : shard_of.back() + 1;
  std::vector<std::string> files;
  for (std::size_t i = 0; i < entries.size(); ++i)
    files.push_back(shards == 1 ? "model.safetensors" : hf::shard_file_name(shard_of[i], shards));
  r.tensors = static_cast<std::int64_t>(entries.size());
  r.files = shards;

  const std::map<std::string, std::string> st_meta = {
      {"format", "pt"},
      {"wireup_step", std::to_string(meta.step)},
      {"wireup_source", r.step_dir.filename().string()}};
  std::unique_ptr<safetensors::Writer> writer;
  std::size_t next = 0;  // index of the next tensor to write
  auto open_shard = [&] {
    std::vector<safetensors::TensorEntry> mine;
    for (std::size_t i = next; i < entries.size() && files[i] == files[next]; ++i)
      mine.push_back(entries[i]);
    writer = std::make_unique<safetensors::Writer>(stage.dir / files[next], mine, st_meta);
  };
  ChunkReader reader(r.step_dir, meta);
  for (std::size_t u = 0; u < hf::num_units(m); ++u) {
    const std::int64_t numel = meta.units[u].numel;
    at::Tensor flat = at::empty({numel}, at::kFloat);
    reader.read(static_cast<int>(u), "param", 0, numel, flat.data_ptr<float>());
    const auto tensors = hf::unit_to_hf(m, u, flat);
    for (const auto& t : tensors) {
      if (!writer) open_shard();
      writer->write_next(entries[next].name, t.data_ptr<float>(),
                         static_cast<std::uint64_t>(t.numel()));
      r.params += t.numel();
      ++next;
      if (next == entries.size() || files[next] != files[next - 1]) {
        writer->commit();
        r.bytes += writer->bytes_written();
        writer.reset();
      }
    }
  }
  std::uint64_t total = 0;
  for (const auto b : sizes) total += b;
  if (shards > 1) {
    std::vector<std::string> names;
    for (const auto& e : entries) names.push_back(e.name);
    write_atomically(stage.dir / "model.safetensors.index.json",
                     hf::index_json(names, files, total));
  }

  // Moved in: the old config.json goes first (a directory with config.json
  // holds a complete export), then the earlier weights, then the new ones,
  // config.json last.
  fs::remove(out / "config.json", ec);
  for (const auto& e : fs::directory_iterator(out))
    if (e.is_regular_file() && stale_weight_file(e.path().filename().string()))
      fs::remove(e.path(), ec);
  for (const auto& e : fs::directory_iterator(stage.dir))
    fs::rename(e.path(), out / e.path().filename());
  fsync_path(out);
  write_atomically(out / "config.json", hf::config_json(m, dtype));
  return r;
}

int run_export(int argc, char** argv) {
  std::string checkpoint, out, dtype = "float32", max_shard = "5GB";
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i], value;
    if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    const auto eq = a.find('=');
    const bool inline_value = a.rfind("--", 0) == 0 && eq != std::string::npos;
    if (inline_value) {
      value = a.substr(eq + 1);
      a = a.substr(0, eq);
    }
    std::string* dest = a == "--checkpoint"       ? &checkpoint
                        : a == "--out"            ? &out
                        : a == "--dtype"          ? &dtype
                        : a == "--max_shard_size" ? &max_shard
                                                  : nullptr;
    if (!dest) throw InputError("export: unknown argument " + a + "\n" + kUsage);
    if (!inline_value) {
      if (i + 1 >= argc) throw InputError("export: " + a + " needs a value\n" + kUsage);
      value = argv[++i];
    }
    *dest = value;
  }
  if (checkpoint.empty() || out.empty())
    throw InputError(std::string("export: --checkpoint and --out are required\n") + kUsage);
  const auto t0 = std::chrono::steady_clock::now();
  const ExportResult r =
      export_hf(checkpoint, out, dtype, hf::parse_byte_size(max_shard, "--max_shard_size"));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "[export] step=%lld from=%s to=%s tensors=%lld params=%lld dtype=%s bytes=%llu files=%zu "
      "seconds=%.2f\n",
      static_cast<long long>(r.step), r.step_dir.c_str(), out.c_str(),
      static_cast<long long>(r.tensors), static_cast<long long>(r.params), dtype.c_str(),
      static_cast<unsigned long long>(r.bytes), r.files, s);
  std::fflush(stdout);
  return 0;
}

// ------------------------------------------------------------ import

hf::ConfigFacts check_hf_config(const fs::path& dir, const ModelConfig& m) {
  const fs::path path = dir / "config.json";
  const hf::ConfigFacts facts = hf::check_config(read_text(path), path.string(), m);
  if (rank0() && facts.max_position_embeddings && *facts.max_position_embeddings < m.context)
    std::fprintf(stderr,
                 "wireup-train: WARNING: %s: max_position_embeddings=%lld is below "
                 "--max_context_width %lld\n",
                 path.c_str(), static_cast<long long>(*facts.max_position_embeddings),
                 static_cast<long long>(m.context));
  return facts;
}

void load_hf_into(FsdpLlama& model, const std::string& dir_str) {
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path dir(dir_str);
  if (!fs::is_directory(dir)) throw InputError("--init_from_hf " + dir_str + ": no such directory");
  const ModelConfig& m = model.config();
  // Tied in the file, untied here: lm_head starts as a copy of the embedding.
  const bool untie = check_hf_config(dir, m).tied && !m.tied;
  const HfWeights weights(dir);
  auto& units = model.units();
  if (units.size() != hf::num_units(m))
    throw std::logic_error("load_hf_into: model has an unexpected number of units");
  std::int64_t params = 0;
  std::size_t used = 0;
  for (std::size_t u = 0; u < units.size(); ++u) {
    std::vector<at::Tensor> ts;
    for (const auto& spec : hf::unit_tensors(m, u)) {
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
      at::Tensor t = at::empty(spec.shape, at::kFloat);
      reader->read_f32(*entry, t.data_ptr<float>());
      params += t.numel();
      ts.push_back(std::move(t));
    }
    units[u]->load_full(hf::unit_from_hf(m, u, ts));
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
