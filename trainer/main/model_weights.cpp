#include "main/model_weights.hpp"

#include <nlohmann/json.hpp>
#include <vector>

#include "checkpoint/checkpoint_files.hpp"
#include "checkpoint/checkpoint_format.hpp"
#include "checkpoint/checkpointer.hpp"
#include "eval/model_size.hpp"
#include "hf/hf_config.hpp"
#include "hf/hf_import.hpp"
#include "main/run_setup.hpp"
#include "main/training_state.hpp"
#include "wireup/chat/chat_template.hpp"
#include "wireup/error.hpp"
#include "wireup/file_io.hpp"

namespace wireup::train {

namespace fs = std::filesystem;

namespace {

// Qwen3's tokenizer_config.json is 10 KB, Llama 3.1's 55 KB.
constexpr std::uint64_t kMaxTokenizerConfigBytes = 16ull << 20;

// DIR/tokenizer_config.json's chat_template when it is a published
// template's text; "" when there is no such file or another text.
std::string published_template_in(const fs::path& dir) {
  const fs::path file = dir / "tokenizer_config.json";
  if (!path_exists(file)) return "";
  const std::string text = read_text(file, kMaxTokenizerConfigBytes);
  io::check_json_shape(text, file, 64, 1u << 20);
  const auto j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("chat_template") || !j["chat_template"].is_string()) return "";
  const auto t = chat::template_of_published_text(j["chat_template"].get<std::string>());
  return t ? chat::template_name(*t) : "";
}

}  // namespace

Weights find_weights(const std::string& init_from_hf, const std::string& resume_from_checkpoint) {
  Weights w;
  if (!init_from_hf.empty()) {
    w.hf_dir = init_from_hf;
    if (!directory_exists(w.hf_dir))
      throw InputError("--init_from_hf " + init_from_hf + ": no such directory");
    const fs::path config = w.hf_dir / "config.json";
    w.model = model_config_from_hf_config(read_text(config, hf::kMaxConfigBytes), config.string());
    w.source = config.string();
    w.chat_template = published_template_in(w.hf_dir);
    w.chat_template_source = (w.hf_dir / "tokenizer_config.json").string();
    return w;
  }
  const fs::path p = resume_from_checkpoint;
  if (!path_exists(p))
    throw InputError("--resume_from_checkpoint " + p.string() + ": no such directory");
  if (path_exists(p / "metadata.json")) {
    w.step_dir = p;
  } else {
    const auto complete = complete_checkpoints(p);
    if (complete.empty())
      throw InputError("--resume_from_checkpoint " + p.string() +
                       ": no complete checkpoint (no metadata.json, no step-*/metadata.json)");
    w.step_dir = complete.front();
  }
  const fs::path meta = w.step_dir / "metadata.json";
  const CheckpointMeta m = checkpoint_meta_from_json(read_text(meta), meta.string());
  w.model = m.model;
  w.chat_template = m.chat_template;
  w.source = w.chat_template_source = meta.string();
  return w;
}

void load_weights(ShardedModel& model, const Weights& weights, const CommGroups& groups,
                  const WorldLayout& w) {
  if (!weights.hf_dir.empty()) {
    load_hf_into(model, weights.hf_dir.string());
    return;
  }
  Checkpointer(CheckpointPolicy{}, groups, weights_state(model.base_units()))  // the moments left unread
      .load(weights.step_dir.string(), model.config());
  say(w, "[init] from_checkpoint=" + weights.step_dir.string());
}

}  // namespace wireup::train
