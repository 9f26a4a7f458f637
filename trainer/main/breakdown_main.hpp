#pragma once

namespace wireup::train {

// `wireup-train breakdown [training flags]`: one step's CUDA kernel time by
// phase (docs/gpu.md). argv[0] is "breakdown".
int run_breakdown(int argc, char** argv);

}  // namespace wireup::train
