#!/usr/bin/env bash
# The plugin exports exactly Slurm's entry points: no C++ symbol can clash
# with another plugin loaded into the same slurmstepd.
set -euo pipefail
so=$1
syms=$(nm -D --defined-only "$so" | awk '{print $3}' | sort)
echo "$syms"
bad=$(grep -Ev '^(slurm_spank_[a-z_]+|plugin_(name|type|version))$' <<<"$syms" || true)
[[ -z $bad ]] || { echo "FAIL: unexpected exports: $bad" >&2; exit 1; }
for need in plugin_name plugin_type plugin_version slurm_spank_init slurm_spank_task_init; do
  grep -qx "$need" <<<"$syms" || { echo "FAIL: $need not exported" >&2; exit 1; }
done
echo "exports ok"
