#include "main/model_weights.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "checkpoint/checkpoint_files.hpp"
#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint/checkpointer.hpp"
#include "eval/model_size.hpp"
#include "hf/hf_config.hpp"
#include "hf/hf_import.hpp"
#include "hf/peft_files.hpp"
#include "main/run_setup.hpp"
#include "main/training_state.hpp"
#include "models/family_registry.hpp"
#if WIREUP_HAVE_TOKENIZER
#include "wireup/chat/chat_template.hpp"
#endif
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace wireup::train {

namespace fs = std::filesystem;

namespace {

// Qwen3's tokenizer_config.json is 10 KB, Llama 3.1's 55 KB.
constexpr std::uint64_t kMaxTokenizerConfigBytes = 16ull << 20;

// DIR/tokenizer_config.json's chat_template when it is a published
// template's text; "" when there is no such file or another text (always,
// built without the tokenizer library: --chat is refused there).
std::string published_template_in(const fs::path& dir) {
#if !WIREUP_HAVE_TOKENIZER
  (void)dir;
  return "";
#else
  const fs::path file = dir / "tokenizer_config.json";
  if (!path_exists(file)) return "";
  const std::string text = read_text(file, kMaxTokenizerConfigBytes);
  io::check_json_shape(text, file, 64, 1u << 20);
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("chat_template") || !j["chat_template"].is_string()) return "";
  const auto t = chat::template_of_published_text(j["chat_template"].get<std::string>());
  return t ? chat::template_name(*t) : "";
#endif
}

// An HF directory's weights, with a PEFT adapter's when given.
Weights hf_weights(const std::string& dir, const std::string& lora_adapter) {
  Weights w;
  w.hf_dir = dir;
  w.lora_adapter = lora_adapter;
  if (!directory_exists(w.hf_dir))
    throw InputError("--init_from_hf " + dir + ": no such directory");
  const fs::path config = w.hf_dir / "config.json";
  w.model = model_config_from_hf_config(read_text(config, hf::kMaxConfigBytes), config.string());
  w.source = config.string();
  w.chat_template = published_template_in(w.hf_dir);
  w.chat_template_source = (w.hf_dir / "tokenizer_config.json").string();
  return w;
}

}  // namespace

namespace {

// A step directory: DIR itself (with metadata.json), or DIR's newest complete step.
fs::path resolve_step(const fs::path& p, const std::string& flag) {
  if (!path_exists(p)) throw InputError(flag + " " + p.string() + ": no such directory");
  if (path_exists(p / "metadata.json")) return p;
  const auto complete = complete_checkpoints(p);
  if (complete.empty())
    throw InputError(flag + " " + p.string() +
                     ": no complete checkpoint (no metadata.json, no step-*/metadata.json)");
  return complete.front();
}

// A LoRA checkpoint's base, checked against the fingerprint it records.
Weights lora_base(const fs::path& lora_step, const CheckpointMeta& m) {
  const fs::path meta = lora_step / "metadata.json";
  const fs::path base = m.lora->base;
  if (!directory_exists(base))
    throw InputError(meta.string() + ": a LoRA checkpoint whose base " + base.string() +
                     " is not a directory here: pass --init_from_hf BASE --lora_adapter DIR "
                     "(its export)");
  if (base_fingerprint(base) != m.lora->base_fingerprint)
    throw InputError(meta.string() + ": its base " + base.string() +
                     " has changed since the adapters were trained (another fingerprint)");
  if (!path_exists(base / "metadata.json")) return hf_weights(base.string(), "");
  Weights w;
  w.step_dir = base;
  const fs::path base_meta = base / "metadata.json";
  const CheckpointMeta bm = checkpoint_meta_from_json(read_text(base_meta), base_meta.string());
  if (bm.lora)
    throw InputError(meta.string() + ": its base " + base.string() +
                     " is a LoRA checkpoint itself: export --merge it and train on that");
  w.model = bm.model;
  w.source = base_meta.string();
  return w;
}

}  // namespace

Weights checkpoint_weights(const std::string& dir, const std::string& flag) {
  Weights w;
  w.step_dir = resolve_step(dir, flag);
  const fs::path meta = w.step_dir / "metadata.json";
  const CheckpointMeta m = checkpoint_meta_from_json(read_text(meta), meta.string());
  if (m.lora) {  // its adapters on the base it names
    Weights lw = lora_base(w.step_dir, m);
    lw.lora_step_dir = w.step_dir;
    lw.chat_template = m.chat_template;
    lw.chat_template_source = meta.string();
    return lw;
  }
  w.model = m.model;
  w.chat_template = m.chat_template;
  w.source = w.chat_template_source = meta.string();
  return w;
}

void resolve_train_shape(TrainOptions& o) {
  if (o.preset_given) return;
  ModelConfig m;
  if (!o.init_from_hf.empty()) {
    if (!directory_exists(o.init_from_hf))
      throw InputError("--init_from_hf " + o.init_from_hf + ": no such directory");
    const fs::path config = fs::path(o.init_from_hf) / "config.json";
    m = model_config_from_hf_config(read_text(config, hf::kMaxConfigBytes), config.string());
    o.preset = "init_from_hf";
  } else if (!o.init_from_checkpoint.empty()) {
    m = checkpoint_weights(o.init_from_checkpoint, "--init_from_checkpoint").model;
    o.preset = "init_from_checkpoint";
  } else {
    return;  // the default preset's shape
  }
  m.context = o.model.context;  // --max_context_width, else the default preset's
  o.model = apply_shape_flags(m, o.shape_flags);
}

Weights find_weights(const std::string& init_from_hf, const std::string& resume_from_checkpoint,
                     const std::string& lora_adapter) {
  if (!init_from_hf.empty()) return hf_weights(init_from_hf, lora_adapter);
  return checkpoint_weights(resume_from_checkpoint, "--resume_from_checkpoint");
}

void load_weights(ShardedModel& model, const Weights& weights, const CommGroups& groups,
                  const WorldLayout& w) {
  std::optional<HfAdapter> adapter;
  if (!weights.lora_step_dir.empty()) {
    const fs::path meta = weights.lora_step_dir / "metadata.json";
    adapter = checkpoint_adapter(weights.lora_step_dir,
                                 checkpoint_meta_from_json(read_text(meta), meta.string()));
  } else if (!weights.lora_adapter.empty()) {
    adapter = read_peft_adapter(weights.lora_adapter, model.config());
  }
  if (!weights.hf_dir.empty()) {
    load_hf_into(model, weights.hf_dir.string(), adapter ? &*adapter : nullptr);
  } else {
    Checkpointer(CheckpointPolicy{}, groups, weights_state(model.base_units()))  // moments unread
        .load(weights.step_dir.string(), {model.config(), std::nullopt});
    say(w, "[init] from_checkpoint=" + weights.step_dir.string());
    if (adapter) add_adapter_into(model, *adapter);
  }
  if (!weights.lora_step_dir.empty())
    say(w, "[init] lora_checkpoint=" + weights.lora_step_dir.string());
  else if (adapter)
    say(w, "[init] lora_adapter=" + weights.lora_adapter.string() +
               " rank=" + std::to_string(adapter->lora.rank) +
               " targets=" + lora::targets_csv(adapter->lora.targets));
}

void load_start_weights(ShardedModel& model, const TrainOptions& o, const CommGroups& groups,
                        const WorldLayout& w) {
  if (!o.init_from_hf.empty())
    load_hf_into(model, o.init_from_hf);
  else if (!o.init_from_checkpoint.empty())
    load_weights(model, checkpoint_weights(o.init_from_checkpoint, "--init_from_checkpoint"),
                 groups, w);
}

std::optional<AdapterMeta> lora_identity(const TrainOptions& o, const WorldLayout& w,
                                         ShardedModel& model) {
  if (!model.lora()) return std::nullopt;
  // The base: the Hugging Face directory, or the checkpoint's step directory.
  const fs::path base =
      o.init_from_hf.empty()
          ? checkpoint_weights(o.init_from_checkpoint, "--init_from_checkpoint").step_dir
          : fs::path(o.init_from_hf);
  AdapterMeta a{o.lora, fs::absolute(base).lexically_normal().string(), base_fingerprint(base)};
  std::int64_t adapters = 0;
  for (const auto* u : model.trainable_units()) adapters += u->numel();
  const auto params = static_cast<double>(total_params(o.model));
  char line[320];
  std::snprintf(line, sizeof line,
                "[lora] rank=%lld alpha=%g dropout=%g targets=%s adapter_params=%lld "
                "base_params=%.0f (%.3f%%) base_fingerprint=%.16s",
                static_cast<long long>(o.lora.rank), o.lora.alpha, o.lora.dropout,
                lora::targets_csv(o.lora.targets).c_str(), static_cast<long long>(adapters), params,
                100.0 * static_cast<double>(adapters) / params, a.base_fingerprint.c_str());
  say(w, line);
  return a;
}

}  // namespace wireup::train
