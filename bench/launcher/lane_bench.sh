#!/usr/bin/env bash
# Runs the launch benchmarks (run.sh: scale_bench.sh, then wireup-bench-wiring-work) inside
# a Debian root lane (trixie: Slurm 24.11, PMIx 5, torch 2.6) through
# .ci/lanes/debian-root.sh, which builds this tree there first, and copies the report out.
# Needs root, as the lane does.
#
#   lane_bench.sh SUITE REPORT.md [REPS]      SUITE = trixie | sid
# Knobs as scale_bench.sh's (WIREUP_BENCH_NODES, WIREUP_BENCH_CLUSTER_PORT, ...), passed in.
set -euo pipefail
readonly PROG=${0##*/}
die() { echo "$PROG: $*" >&2; exit 1; }
suite=${1:?usage: lane_bench.sh SUITE REPORT.md [REPS]}
report=$(realpath -m "${2:?usage: lane_bench.sh SUITE REPORT.md [REPS]}")
reps=${3:-${WIREUP_BENCH_REPS:-3}}
[[ $suite =~ ^(trixie|sid)$ ]] || die "SUITE must be trixie or sid (got '$suite')"
[[ $reps =~ ^[1-9][0-9]*$ ]] || die "REPS must be a positive number (got '$reps')"
here=$(cd "$(dirname "$0")" && pwd)
lanes=${WIREUP_LANES_DIR:-/var/cache/wireup-lanes}
inner=/build/bench-launcher-scale.md
knobs=""
for v in WIREUP_BENCH_NODES WIREUP_BENCH_CLUSTER_PORT WIREUP_BENCH_LIGHT_PER_NODE \
  WIREUP_BENCH_TORCH_PER_NODE; do
  [[ -z ${!v:-} ]] || knobs+="$v=$(printf '%q' "${!v}") "
done
mkdir -p "$(dirname "$report")" || die "cannot create the directory of $report"
rm -f "$lanes/$suite$inner" "$lanes/$suite${inner%.md}.raw.txt"
rc=0
# shellcheck disable=SC2016 # $WIREUP_LANE_BUILD: the lane's build directory, set in the root
WIREUP_LANE_COMMAND="${knobs}"'bash bench/launcher/run.sh "$WIREUP_LANE_BUILD"'" $inner $reps" \
  WIREUP_LANE_BUILD_TARGETS="spank_wireup wireup-launch wireup-bench-wiring-work" \
  bash "$here/../../.ci/lanes/debian-root.sh" "$suite" || rc=$?
if [[ ! -f $lanes/$suite$inner ]]; then
  [[ ! -f $lanes/$suite${inner%.md}.raw.txt ]] || cp "$lanes/$suite${inner%.md}.raw.txt" "${report%.md}.raw.txt"
  die "the $suite lane wrote no report (exit $rc; runs so far: ${report%.md}.raw.txt)"
fi
cp "$lanes/$suite$inner" "$report"
cp "$lanes/$suite${inner%.md}.raw.txt" "${report%.md}.raw.txt"
echo "report: $report"
exit "$rc"
