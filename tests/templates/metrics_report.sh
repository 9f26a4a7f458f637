#!/usr/bin/env bash
# sbatch-templates/metrics-report.py on made-up metrics of an interrupted run
# and its resumption (with a torn last line, as a killed job leaves): the later
# job's steps win, the resume point is named, the table and the PNG appear.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
report=$here/../../sbatch-templates/metrics-report.py
work=$(mktemp -d "${TMPDIR:-/tmp}/wireup-report.XXXXXX")
trap 'rm -rf "$work"' EXIT
# shellcheck source=../lib/assert.sh
source "$(dirname "$0")/../lib/assert.sh"
contains() { if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1: '$3' not in: $2"; fi; }

# Job 9: steps 1-27 (loss 9 - step/10), validation at 20; killed mid-line.
# Job 10: resumed from step 20, steps 21-40 (loss 0.01 lower), validation at 40.
awk 'BEGIN {
  for (s = 1; s <= 27; s++) printf "{\"type\":\"train\",\"step\":%d,\"loss\":%.4f,\"lr\":0.001,\"tokens_per_s\":%d,\"peak_mem_mib\":100}\n", s, 9 - s / 10, 1000 + s
  print "{\"type\":\"validation\",\"step\":20,\"val_loss\":7.1}"
  printf "{\"type\":\"train\",\"st"
}' >"$work/metrics-9.jsonl"
awk 'BEGIN {
  for (s = 21; s <= 40; s++) printf "{\"type\":\"train\",\"step\":%d,\"loss\":%.4f,\"lr\":0.001,\"tokens_per_s\":2000,\"peak_mem_mib\":120}\n", s, 8.99 - s / 10
  print "{\"type\":\"validation\",\"step\":40,\"val_loss\":5.0}"
}' >"$work/metrics-10.jsonl"

out=$(/usr/bin/python3 "$report" --sort --rows 40 --png "$work/loss.png" "$work/metrics-10.jsonl" "$work/metrics-9.jsonl" 2>&1)
echo "$out"
contains "job order by id" "$out" "  job 9: steps 1-27"
contains "the resumed job" "$out" "job 10: steps 21-40, resumed after step 20"
contains "torn line skipped" "$out" "metrics-9.jsonl:29: skipped"
contains "later job wins for repeated steps" "$out" "    21    6.8900"
contains "earlier job's steps before the resume" "$out" "    20    7.0000    7.1000"
contains "merged totals" "$out" "steps=40 first_loss=8.9000 final_loss=4.9900 final_val_loss=5.0000"
contains "peak memory" "$out" "peak memory 120.0 MiB"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  if [[ $(head -c 8 "$work/loss.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]]; then
    pass "PNG written"
  else
    fail "no PNG at $work/loss.png"
  fi
else
  contains "no matplotlib: says how to get the PNG" "$out" "apt-get install python3-matplotlib"
fi
if /usr/bin/python3 "$report" "$work/none.jsonl" >/dev/null 2>&1; then fail "a missing file is an error"; else pass "a missing file is an error"; fi
finish
