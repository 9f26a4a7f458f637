#include "hf_export.hpp"

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
#include <optional>
#include <tuple>
#include <nlohmann/json.hpp>
#include <sstream>

#include "checkpoint.hpp"
#include "fsdp_model.hpp"
#include "hf_layout.hpp"
#include "llama_math.hpp"
#include "safetensors.hpp"
#include "wireup/sha256.hpp"
#include "wireup/error.hpp"
#include "wireup/train/checkpoint_meta.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace wireup::train {
namespace {

const char* const kUsage =
    "usage: wireup-train export --checkpoint DIR_OR_STEP_DIR --out OUTDIR "
    "[--dtype float32|bfloat16]\n"
    "  --checkpoint  a step directory (DIR/step-NNNNNNNN) or a checkpoint directory\n"
    "                (its newest complete step)\n"
    "  --out         where model.safetensors and config.json go (created if missing)\n"
    "  --dtype       float32 (default: the checkpoint's exact values) or bfloat16\n";

[[noreturn]] void sys_fail(const fs::path& p, const std::string& what) {
  throw InputError(p.string() + ": " + what + ": " + std::strerror(errno));
}

std::string read_text(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw InputError(p.string() + ": cannot read (" + std::strerror(errno) + ")");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void fsync_path(const fs::path& p, int flags) {
  const int fd = ::open(p.c_str(), flags | O_CLOEXEC);
  if (fd < 0) sys_fail(p, "open for fsync");
  const int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) sys_fail(p, "fsync");
}

void write_atomically(const fs::path& path, const std::string& text) {
  const fs::path tmp = path.parent_path() / ("." + path.filename().string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) sys_fail(tmp, "write");
  }
  fsync_path(tmp, O_RDONLY);
  if (std::rename(tmp.c_str(), path.c_str()) != 0) sys_fail(path, "rename");
  fsync_path(path.parent_path(), O_RDONLY | O_DIRECTORY);
}

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

// Reads units' parameters from a step directory, checking each chunk's
// SHA-256 and each file's size before using it.
class CheckpointReader {
 public:
  CheckpointReader(fs::path step_dir, const CheckpointMeta& meta)
      : dir_(std::move(step_dir)), meta_(meta), fds_(meta.files.size(), -1) {}
  ~CheckpointReader() {
    for (int fd : fds_)
      if (fd >= 0) ::close(fd);
  }
  CheckpointReader(const CheckpointReader&) = delete;
  CheckpointReader& operator=(const CheckpointReader&) = delete;

  // The unit's full parameter buffer, fp32 [numel].
  at::Tensor unit_params(int unit) {
    const auto& um = meta_.units.at(static_cast<std::size_t>(unit));
    at::Tensor flat = at::empty({um.numel}, at::kFloat);
    float* out = flat.data_ptr<float>();
    std::vector<float> buf;
    std::map<std::pair<std::size_t, std::size_t>, bool> checked;
    for (const auto& piece : plan_reads(meta_, unit, "param", 0, um.numel)) {
      const RankFile& rf = meta_.files[piece.file];
      const ChunkRef& c = rf.chunks[piece.chunk];
      const fs::path bin = dir_ / rf.file;
      const int fd = open_file(piece.file);
      buf.resize(static_cast<std::size_t>(c.numel));
      const std::size_t bytes = buf.size() * sizeof(float);
      if (c.file_offset + bytes > rf.bytes)
        throw InputError(bin.string() + ": chunk of " + um.name + " lies past the file's end");
      char* p = reinterpret_cast<char*>(buf.data());
      for (std::size_t done = 0; done < bytes;) {
        const ssize_t n = ::pread(fd, p + done, bytes - done,
                                  static_cast<off_t>(c.file_offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) sys_fail(bin, "short read");
        done += static_cast<std::size_t>(n);
      }
      auto& ok = checked[{piece.file, piece.chunk}];
      if (!ok) {  // a checksum covers the whole chunk: read and check it all
        Sha256 h;
        h.update(buf.data(), bytes);
        if (h.hex_digest() != c.sha256)
          throw InputError(bin.string() + ": checksum mismatch in " + um.name + " " + c.kind +
                           " (corrupted)");
        ok = true;
      }
      std::memcpy(out + piece.dest, buf.data() + piece.chunk_skip,
                  static_cast<std::size_t>(piece.count) * sizeof(float));
    }
    return flat;
  }

 private:
  int open_file(std::size_t i) {
    if (fds_[i] >= 0) return fds_[i];
    const RankFile& rf = meta_.files[i];
    const fs::path bin = dir_ / rf.file;
    const int fd = ::open(bin.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) sys_fail(bin, "open");
    fds_[i] = fd;
    struct stat st {};
    if (::fstat(fd, &st) != 0) sys_fail(bin, "stat");
    if (static_cast<std::uint64_t>(st.st_size) != rf.bytes)
      throw InputError(bin.string() + ": " + std::to_string(st.st_size) + " bytes, expected " +
                       std::to_string(rf.bytes) + " (truncated or replaced)");
    return fd;
  }

  fs::path dir_;
  const CheckpointMeta& meta_;
  std::vector<int> fds_;
};

// The checkpoint must hold wireup's Llama units, as this build lays them out.
void check_layout(const fs::path& meta_path, const CheckpointMeta& meta) {
  const ModelConfig& m = meta.model;
  try {
    validate(m);
  } catch (const InputError& e) {
    throw InputError(meta_path.string() + ": " + e.what());
  }
  if (meta.units.size() != hf::num_units(m))
    throw InputError(meta_path.string() + ": " + std::to_string(meta.units.size()) +
                     " units, a " + std::to_string(m.layers) + "-layer Llama has " +
                     std::to_string(hf::num_units(m)));
  for (std::size_t u = 0; u < meta.units.size(); ++u) {
    const auto specs = u == 0                     ? llama::embedding_specs(m)
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

std::string hf_config_json(const ModelConfig& m, const std::string& torch_dtype) {
  json j = {
      {"architectures", {"LlamaForCausalLM"}},
      {"model_type", "llama"},
      {"hidden_size", m.hidden},
      {"intermediate_size", m.intermediate},
      {"num_attention_heads", m.heads},
      {"num_key_value_heads", m.kv_heads},
      {"num_hidden_layers", m.layers},
      {"head_dim", m.head_dim()},
      {"vocab_size", m.vocab},
      {"max_position_embeddings", m.context},
      {"rope_theta", m.rope_theta},
      {"rope_scaling", nullptr},
      {"rms_norm_eps", m.norm_eps},
      {"hidden_act", "silu"},
      {"attention_bias", false},
      {"attention_dropout", 0.0},
      {"mlp_bias", false},
      {"pretraining_tp", 1},
      {"initializer_range", 0.02},
      {"tie_word_embeddings", false},
      {"use_cache", true},
      {"torch_dtype", torch_dtype},
  };
  return j.dump(2) + "\n";
}

ExportResult export_hf(const fs::path& checkpoint, const fs::path& out, const std::string& dtype) {
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

  std::vector<safetensors::TensorEntry> entries;
  for (std::size_t u = 0; u < hf::num_units(m); ++u)
    for (const auto& t : hf::unit_tensors(m, u)) {
      safetensors::TensorEntry e;
      e.name = t.name;
      e.dtype = dtype == "bfloat16" ? "BF16" : "F32";
      e.shape = t.shape;
      entries.push_back(e);
    }
  r.tensors = static_cast<std::int64_t>(entries.size());
  safetensors::Writer writer(out / "model.safetensors", entries,
                             {{"format", "pt"},
                              {"wireup_step", std::to_string(meta.step)},
                              {"wireup_source", r.step_dir.filename().string()}});
  CheckpointReader reader(r.step_dir, meta);
  for (std::size_t u = 0; u < hf::num_units(m); ++u) {
    const at::Tensor flat = reader.unit_params(static_cast<int>(u));
    const auto specs = hf::unit_tensors(m, u);
    const auto tensors = hf::unit_to_hf(m, u, flat);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      writer.write_next(specs[i].name, tensors[i].data_ptr<float>(),
                        static_cast<std::uint64_t>(tensors[i].numel()));
      r.params += tensors[i].numel();
    }
  }
  writer.commit();
  r.bytes = writer.bytes_written();
  // config.json last: a directory with it holds a complete export.
  write_atomically(out / "config.json", hf_config_json(m, dtype));
  return r;
}

int run_export(int argc, char** argv) {
  std::string checkpoint, out, dtype = "float32";
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
    std::string* dest = a == "--checkpoint" ? &checkpoint
                        : a == "--out"      ? &out
                        : a == "--dtype"    ? &dtype
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
  const ExportResult r = export_hf(checkpoint, out, dtype);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("[export] step=%lld from=%s to=%s tensors=%lld params=%lld dtype=%s bytes=%llu "
              "seconds=%.2f\n",
              static_cast<long long>(r.step), r.step_dir.c_str(), out.c_str(),
              static_cast<long long>(r.tensors), static_cast<long long>(r.params), dtype.c_str(),
              static_cast<unsigned long long>(r.bytes), s);
  std::fflush(stdout);
  return 0;
}

// ------------------------------------------------------------ import

void check_hf_config(const fs::path& dir, const ModelConfig& m) {
  const fs::path path = dir / "config.json";
  json c;
  try {
    c = json::parse(read_text(path));
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    throw InputError(path.string() + ": not JSON (" + e.what() + ")");
  }
  if (!c.is_object()) throw InputError(path.string() + ": not a JSON object");
  std::vector<std::string> diffs;
  auto integer = [&](const char* key, std::int64_t want, const char* flag,
                     std::optional<std::int64_t> fallback = std::nullopt) {
    std::int64_t have = 0;
    if (c.contains(key) && c[key].is_number_integer()) {
      have = c[key].get<std::int64_t>();
    } else if (!c.contains(key) && fallback) {
      have = *fallback;
    } else {
      diffs.push_back(std::string(key) + " is missing or not an integer");
      return;
    }
    if (have != want)
      diffs.push_back(std::string(key) + "=" + std::to_string(have) + " but " + flag + " " +
                      std::to_string(want));
  };
  integer("hidden_size", m.hidden, "--hidden_width");
  integer("intermediate_size", m.intermediate, "--intermediate_size");
  integer("num_hidden_layers", m.layers, "--num_layers");
  integer("num_attention_heads", m.heads, "--num_heads");
  // HF's default for num_key_value_heads: as many as attention heads (no GQA).
  std::optional<std::int64_t> heads;
  if (c.contains("num_attention_heads") && c["num_attention_heads"].is_number_integer())
    heads = c["num_attention_heads"].get<std::int64_t>();
  integer("num_key_value_heads", m.kv_heads, "--num_key_value_heads", heads);
  integer("vocab_size", m.vocab, "--vocab_size");
  if (c.contains("head_dim") && !c["head_dim"].is_null())
    integer("head_dim", m.head_dim(), "hidden/heads =");
  auto real = [&](const char* key, double want, const char* what, double fallback) {
    const double have = c.contains(key) && c[key].is_number() ? c[key].get<double>() : fallback;
    if (std::abs(have - want) > 1e-9 * std::max(std::abs(want), 1.0)) {
      char buf[200];
      std::snprintf(buf, sizeof buf, "%s=%g but %s %g", key, have, what, want);
      diffs.push_back(buf);
    }
  };
  real("rope_theta", m.rope_theta, "--rope_theta", 10000.0);
  real("rms_norm_eps", m.norm_eps, "wireup's RMSNorm eps is", 1e-6);
  if (c.contains("rope_scaling") && !c["rope_scaling"].is_null())
    diffs.push_back("rope_scaling=" + c["rope_scaling"].dump() + " is not supported (plain RoPE only)");
  if (c.value("hidden_act", std::string("silu")) != "silu")
    diffs.push_back("hidden_act=" + c["hidden_act"].dump() + " (wireup's Llama uses silu)");
  for (const char* key : {"attention_bias", "mlp_bias"})
    if (c.contains(key) && c[key].is_boolean() && c[key].get<bool>())
      diffs.push_back(std::string(key) + "=true (wireup's Llama has no biases)");
  if (c.contains("model_type") && c["model_type"] != "llama")
    diffs.push_back("model_type=" + c["model_type"].dump() + " (a llama checkpoint is expected)");
  if (!diffs.empty()) {
    std::string msg = path.string() + ": does not match the model flags:";
    for (const auto& d : diffs) msg += "\n  " + d;
    throw InputError(msg);
  }
  if (rank0() && c.contains("max_position_embeddings") &&
      c["max_position_embeddings"].is_number_integer() &&
      c["max_position_embeddings"].get<std::int64_t>() < m.context)
    std::fprintf(stderr, "wireup-train: WARNING: %s: max_position_embeddings=%lld is below "
                 "--max_context_width %lld\n", path.c_str(),
                 static_cast<long long>(c["max_position_embeddings"].get<std::int64_t>()),
                 static_cast<long long>(m.context));
}

void load_hf_into(FsdpLlama& model, const std::string& dir_str) {
  const auto t0 = std::chrono::steady_clock::now();
  const fs::path dir(dir_str);
  if (!fs::is_directory(dir)) throw InputError("--init_from_hf " + dir_str + ": no such directory");
  const ModelConfig& m = model.config();
  check_hf_config(dir, m);
  const json config = json::parse(read_text(dir / "config.json"));
  const bool tied = config.contains("tie_word_embeddings") &&
                    config["tie_word_embeddings"].is_boolean() &&
                    config["tie_word_embeddings"].get<bool>();
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
      if (!entry && tied && spec.name == "lm_head.weight")
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
                tied ? " tied_embeddings=untied" : "", s);
    std::fflush(stdout);
  }
}

}  // namespace wireup::train
