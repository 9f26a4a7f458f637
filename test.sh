#!/usr/bin/env bash
# The whole test suite on a fresh machine: dependencies, build, every test
# (unit, fuzz, and integration on a real local Slurm cluster).
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
build=${WIREUP_BUILD_DIR:-$root/build}
bash "$root/.ci/deps.sh"
bash "$root/.ci/build.sh" "$build"
cd "$build"
ctest --output-on-failure -j 2 --timeout 900
