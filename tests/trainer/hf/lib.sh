# shellcheck shell=bash
# Hugging Face export/import test helpers (sourced): the trainer test helpers
# plus safetensors and metrics readers.
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck disable=SC2034  # used by the scripts that source this
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TORCH_PY=${WIREUP_TORCH_PYTHON:-/usr/bin/python3}

# Exit 77 (ctest: skipped) without a Python that has torch.
need_torch() {
  "$TORCH_PY" -c 'import torch' 2>/dev/null || { echo "SKIP: $TORCH_PY has no torch"; exit 77; }
}

# metric FILE TYPE STEP KEY: a value from a --metrics_file JSONL, as written.
metric() {
  sed -n "s/.*\"type\":\"$2\",\"step\":$3,.*\"$4\":\([^,}]*\).*/\1/p" "$1" | tail -1
}

# A safetensors file's tensor table (header without __metadata__), one line
# per tensor, and its data section: equal both ways = the same tensors, bit for bit.
st_tensors() {
  python3 -c '
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n]); h.pop("__metadata__", None)
c = lambda v: json.dumps(v, separators=(",", ":"))
for k in sorted(h): print(k, h[k]["dtype"], c(h[k]["shape"]), c(h[k]["data_offsets"]))
' "$1"
}
st_data() {
  python3 -c '
import hashlib, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
print(hashlib.sha256(b[8 + n:]).hexdigest())
' "$1"
}
same_tensors() {  # DESCRIPTION DIR_A DIR_B
  if [[ $(st_tensors "$2/model.safetensors") == "$(st_tensors "$3/model.safetensors")" &&
        $(st_data "$2/model.safetensors") == "$(st_data "$3/model.safetensors")" ]]; then
    pass "$1"
  else
    fail "$1: $2/model.safetensors and $3/model.safetensors differ"
  fi
}

# close DESCRIPTION A B RELATIVE_TOLERANCE: |A-B| <= tol * |B|
close() {
  if awk -v a="$2" -v b="$3" -v t="$4" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b;
        exit !(a != "" && b != "" && d <= t * m) }'; then
    pass "$1 ($2 vs $3)"
  else
    fail "$1: $2 vs $3 (tolerance $4 relative)"
  fi
}

# far_apart PASS_TEXT FAIL_TEXT REF OTHER: OTHER differs from REF by more than 100 times a
# 1e-5 relative tolerance, so a check at that tolerance would see the difference.
far_apart() {
  if awk -v r="$3" -v w="$4" 'BEGIN { d = r - w; if (d < 0) d = -d; exit !(d > 100 * 1e-5 * r) }'; then
    pass "$1"
  else
    fail "$2"
  fi
}

# expect_error WHAT NEEDLE COMMAND...: COMMAND exits 2 and its stderr holds NEEDLE.
expect_error() {
  local what=$1 needle=$2 out rc
  shift 2
  set +e
  out=$("$@" 2>&1 >/dev/null)
  rc=$?
  set -e
  if ((rc == 2)) && [[ $out == *"$needle"* ]]; then
    pass "$what"
  else
    fail "$what: exit $rc, wanted 2 and '$needle' in: $out"
  fi
}
