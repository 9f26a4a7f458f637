#pragma once
#include <filesystem>
#include <string>

#include "config/model_config.hpp"

namespace wireup::train {

class FsdpLlama;

// `wireup-train export --checkpoint DIR_OR_STEP_DIR --out OUTDIR [--dtype float32|bfloat16]`:
// writes a Hugging Face Llama checkpoint (model.safetensors + config.json)
// from any wireup checkpoint, whatever world size wrote it. argv[0] is
// "export". Returns the process exit code (InputError propagates: exit 2).
int run_export(int argc, char** argv);

struct ExportResult {
  std::filesystem::path step_dir;
  std::int64_t step = 0;
  std::int64_t tensors = 0;
  std::int64_t params = 0;
  std::uint64_t bytes = 0;  // of model.safetensors
};

// The work of `export`. `checkpoint`: a step directory (with metadata.json) or
// a checkpoint directory (its newest complete step). Every chunk read is
// checked against its SHA-256. `dtype`: "float32" or "bfloat16". Output files
// appear atomically (temporary names, then rename; config.json last).
ExportResult export_hf(const std::filesystem::path& checkpoint, const std::filesystem::path& out,
                       const std::string& dtype);

// The Hugging Face config.json of a model (LlamaForCausalLM).
std::string hf_config_json(const ModelConfig& m, const std::string& torch_dtype);

// Reads DIR/config.json and throws InputError (naming the file and every
// differing field) unless it describes the same architecture as `m`.
void check_hf_config(const std::filesystem::path& dir, const ModelConfig& m);

// `--init_from_hf DIR`: sets every unit of `model` from a Hugging Face Llama
// checkpoint (config.json + model.safetensors, or a sharded one with
// model.safetensors.index.json; F32, BF16 or F16). Every rank reads the files.
void load_hf_into(FsdpLlama& model, const std::string& dir);

}  // namespace wireup::train
