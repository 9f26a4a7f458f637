#!/usr/bin/env bash
# Configures and builds wireup into BUILD_DIR (default: build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
launcher=()
# ccache (in deps.sh) keeps rebuilds of unchanged Torch units cheap.
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
# shellcheck disable=SC2086
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo "${launcher[@]}" ${WIREUP_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
