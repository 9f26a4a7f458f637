# shellcheck shell=bash
# How every lane runs ctest (sourced by test.sh for the host lane and by
# lanes/debian-root.sh for a root lane): how many tests at once, and how busy the
# machine's CPUs were meanwhile, printed beside each lane's test time.
#
# LANE_CTEST_JOBS: 3 by default (WIREUP_CTEST_JOBS). The tests that train on both cores
# hold RESOURCE_LOCK cpu_heavy and run one at a time; the other two slots take the rest
# (docs/supported-versions.md, "How long the lanes take").
LANE_CTEST_JOBS=${WIREUP_CTEST_JOBS:-3}
[[ $LANE_CTEST_JOBS =~ ^[1-9][0-9]*$ ]] ||
  { echo "WIREUP_CTEST_JOBS=$LANE_CTEST_JOBS: expected a whole number of tests, 1 or more" >&2; exit 2; }

#   m=$(cpu_mark); ...; cpu_busy_since "$m"    ->  "CPU 93% busy (2 cores)"
# From /proc/stat's first line: busy is user, nice, system, irq, softirq and steal;
# the rest (idle, iowait) is not. The whole machine, so a lane in a root counts too.
cpu_mark() {
  local _cpu user nice system idle iowait irq softirq steal _rest
  read -r _cpu user nice system idle iowait irq softirq steal _rest </proc/stat
  echo "$((user + nice + system + irq + softirq + steal)) $((idle + iowait))"
}
cpu_busy_since() {
  local b0 i0 b1 i1
  read -r b0 i0 <<<"$1"
  read -r b1 i1 <<<"$(cpu_mark)"
  local total=$(((b1 - b0) + (i1 - i0)))
  ((total > 0)) || { echo "CPU use unknown"; return; }
  echo "CPU $((100 * (b1 - b0) / total))% busy ($(nproc) cores)"
}
