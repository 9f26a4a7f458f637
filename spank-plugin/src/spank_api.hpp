#pragma once
// Slurm 22.05's spank.h has no extern "C" guard: without this wrapper g++
// would mangle spank_getenv, slurm_error, ... and the plugin would not load.
extern "C" {
#include <slurm/spank.h>
}
