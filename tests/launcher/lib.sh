# shellcheck shell=bash disable=SC2034  # WL, TOKEN: used by the tests that source this
# Shared helpers for the wireup-launch integration tests (bash).
# Usage in a test: . "$(dirname "$0")/lib.sh" "$@"   ($1 = wireup-launch binary)
set -u
WL=${1:?usage: test.sh WIREUP_LAUNCH}
HERE=$(cd "$(dirname "$0")" && pwd)
PROGS=$HERE/programs  # what the tests run under the launcher, and their checkers
TMP=$(mktemp -d /tmp/wireup-launch-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
# Unique per test run: sleep accepts fractional seconds, so "sleep 300.PID"
# finds exactly this test's processes and no one else's.
TOKEN="300.$$"

# The assertions are tests/lib/assert.sh's (check, contains, file_contains,
# file_count...). A failed check ends the test at once: later steps need the
# earlier ones.
WIREUP_FAIL_FAST=1
# shellcheck source=../lib/assert.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/assert.sh"

# mpirun with N fake nodes of K slots each (mpirun_fake "a:2,b:2" -np 4 ...).
# No retry: a run that hangs is a finding (exec mode's PMIx hand-over once hung
# one run in twenty; see launcher/src/pmix/pmix_handoff.hpp).
# --map-by slot: fill each fake node up to its slots. Open MPI 5's mpirun (PRRTE)
# otherwise maps by core and, with --oversubscribe, put all of "a:2,b:2 -np 4"
# on the first node (its daemon sees this machine's 2 cores), so every rank
# rightly saw PMIX_LOCAL_SIZE=4; Open MPI 4.1 filled slots by default.
mpirun_fake() {
  local hosts=$1; shift
  timeout "${MPIRUN_TIMEOUT:-60}" mpirun --allow-run-as-root --oversubscribe --map-by slot \
    --mca plm_rsh_agent "$PROGS/fake_ssh.sh" \
    --mca rtc ^hwloc -host "$hosts" "$@"  # rtc/hwloc: orted segfaults now and then in its shmem topology write
}

# Waits up to SECONDS for no process to match PATTERN; fails naming survivors.
wait_gone() {  # SECONDS PATTERN
  local deadline=$(( $(date +%s%N) / 1000000 + $1 * 1000 ))
  while pgrep -f -- "$2" >/dev/null; do
    if [ $(( $(date +%s%N) / 1000000 )) -gt $deadline ]; then
      ps -ef | grep -F -- "$2" | grep -v grep
      pkill -KILL -f -- "$2"  # only this test's token
      fail "processes matching '$2' still alive after $1 s"
    fi
    sleep 0.05
  done
}

# A process that runs: exists and is not a zombie (a dead child waiting for whoever
# inherited it to reap it, which under load can take seconds).
running() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [[ -n $st && $st != Z* ]]; }

# SIGKILLs the agent AGENT_PID; each of PIDS (its children) must die within 5 s.
kill_agent_children_follow() {  # AGENT_PID PIDS...
  local agent=$1 c; shift
  kill -KILL "$agent"
  for c in "$@"; do
    for _ in $(seq 100); do running "$c" || break; sleep 0.05; done
    if running "$c"; then
      ps -o pid,ppid,stat,etime,args -p "$c"
      fail "process $c outlived its SIGKILLed agent $agent"
    fi
  done
  return 0
}

# Waits up to SECONDS until COUNT processes match PATTERN.
wait_for_count() {  # SECONDS PATTERN COUNT
  local deadline=$(( $(date +%s) + $1 ))
  until [ "$(pgrep -fc -- "$2")" -ge "$3" ]; do
    [ "$(date +%s)" -gt $deadline ] && fail "expected $3 processes matching '$2'"
    sleep 0.05
  done
}

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# Fail-fast timing, counted from the failure rather than from the launch (the
# launch's start-up on a loaded machine is not what these tests bound): a
# failing worker script runs "$FAILED_AT" just before it fails, and
# ms_since_failure START prints the ms from that moment to now, or from START
# (ms) when no worker wrote it. clear_failure before each run.
FAILED_AT="echo \$(( \$(date +%s%N) / 1000000 )) >$TMP/failed_at"
clear_failure() { rm -f "$TMP/failed_at"; }
ms_since_failure() {
  local from=$1
  [ -s "$TMP/failed_at" ] && from=$(cat "$TMP/failed_at")
  echo $(( $(now_ms) - from ))
}
