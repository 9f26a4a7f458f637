#!/usr/bin/env bash
# The demo: dependencies, build, a 2-node local Slurm cluster with
# spank_wireup, and a real PyTorch job wired by it (`srun --wireup`).
set -euo pipefail
root=$(cd "$(dirname "$0")" && pwd)
build=${WIREUP_BUILD_DIR:-$root/build}
bash "$root/.ci/deps.sh"
bash "$root/.ci/build.sh" "$build"

cluster=$root/tests/cluster/cluster.sh
dir=$(mktemp -d /tmp/wireup-demo.XXXXXX)
export WIREUP_CLUSTER_NODES=2 WIREUP_CLUSTER_PORT=${WIREUP_DEMO_PORT:-27810}
export WIREUP_PLUGSTACK_LINE="optional $build/spank-plugin/spank_wireup.so default=off"
cleanup() { bash "$cluster" stop "$dir" >/dev/null 2>&1 || true; }
trap cleanup EXIT INT TERM
bash "$cluster" start "$dir"
eval "$(bash "$cluster" env "$dir")"

echo; echo "== srun --help lists the plugin's options"
srun --help | grep -A1 -- '--wireup'
echo; echo "== what one task gets, and why (--wireup-verbose)"
srun -N1 -n1 -w ip-127-0-0-3 --wireup-verbose true
echo; echo "== a real PyTorch job: srun -N2 -n4 --wireup python3 allreduce.py"
srun -N2 -n4 --wireup /usr/bin/python3 "$root/tests/clients/allreduce.py"
echo; echo "demo: ok (cluster in $dir is stopped on exit)"
