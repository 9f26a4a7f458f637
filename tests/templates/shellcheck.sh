#!/usr/bin/env bash
# Every template, the demo and these tests are shellcheck clean (all severities,
# sourced files followed); the Python helper compiles.
set -euo pipefail
shellcheck=${1:-shellcheck}
cd "$(dirname "$0")/../.."
mapfile -t scripts < <(find sbatch-templates tests/templates \( -name '*.sh' -o -name '*.sbatch' \) | sort)
scripts+=(demo.sh)
echo "checking ${#scripts[@]} scripts"
"$shellcheck" -x -P SCRIPTDIR "${scripts[@]}"
for py in sbatch-templates/*.py; do
  /usr/bin/python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$py"
done
echo "shellcheck clean: ${scripts[*]}"
