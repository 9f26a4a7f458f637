#!/usr/bin/env bash
# Launch at 2, 8 and 32 emulated nodes: wireup (srun --wireup; srun + wireup-launch, plain
# and with --agent-store) against torchrun (one a node through srun, c10d rendezvous) and
# plain srun's own task start (no wiring: the floor every contender pays), timed
# (a) to all ranks wired with light workers and (b) to the first all_reduce with torch
# workers; contenders interleaved within each repetition. Writes a markdown section.
# See docs/bench-launcher.md.
#
#   scale_bench.sh BUILD_DIR REPORT.md [REPS]
# Env: WIREUP_BENCH_NODES (default "2 8 32"), WIREUP_BENCH_REPS (default 3),
#      WIREUP_BENCH_CLUSTER_PORT (default 27830; the cluster takes it .. +nodes, torchrun's
#      rendezvous ports follow), WIREUP_BENCH_LIGHT_PER_NODE (8), WIREUP_BENCH_TORCH_PER_NODE (1).
# Exit 1 when any contender failed to wire (every failure is printed and marked in the report).
set -uo pipefail
readonly PROG=${0##*/}
die() { echo "$PROG: $*" >&2; exit 1; }
BUILD=$(realpath "${1:?usage: scale_bench.sh BUILD_DIR REPORT.md [REPS]}")
REPORT=$(realpath -m "${2:?usage: scale_bench.sh BUILD_DIR REPORT.md [REPS]}")
REPS=${3:-${WIREUP_BENCH_REPS:-3}}
NODE_COUNTS=${WIREUP_BENCH_NODES:-2 8 32}
PORT=${WIREUP_BENCH_CLUSTER_PORT:-27830}
LIGHT_K=${WIREUP_BENCH_LIGHT_PER_NODE:-8}
TORCH_K=${WIREUP_BENCH_TORCH_PER_NODE:-1}
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
CLUSTER=$ROOT/tests/cluster/cluster.sh
WL=$BUILD/launcher/wireup-launch
PLUGIN=$BUILD/spank-plugin/spank_wireup.so
LIGHT=$HERE/light_worker.sh
TORCH=$ROOT/tests/launcher/programs/gloo_allreduce.py
PY=/usr/bin/python3
RESULTS=$HERE/scale_results.py

[[ $REPS =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive number (got '$REPS')"
for n in $NODE_COUNTS; do
  if ! [[ $n =~ ^[0-9]+$ ]] || ((n < 2 || n > 64)); then
    die "WIREUP_BENCH_NODES must list node counts 2..64 (got '$NODE_COUNTS')"
  fi
done
for k in "$LIGHT_K" "$TORCH_K"; do
  if ! [[ $k =~ ^[1-9][0-9]*$ ]] || ((k > 64)); then
    die "workers per node must be 1..64 (got '$k')"
  fi
done
[[ -x $WL ]] || die "no $WL: build wireup-launch first"
[[ -f $PLUGIN ]] || die "no $PLUGIN: build spank_wireup first"
[[ -x /usr/bin/torchrun ]] || die "no /usr/bin/torchrun (python3-torch)"
mkdir -p "$(dirname "$REPORT")" || die "cannot create the directory of $REPORT"

WORK=$(mktemp -d /tmp/wireup-scale-bench.XXXXXX) || die "cannot create a work directory"
chmod 755 "$WORK" # munged refuses a socket under a directory others cannot enter
CDIR=""
cleanup() {
  [[ -z $CDIR ]] || bash "$CLUSTER" stop "$CDIR" >/dev/null 2>&1
  rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
export GLOO_SOCKET_IFNAME=lo

# Debian's torchrun is broken where Debian builds torch differently (bookworm: Std.from_str
# on Python 3.11; trixie: no libuv); torchrun_patch/ fixes what this torch needs, in the
# torchrun process only, and only when it needs any.
fixes=$("$PY" "$HERE/torchrun_patch/torchrun_fixes.py" 2>"$WORK/why") ||
  die "cannot probe torchrun's torch: $(tail -n 3 "$WORK/why")"
TR_PYTHONPATH=""
if [[ $fixes == none ]]; then
  patch_note="as installed"
else
  TR_PYTHONPATH=$HERE/torchrun_patch
  patch_note="patched by bench/launcher/torchrun_patch: $fixes"
fi
{
  # shellcheck disable=SC1091
  echo "lane=$(. /etc/os-release && echo "${VERSION_CODENAME:-unknown}")"
  echo "slurm=$(slurmd -V | awk '{print $2}')"
  echo "torch=$("$PY" -c 'import torch; print(torch.__version__)')"
  echo "torchrun_patch=$patch_note"
  echo "cores=$(nproc)"
  echo "load_before=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "reps=$REPS"
  echo "light_per_node=$LIGHT_K"
  echo "torch_per_node=$TORCH_K"
} >"$WORK/meta" || die "cannot read the versions (srun, python3 with torch)"

# Waits until every node is idle again, so the next srun does not wait for the last job.
# A node Slurm drained or downed after a run (for example "Kill task failed": a step that
# outlived UnkillableStepTimeout on the loaded machine) is named with its reason and resumed;
# the count goes into the report. Dies when the nodes are not idle within 60 s.
wait_idle() {
  local i node state reason
  for ((i = 0; i < 300; i++)); do
    local busy=0
    while read -r node state; do
      [[ $state == idle ]] && continue
      busy=1
      if [[ $state == drain* || $state == drng* || $state == down* || $state == fail* ]]; then
        reason=$(scontrol show node "$node" | sed -n 's/^ *Reason=//p')
        echo "$PROG: node $node is $state (${reason:-no reason}): resuming it" >&2
        scontrol update nodename="$node" state=resume >&2 || true
        RECOVERED+=("$node $state ${reason:-}")
      fi
    done < <(timeout 15 sinfo -h -N -o '%N %t')
    ((busy)) || return 0
    sleep 0.2
  done
  die "nodes not idle after 60 s: $(sinfo -h -N -o '%N %t' | grep -vw idle | tr '\n' ' ')"
}

# One run: prints "SECONDS STEP_SECONDS" or "FAILED FAILED" (and the reason on stderr).
run_one() { # KIND CONTENDER NODES
  local kind=$1 who=$2 n=$3 k out=$WORK/run.out t0 t1 rc secs
  local -a cmd prog
  if [[ $kind == light ]]; then
    k=$LIGHT_K
    prog=("$LIGHT")
  else
    k=$TORCH_K
    prog=("$PY" "$TORCH")
  fi
  case $who in
    srun) cmd=(srun -N"$n" --ntasks-per-node="$k" "${prog[@]}") ;;
    spank) cmd=(srun -N"$n" --ntasks-per-node="$k" --wireup "${prog[@]}") ;;
    launch | store)
      cmd=(srun --mpi=pmix -N"$n" --ntasks-per-node=1 "$WL" --nproc-per-node="$k")
      [[ $who == store ]] && cmd+=(--agent-store)
      [[ $kind == torch ]] && cmd+=(--python="$PY")
      cmd+=(-- "${prog[-1]}") ;;
    torchrun)
      RDZV_PORT=$((RDZV_PORT + 1))
      local np=""
      [[ $kind == light ]] && np=--no_python
      # shellcheck disable=SC2016 # $SLURM_NODEID is the task's
      cmd=(env PYTHONPATH="$TR_PYTHONPATH" srun -N"$n" --ntasks-per-node=1 bash -c '
        [ "$SLURM_NODEID" = 0 ] && h=1 || h=0
        exec /usr/bin/torchrun --nnodes="$0" --nproc_per_node="$1" --rdzv_backend=c10d \
          --rdzv_endpoint="$2" --rdzv_id="bench$3" --rdzv_conf=is_host=$h --max_restarts=0 \
          $4 "$5"' "$n" "$k" "$ADDR0:$RDZV_PORT" "$RDZV_PORT" "$np" "${prog[-1]}") ;;
  esac
  t0=$EPOCHREALTIME
  timeout 300 "${cmd[@]}" >"$out" 2>&1
  rc=$?
  t1=$EPOCHREALTIME
  local check=$kind
  [[ $who == srun ]] && check=floor
  if ((rc != 0)) || ! secs=$(python3 "$RESULTS" check "$check" "$out" "$t0" $((n * k)) "$k" 2>"$WORK/why"); then
    echo "$PROG: FAILED: $who, $kind workers, $n nodes x $k: exit $rc; $(cat "$WORK/why")" >&2
    tail -n 15 "$out" | sed 's/^/    /' >&2
    echo "FAILED FAILED"
    return
  fi
  echo "$secs $(python3 -c "print(f'{$t1 - $t0:.3f}')")"
}

CONTENDERS=(srun spank launch store torchrun) # srun: no wiring, light workers only
RAW=${REPORT%.md}.raw.txt # every run as it ends, kept when the benchmark is stopped
echo "kind contender nodes rep seconds step_seconds" >"$RAW" || die "cannot write $RAW"
failed=0
RECOVERED=()
for n in $NODE_COUNTS; do
  k_max=$LIGHT_K
  ((TORCH_K > k_max)) && k_max=$TORCH_K
  CDIR=$WORK/cluster-$n
  echo "== $n nodes: starting the cluster" >&2
  WIREUP_CLUSTER_NODES=$n WIREUP_CLUSTER_CPUS=$k_max WIREUP_CLUSTER_PORT=$PORT \
    WIREUP_PLUGSTACK_LINE="optional $PLUGIN default=off" bash "$CLUSTER" start "$CDIR" ||
    die "the $n-node cluster did not start"
  eval "$(bash "$CLUSTER" env "$CDIR")"
  ADDR0=${WIREUP_TEST_CLUSTER_ADDRS%%,*}
  RDZV_PORT=$((PORT + n + 100))
  for rep in $(seq "$REPS"); do
    for kind in light torch; do
      for ((i = 0; i < ${#CONTENDERS[@]}; i++)); do # rotated: no contender always goes first
        who=${CONTENDERS[(i + rep - 1) % ${#CONTENDERS[@]}]}
        [[ $kind == torch && $who == srun ]] && continue
        wait_idle
        line=$(run_one "$kind" "$who" "$n")
        [[ $line == FAILED* ]] && failed=$((failed + 1))
        echo "$kind $who $n $rep $line" | tee -a "$RAW" >&2
      done
    done
  done
  bash "$CLUSTER" stop "$CDIR" >/dev/null 2>&1
  CDIR=""
done
{
  echo "load_after=$(cut -d' ' -f1-3 /proc/loadavg)"
  echo "recovered=${#RECOVERED[@]}"
  for r in "${RECOVERED[@]}"; do echo "recovered_node=$r"; done
} >>"$WORK/meta"
python3 "$RESULTS" report "$RAW" "$WORK/meta" "$REPORT" || die "the report failed"
((failed == 0)) || die "$failed run(s) failed to wire (see above and $REPORT)"
