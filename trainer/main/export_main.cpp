// wireup-train export: its flags, the export, the [export] line.
#include "main/export_main.hpp"

#include <chrono>
#include <cstdio>
#include <string>

#include "hf/hf_config.hpp"
#include "hf/hf_export.hpp"
#include "wireup/error.hpp"

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

}  // namespace

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

}  // namespace wireup::train
