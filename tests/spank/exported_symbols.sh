#!/usr/bin/env bash
# The plugin exports exactly Slurm's entry points: no C++ symbol can clash
# with another plugin loaded into the same slurmstepd. Where the headers know
# slurm_spank_init_failure_mode (Slurm 25.05+), it is exported and holds
# ESPANK_JOB_FAILURE, so a failure fails the job and never drains the node.
# Usage: exported_symbols.sh PLUGIN.so HAS_FAILURE_MODE(ON|OFF) SLURM_INCLUDE_DIR
set -euo pipefail
so=$1 has_mode=${2:-OFF} include=${3:-/usr/include}
source "$(dirname "$0")/../lib/assert.sh"
syms=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
echo "$syms"
bad=$(grep -Ev '^(slurm_spank_[a-z_]+|plugin_(name|type|version))$' <<<"$syms" || true)
check "no unexpected exports" "$bad" ""
for need in plugin_name plugin_type plugin_version slurm_spank_init slurm_spank_task_init \
  slurm_spank_job_prolog slurm_spank_job_epilog; do
  check "$need exported" "$(grep -cx "$need" <<<"$syms")" 1
done
mode_line=$(nm -D --defined-only -S "$so" | awk '$4 == "slurm_spank_init_failure_mode"')
if [[ $has_mode != ON ]]; then
  check "headers without ESPANK_JOB_FAILURE: no failure-mode symbol" "$mode_line" ""
  finish
  exit
fi
read -r addr size type _ <<<"$mode_line"
check "failure mode is a 4-byte data object" "$size $type" "0000000000000004 D"
# Its value, read from the file, against the headers' ESPANK_JOB_FAILURE.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '#include <stdio.h>\n#include <slurm/spank.h>\nint main(void) { printf("%%d\\n", (int)ESPANK_JOB_FAILURE); return 0; }\n' >"$tmp/v.c"
cc -I"$include" -o "$tmp/v" "$tmp/v.c"
want=$("$tmp/v")
stop=$(printf '0x%x' $((0x$addr + 4)))
bytes=$(objdump -s --start-address="0x$addr" --stop-address="$stop" "$so" |
  awk '/^ [0-9a-f]+ /{print $2; exit}')
got=$((0x${bytes:6:2}${bytes:4:2}${bytes:2:2}${bytes:0:2}))
check "slurm_spank_init_failure_mode = ESPANK_JOB_FAILURE ($want)" "$got" "$want"
finish
