#!/usr/bin/env bash
# wireup-env reports the project version from the generated wireup/version.hpp.
# Usage: env_version.sh WIREUP_ENV PROJECT_VERSION
set -euo pipefail
out=$("$1" --version)
if [[ $out == "wireup-env $2" ]]; then
  echo "ok: $out"
else
  echo "FAIL: wireup-env --version printed '$out', expected 'wireup-env $2'" >&2
  exit 1
fi
