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
finish() {
  if ((FAILS)); then
    echo "$FAILS check(s) failed" >&2
    exit 1
  fi
  echo "all checks passed"
}
