#pragma once
namespace wireup::train {

// `wireup-train export --checkpoint DIR_OR_STEP_DIR --out OUTDIR [--dtype float32|bfloat16]
// [--max_shard_size SIZE]` (argv[0] is "export"): hf/hf_export.hpp's export_hf
// and its one-line report. Returns the process exit code (InputError
// propagates: exit 2).
int run_export(int argc, char** argv);

}  // namespace wireup::train
