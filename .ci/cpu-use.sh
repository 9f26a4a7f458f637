# shellcheck shell=bash
# How busy the machine's CPUs were over a span (sourced by test.sh and
# lanes/debian-root.sh, which print it beside each lane's test time):
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
