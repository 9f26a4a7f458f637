# shellcheck shell=bash
# The shell tests' assertions, sourced by every tests/*/lib.sh and by the
# scripts that need no other helper. A test records each check, then calls
# finish, which fails the test when any check failed:
#   pass DESCRIPTION                  a check that held
#   fail DESCRIPTION                  one that did not (with WIREUP_FAIL_FAST=1:
#                                     the test ends at once, for tests whose
#                                     later steps need the earlier ones)
#   check DESCRIPTION GOT EXPECTED    equal strings
#   contains DESCRIPTION TEXT PART    PART occurs in TEXT
#   lacks DESCRIPTION TEXT PART       PART does not occur in TEXT
#   file_contains DESCRIPTION FILE PART   PART occurs in FILE (shown when not)
#   file_count DESCRIPTION FILE REGEX N   N matches of the extended REGEX in
#                                     FILE, counted per match, not per line
#                                     (writers sharing a stream can share a
#                                     line); a leading ^ and trailing $ are
#                                     dropped for it
#   finish                            exit 1 if any check failed
FAILS=0
fail() {
  echo "FAIL: $*" >&2
  FAILS=$((FAILS + 1))
  if [[ ${WIREUP_FAIL_FAST:-0} == 1 ]]; then exit 1; fi
}
pass() { echo "ok: $*"; }
check() { if [[ "$2" == "$3" ]]; then pass "$1"; else fail "$1: got '$2', expected '$3'"; fi; }
contains() { if [[ "$2" == *"$3"* ]]; then pass "$1"; else fail "$1: '$3' not in: $2"; fi; }
lacks() { if [[ "$2" != *"$3"* ]]; then pass "$1"; else fail "$1: '$3' found in: $2"; fi; }
file_contains() {
  if grep -qF -- "$3" "$2"; then
    pass "$1"
  else
    echo "--- $2:" >&2
    cat "$2" >&2
    fail "$1: '$3' not in $2"
  fi
}
file_count() {
  local re=${3#^} n
  re=${re%\$}
  n=$(grep -oE -- "$re" "$2" | wc -l)
  if [[ $n -eq $4 ]]; then
    pass "$1"
  else
    echo "--- $2:" >&2
    cat "$2" >&2
    fail "$1: expected $4 matches of '$3' in $2, got $n"
  fi
}
finish() {
  if ((FAILS)); then
    echo "$FAILS check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}
