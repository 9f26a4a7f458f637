#!/usr/bin/env bash
# The one entry point for wireup's benchmarks. Runs every bench/*/run.sh with
# the build directory and a report directory, then joins their sections into
# REPORT_DIR/report.md.   Usage: bench/run.sh [BUILD_DIR] [REPORT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(realpath "${1:-$here/../build}")
report=$(realpath -m "${2:-$build/bench-report}")
mkdir -p "$report"
status=0
for bench in "$here"/*/run.sh; do
  name=$(basename "$(dirname "$bench")")
  echo "== bench $name"
  if ! bash "$bench" "$build" "$report/$name.md"; then
    echo "bench $name FAILED" >&2
    printf '## %s\n\nFAILED (see the console output)\n' "$name" >"$report/$name.md"
    status=1
  fi
done
{
  echo "# wireup benchmark report"
  echo
  echo "$(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, $(uname -r), commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
  for f in "$report"/*.md; do
    [[ $(basename "$f") == report.md ]] && continue
    cat "$f"; echo
  done
} >"$report/report.md"
echo "report: $report/report.md"
exit $status
