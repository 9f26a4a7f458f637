#!/usr/bin/env bash
# allreduce-check.sbatch on the cluster (Gloo on CPU, python3-torch): srun
# --wireup (one task per rank) and wireup-launch (one agent per node, through PMIx
# and with LAUNCH_MPI=none) complete with every sum right and one wiring line per node; a bandwidth
# floor that cannot be met fails the job and says so.
# shellcheck source=tests/templates/lib.sh
source "$(dirname "$0")/lib.sh"
T=$TEMPLATES/allreduce-check.sbatch
export MAX_BYTES=4194304 ITERS=3 WARMUP=1

rc=$(run_job srun 120 -N 2 --ntasks-per-node=2 -t 5 "$T")
show srun
check "srun --wireup: job completes" "$rc" 0
out=$(cat "$WORK/srun.out")
contains "srun --wireup: 4 ranks over gloo" "$out" "[check] backend=gloo world=4"
check "srun --wireup: one wiring line per node" "$(grep -c '^\[wiring\] node=ip-127-0-0-[0-9]* first_rank=[02] local_world=2 master=127\.0\.0\.[0-9]*:6[0-9]*' <<<"$out")" 2
check "srun --wireup: every size right" "$(grep -c '^\[check\] *[0-9]\+ .* ok$' <<<"$out")" 2
contains "srun --wireup: verdict" "$out" "[check] ok: 4 ranks, every sum right"

rc=$(LAUNCHER=wireup-launch run_job launch 120 -N 2 --ntasks-per-node=2 -t 5 "$T")
show launch
check "wireup-launch: job completes" "$rc" 0
contains "wireup-launch: verdict" "$(cat "$WORK/launch.out")" "[check] ok: 4 ranks, every sum right"
contains "wireup-launch: through PMIx (auto)" "$(cat "$WORK/launch.out")" "[job] wireup-launch agents: srun --mpi=pmix"
rc=$(LAUNCHER=wireup-launch LAUNCH_MPI=none run_job nopmix 120 -N 2 --ntasks-per-node=2 -t 5 "$T")
show nopmix
check "wireup-launch without PMIx: job completes" "$rc" 0
contains "wireup-launch without PMIx: srun --mpi=none" "$(cat "$WORK/nopmix.out")" "[job] wireup-launch agents: srun --mpi=none"
contains "wireup-launch without PMIx: verdict" "$(cat "$WORK/nopmix.out")" "[check] ok: 4 ranks, every sum right"

rc=$(MIN_BUSBW_GBPS=100000 MAX_BYTES=1048576 run_job slow 120 -N 2 --ntasks-per-node=1 -t 5 "$T")
expect "bandwidth floor not met: job fails" test "$rc" != 0
contains "bandwidth floor not met: says so" "$(cat "$WORK/slow.out")" "is below MIN_BUSBW_GBPS=100000"
nodes_idle
finish
