#!/usr/bin/env bash
# Configures and builds wireup into BUILD_DIR (default: build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
launcher=()
# ccache (in deps.sh) keeps rebuilds of unchanged Torch units cheap.
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# The trainer's precompiled header (WIREUP_TORCH_PCH): ccache caches its units only so.
# Paths below the source tree hashed as relative ones, and the build directory left out of
# the hash (it is in -g's debug info otherwise): another clone reuses the cache.
export CCACHE_SLOPPINESS=${CCACHE_SLOPPINESS:-pch_defines,time_macros}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root}
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" ${WIREUP_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
