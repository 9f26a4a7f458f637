#!/usr/bin/env bash
# Every lifecycle script and every script of these tests is shellcheck clean
# at warning level, read alone and with its sourced libraries followed.
set -euo pipefail
shellcheck=${1:-shellcheck}
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../.."
mapfile -t scripts < <(find lifecycle tests/lifecycle -name '*.sh' | sort)
echo "checking ${#scripts[@]} scripts"
"$shellcheck" -S warning "${scripts[@]}"
(cd lifecycle && "$shellcheck" -S warning -x ./*.sh lib/*.sh)
echo "shellcheck clean: ${scripts[*]}"
