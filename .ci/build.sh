#!/usr/bin/env bash
# Configures and builds wireup into BUILD_DIR (default: build/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${WIREUP_CMAKE_ARGS:-}
cmake --build "$build" -j "$(nproc)"
