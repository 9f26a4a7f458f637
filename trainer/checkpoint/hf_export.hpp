#pragma once
#include <filesystem>
#include <string>

#include "checkpoint/hf_config.hpp"
#include "config/model_config.hpp"

namespace wireup::train {

class FsdpLlama;

// `wireup-train export --checkpoint DIR_OR_STEP_DIR --out OUTDIR [--dtype float32|bfloat16]`:
// writes a Hugging Face Llama checkpoint (model.safetensors or shards + config.json)
// from any wireup checkpoint, whatever world size wrote it. argv[0] is
// "export". Returns the process exit code (InputError propagates: exit 2).
int run_export(int argc, char** argv);

struct ExportResult {
  std::filesystem::path step_dir;
  std::int64_t step = 0;
  std::int64_t tensors = 0;
  std::int64_t params = 0;
  std::uint64_t bytes = 0;  // of the safetensors files
  std::size_t files = 1;    // safetensors files (more than one: with an index)
};

// The work of `export`. `checkpoint`: a step directory (with metadata.json) or
// a checkpoint directory (its newest complete step). Every chunk read is
// checked against its SHA-256. `dtype`: "float32" or "bfloat16". Output files
// appear atomically (temporary names, then rename; config.json last).
// Above `max_shard_bytes` the weights are split into
// model-0000i-of-0000n.safetensors with model.safetensors.index.json; the
// weight files of an earlier export in `out` are replaced. A tied model has
// no lm_head.weight (tie_word_embeddings: true in config.json).
ExportResult export_hf(const std::filesystem::path& checkpoint, const std::filesystem::path& out,
                       const std::string& dtype, std::uint64_t max_shard_bytes = 5000000000ull);

// Reads DIR/config.json and throws InputError (naming the file, every field
// wireup cannot represent and every field differing from `m`) unless it
// describes the same architecture as `m` (hf_config.hpp).
hf::ConfigFacts check_hf_config(const std::filesystem::path& dir, const ModelConfig& m);

// `--init_from_hf DIR`: sets every unit of `model` from a Hugging Face Llama
// checkpoint (config.json + model.safetensors, or a sharded one with
// model.safetensors.index.json; F32, BF16 or F16). Every rank reads the files.
void load_hf_into(FsdpLlama& model, const std::string& dir);

}  // namespace wireup::train
