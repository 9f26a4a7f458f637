#!/usr/bin/env bash
# trainer_tensorboard_decode: two runs of tensorboard_write_events into one
# directory, the second resuming at step 4 after the first logged up to 6,
# then check_events.py reads the files with its own CRC-32C and protobuf's
# Python runtime: every figure of the [train]/[val] lines, once per step, the
# first run's steps 4..6 dropped by the second run's START.
# Needs /usr/bin/python3 with python3-protobuf and protoc (else exit 77).
set -euo pipefail
writer=${1:?usage: decode.sh TENSORBOARD_WRITE_EVENTS}
here=$(dirname "${BASH_SOURCE[0]}")
work=$(mktemp -d "${TMPDIR:-/tmp}/wireup-tb-decode.XXXXXX")
trap 'rm -rf "$work"' EXIT

"$writer" "$work/tb" 1 6 0 >"$work/run1.log"
"$writer" "$work/tb" 4 9 0.5 >"$work/run2.log"
[[ $(find "$work/tb" -name 'events.out.tfevents.*' | wc -l) == 2 ]] || { echo "FAIL: expected 2 event files"; exit 1; }
# Steps 4..6 of the first run: 8 train tags each, and the validation at 6.
/usr/bin/python3 "$here/check_events.py" "$work/tb" "$work/run1.log" "$work/run2.log" \
  --expect_restarts 1 --min_purged 25
