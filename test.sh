#!/usr/bin/env bash
# The whole test suite (unit, fuzz, and integration on a real local Slurm cluster) in
# two lanes: the host (Debian bookworm: Slurm 22.05, PMIx 4, torch 1.13, Catch2 v2) and
# a Debian trixie root (Slurm 24.11, PMIx 5, Open MPI 5, torch 2.6, Catch2 v3) that
# .ci/lanes/debian-root.sh creates from the host's apt mirror and reuses. See
# docs/test-cluster.md and docs/supported-versions.md.
#
#   ./test.sh            host + trixie; exits non-zero when either fails
#   ./test.sh --sid      also the Debian sid lane (Slurm 26.05, torch 2.14); reported,
#                        never fails the run
#   ./test.sh --only host|trixie|sid   one lane
set -uo pipefail
root=$(cd "$(dirname "$0")" && pwd)
build=${WIREUP_BUILD_DIR:-$root/build}
logs=${WIREUP_LANE_LOGS:-$build-lanes}

lanes=(host trixie)
gating=" host trixie "
while (($#)); do
  case $1 in
    --sid) lanes+=(sid) ;;
    --only)
      [[ ${2:-} =~ ^(host|trixie|sid)$ ]] || { echo "test.sh: --only needs host, trixie or sid" >&2; exit 2; }
      lanes=("$2")
      gating=" $2 "
      shift ;;
    *) echo "test.sh: unknown argument '$1' (expected --sid or --only LANE)" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=.ci/lane-ctest.sh
source "$root/.ci/lane-ctest.sh"
mkdir -p "$logs" || { echo "test.sh: cannot create $logs" >&2; exit 2; }

# A python3 first on PATH that is a version manager's shim (pyenv's runs bash scripts: about
# 0.5 s a call here, and the tests call python3 hundreds of times) is resolved once, to the
# interpreter it runs, put first on the tests' PATH: the same python3, without the shim.
python3_resolved() {
  local py real dir=$build/python3-resolved
  py=$(command -v python3) || return 0
  [[ $py == */shims/python3 ]] || return 0
  real=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null) || return 0
  [[ -x $real && $real != "$py" ]] || return 0
  mkdir -p "$dir" && ln -sfn "$real" "$dir/python3" && PATH=$dir:$PATH &&
    echo "lane host: python3 is $real (not through $py)"
}

host_lane() {
  bash "$root/.ci/deps.sh" || return 1
  local t0 t1
  python3_resolved
  t0=$(date +%s)
  bash "$root/.ci/build.sh" "$build" || { echo "lane host: build failed" >"$logs/host.last"; return 1; }
  t1=$(date +%s)
  local rc=0 mark
  mark=$(cpu_mark)
  (cd "$build" && ctest --output-on-failure -j "$LANE_CTEST_JOBS" --timeout 900) || rc=$?
  echo "lane host: build $((t1 - t0)) s, tests $(($(date +%s) - t1)) s ($(cpu_busy_since "$mark")), ctest exit $rc" |
    tee "$logs/host.last"
  return "$rc"
}

# The real tokenizer vocabularies (Llama 3, cl100k_base) the data_prep_vocab and
# data_prep_tiktoken_parity tests read, fetched on the host before any lane: the lanes see
# the source tree read-only. When it fails those tests fail, naming the missing file.
bash "$root/.ci/deps.sh" && bash "$root/tests/data/vocab/fetch-vocab.sh" ||
  echo "test.sh: fetching the tokenizer vocabularies failed; data_prep_vocab will fail" >&2

# slowest_tests LOG: the lane's 15 slowest tests, from ctest's "Test #N: NAME ... SECONDS sec"
# lines, so every CI log shows where the lane's time went.
slowest_tests() {
  sed -nE 's/^ *[0-9]+\/[0-9]+ Test +#[0-9]+: ([^ ]+) .* ([0-9]+\.[0-9]+) sec$/\2 \1/p' "$1" |
    sort -rn | head -n 15 | awk '{ printf "  %8.1f s  %s\n", $1, $2 }'
}

# A Debian root lane after the host lane: its root (debootstrap, apt: network and disk, a
# few minutes on a new machine) is made in the background while the host lane builds and
# tests; the lane's own run waits for it on the root's lock.
if [[ " ${lanes[*]} " == *" host "* ]]; then
  for lane in "${lanes[@]}"; do
    [[ $lane != host ]] || continue
    WIREUP_LANE_PREPARE_ONLY=1 bash "$root/.ci/lanes/debian-root.sh" "$lane" \
      >"$logs/$lane.prepare.log" 2>&1 &
  done
fi

declare -A result
for lane in "${lanes[@]}"; do
  echo "===== lane $lane: $(date -u +%H:%M:%S) UTC ====="
  start=$(date +%s)
  if [[ $lane == host ]]; then
    host_lane 2>&1 | tee "$logs/$lane.log"
  else
    bash "$root/.ci/lanes/debian-root.sh" "$lane" 2>&1 | tee "$logs/$lane.log"
  fi
  rc=${PIPESTATUS[0]}
  echo "===== lane $lane: the 15 slowest tests ====="
  slowest_tests "$logs/$lane.log"
  summary=$(grep -E '^[0-9]+% tests passed' "$logs/$lane.log" | tail -n 1)
  timing=$(grep -hE '^lane [a-z]+: build' "$logs/$lane.log" | tail -n 1)
  result[$lane]="$( ((rc == 0)) && echo PASS || echo FAIL) ($(($(date +%s) - start)) s) ${timing#lane "$lane": } | ${summary:-no ctest summary}"
  [[ $gating == *" $lane "* ]] || result[$lane]+=" [opt-in, does not gate]"
  ((rc == 0)) || failed_tests=$(sed -n '/tests failed out of/,$p' "$logs/$lane.log" | grep -E '^\s+[0-9]+ - ')
  [[ -z ${failed_tests:-} ]] || result[$lane]+=$'\n'"$failed_tests"
  failed_tests=""
done

echo "===== summary (logs in $logs) ====="
status=0
for lane in "${lanes[@]}"; do
  echo "lane $lane: ${result[$lane]}"
  if [[ ${result[$lane]} == FAIL* && $gating == *" $lane "* ]]; then status=1; fi
done
exit "$status"
