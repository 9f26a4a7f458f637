#!/usr/bin/env bash
# Every shell script in the source tree is shellcheck clean at warning level, each
# read alone: *.sh, *.sbatch and any other file whose first line names a shell
# (.ci/run). Build folders, git's own files and fetched caches are not the tree's.
# The per-part tests (templates_shellcheck, lifecycle_shellcheck) are stricter for
# their folders; this one leaves no script out.
# Usage: tests/style/shellcheck_tree.sh SHELLCHECK SOURCE_DIR
set -euo pipefail
shellcheck=${1:-shellcheck}
cd "${2:-$(dirname "$0")/../..}"
is_shell() { head -c 64 "$1" 2>/dev/null | head -n 1 | grep -qE '^#!.*(/|env )(ba)?sh\b'; }
scripts=()
while IFS= read -r -d '' f; do
  case $f in
    *.sh | *.sbatch) scripts+=("$f") ;;
    *) if is_shell "$f"; then scripts+=("$f"); fi ;;
  esac
done < <(find . \( -name .git -o -name 'build*' -o -name .cache -o -name node_modules \) -prune \
  -o -type f \( -name '*.sh' -o -name '*.sbatch' -o ! -name '*.*' \) -print0 | sort -z)
# The tree has well over a hundred scripts; far fewer means the walk went wrong.
((${#scripts[@]} >= 100)) || { echo "found only ${#scripts[@]} shell scripts under $PWD" >&2; exit 1; }
echo "checking ${#scripts[@]} scripts"
"$shellcheck" -S warning -f gcc "${scripts[@]}"
echo "shellcheck clean at warning level: ${#scripts[@]} scripts"
