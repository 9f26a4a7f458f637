#!/usr/bin/env bash
# eval "$(wireup-env --export)" in sh, bash and dash gives every variable the
# exact bytes of its value, and runs nothing that a value spells.
# Usage: export_eval.sh WIREUP_ENV (no cluster: the task comes from SLURM_* variables)
set -euo pipefail
tool=$1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/wireup-export.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
# shellcheck source=../lib/assert.sh
source "$(dirname "$0")/../lib/assert.sh"

# A node with an EFA device and the EFA lib dir, so LD_LIBRARY_PATH is the
# user's own value with a directory prepended.
root=$WORK/root
mkdir -p "$root/sys/class/infiniband/rdmap0s31/device" "$root/opt/amazon/efa/lib"
ln -s ../../../../bus/pci/drivers/efa "$root/sys/class/infiniband/rdmap0s31/device/driver"

# Values a shell would split, expand, run or choke on.
v_space='two  words and	a tab'
v_cmd="\$(touch $WORK/ran-dollar-paren)"
v_bq="\`touch $WORK/ran-backquote\`"
v_sq="it's 'single' ''quoted''"
v_mix="\$HOME \"dq\" \\ ; | & * ? ~ # \$((1+1)) \${X:-y}"
v_user=$'/usr/lib\nsecond line:$(touch '"$WORK"$'/ran-user) end\n'
names=(W_SPACE W_CMD W_BQ W_SQ W_MIX LD_LIBRARY_PATH)
want=("$v_space" "$v_cmd" "$v_bq" "$v_sq" "$v_mix" "/opt/amazon/efa/lib:$v_user")

exports=$(env -i PATH="$PATH" LD_LIBRARY_PATH="$v_user" SLURM_JOB_ID=7 SLURM_STEP_ID=0 \
  SLURM_PROCID=1 SLURM_LOCALID=1 SLURM_NODEID=0 SLURM_STEP_NUM_TASKS=2 SLURM_STEP_NUM_NODES=1 \
  SLURM_STEP_TASKS_PER_NODE=2 SLURM_STEP_NODELIST=ip-10-0-0-1 \
  "$tool" --export --admin "sysroot=$root" "setenv=W_SPACE=$v_space" "setenv=W_CMD=$v_cmd" \
  "setenv=W_BQ=$v_bq" "forceenv=W_SQ=$v_sq" "setenv=W_MIX=$v_mix")
printf '%s\n' "$exports" >"$WORK/exports"
printf '%s\0' "${want[@]}" >"$WORK/want"

for sh in sh bash dash; do
  if ! command -v "$sh" >/dev/null; then
    fail "$sh is not installed"
    continue
  fi
  # The shell evals the output, then writes each value NUL-terminated.
  # shellcheck disable=SC2016  # expanded by the evaluating shell
  if ! env -i PATH="$PATH" "$sh" -c 'eval "$(cat "$1")" || exit 9
    printf "%s\0" "$W_SPACE" "$W_CMD" "$W_BQ" "$W_SQ" "$W_MIX" "$LD_LIBRARY_PATH" >"$2"
    printf "%s" "$WIREUP_INJECTED" >"$2.injected"' _ "$WORK/exports" "$WORK/got.$sh"; then
    fail "$sh: eval failed"
    continue
  fi
  if cmp -s "$WORK/want" "$WORK/got.$sh"; then
    pass "$sh: ${#names[@]} values byte for byte"
  else
    fail "$sh: values differ: $(cmp "$WORK/want" "$WORK/got.$sh" 2>&1 || true)"
  fi
  injected=$(cat "$WORK/got.$sh.injected")
  if [[ $injected == *"RANK LOCAL_RANK"* && $injected == *W_MIX* ]]; then
    pass "$sh: WIREUP_INJECTED holds every name ($(wc -w <<<"$injected") names)"
  else
    fail "$sh: WIREUP_INJECTED='$injected'"
  fi
done

ran=$(find "$WORK" -maxdepth 1 -name 'ran-*' -printf '%f ')
if [[ -z $ran ]]; then pass "no command in a value ran"; else fail "commands ran: $ran"; fi
((FAILS == 0)) || { echo "the exports were:" >&2; cat "$WORK/exports" >&2; }
finish
