#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

namespace wireup::train {

struct ExportResult {
  std::filesystem::path step_dir;
  std::int64_t step = 0;
  std::int64_t tensors = 0;
  std::int64_t params = 0;
  std::uint64_t bytes = 0;  // of the safetensors files
  std::size_t files = 1;    // safetensors files (more than one: with an index)
  // What was written: "hf" (a model), "peft" (a LoRA checkpoint's adapters),
  // "merged" (a LoRA checkpoint's adapters added to its base).
  std::string kind = "hf";
};

// A LoRA checkpoint's export: its adapters as a PEFT adapter directory, or
// with `merge` the base's weights plus the adapters (W + alpha/rank B A) as a
// model like any export; the base is `base`, else the directory the
// checkpoint names (--init_from_hf of the run).
struct AdapterExport {
  bool merge = false;
  std::filesystem::path base;
};

// `wireup-train export`'s work: a Hugging Face Llama checkpoint
// (model.safetensors or shards + config.json) from any wireup checkpoint,
// whatever world size wrote it. `checkpoint`: a step directory (with
// metadata.json) or a checkpoint directory (its newest complete step). Every
// chunk read is checked against its SHA-256. `dtype`: "float32" or "bfloat16".
// Output files appear atomically (temporary names, then rename; config.json
// last). Above `max_shard_bytes` the weights are split into
// model-0000i-of-0000n.safetensors with model.safetensors.index.json; the
// weight files of an earlier export in `out` are replaced. A tied model has
// no lm_head.weight (tie_word_embeddings: true in config.json).
// A LoRA checkpoint: see AdapterExport; `adapter.merge` on another is an InputError.
ExportResult export_hf(const std::filesystem::path& checkpoint, const std::filesystem::path& out,
                       const std::string& dtype, std::uint64_t max_shard_bytes = 5000000000ull,
                       const AdapterExport& adapter = {});

}  // namespace wireup::train
