// wireup-train export: its flags, the export, the [export] line.
#include "main/export_main.hpp"

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <string>

#include "config/command_line.hpp"
#include "hf/hf_config.hpp"
#include "hf/hf_export.hpp"

namespace wireup::train {

int run_export(int argc, char** argv) {
  std::string checkpoint, out, dtype = "float32", max_shard = "5GB", base;
  bool merge = false;
  CLI::App app{
      "wireup-train export: a wireup checkpoint as a Hugging Face Llama directory "
      "(docs/hf-export.md)",
      "wireup-train export"};
  app.allow_windows_style_options(false);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.add_option("--checkpoint", checkpoint,
                 "a step directory (DIR/step-NNNNNNNN) or a checkpoint directory (its newest "
                 "complete step)")
      ->required();
  app.add_option("--out", out, "where model.safetensors and config.json go (created if missing)")
      ->required();
  app.add_option("--dtype", dtype, "float32 (default: the checkpoint's exact values) or bfloat16");
  app.add_option("--max_shard_size", max_shard,
                 "above this, model-0000i-of-0000n.safetensors files and "
                 "model.safetensors.index.json (default 5GB, as Hugging Face)");
  app.add_flag("--merge", merge,
               "a LoRA checkpoint: its base's weights plus the adapters, as a model (default: "
               "the adapters alone, as a PEFT adapter directory)");
  app.add_option("--base", base,
                 "with --merge: the base's Hugging Face directory (default: the one the "
                 "checkpoint names)");
  if (!parse_command_line(app, argc, argv, "export: ", "wireup-train export --help")) return 0;
  const auto t0 = std::chrono::steady_clock::now();
  const ExportResult r = export_hf(
      checkpoint, out, dtype, hf::parse_byte_size(max_shard, "--max_shard_size"), {merge, base});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "[export] step=%lld from=%s to=%s kind=%s tensors=%lld params=%lld dtype=%s bytes=%llu "
      "files=%zu seconds=%.2f\n",
      static_cast<long long>(r.step), r.step_dir.c_str(), out.c_str(), r.kind.c_str(),
      static_cast<long long>(r.tensors), static_cast<long long>(r.params), dtype.c_str(),
      static_cast<unsigned long long>(r.bytes), r.files, s);
  std::fflush(stdout);
  return 0;
}

}  // namespace wireup::train
