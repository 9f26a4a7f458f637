#!/usr/bin/env bash
# bench/run.sh's entry for the launcher: torchrun vs wireup-launch, launch to
# first all_reduce (bench_launch.sh). Usage: run.sh BUILD_DIR OUT.md [REPS]
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-5}}
wl=$build/launcher/wireup-launch
[[ -x $wl ]] || { echo "no $wl: build first" >&2; exit 1; }
bash "$(dirname "$0")/bench_launch.sh" "$wl" "$out" "$reps"
