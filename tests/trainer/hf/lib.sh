# shellcheck shell=bash
# Hugging Face export/import test helpers (sourced): the trainer test helpers
# plus safetensors and metrics readers.
# shellcheck source=../lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib.sh"
# shellcheck disable=SC2034  # used by the scripts that source this
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TORCH_PY=${WIREUP_TORCH_PYTHON:-/usr/bin/python3}
# shellcheck source=../../lib/torch_py.sh
source "$HERE/../../lib/torch_py.sh"

# Exit 77 (ctest: skipped) without a Python that has torch; with one, TORCH_PY runs the
# reference scripts in a Python that imported torch once (../../lib/torch_py.sh).
need_torch() {
  local real=$TORCH_PY
  torch_py_serve "$real" "$WORK"
  "$TORCH_PY" -c 'import torch' 2>/dev/null || { echo "SKIP: $real has no torch"; exit 77; }
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

