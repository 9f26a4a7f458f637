# shellcheck shell=bash
# A preloaded Python with torch for the tests' reference scripts (sourced):
#   torch_py_serve REAL_PYTHON DIR
# starts tests/lib/torch_py_server.py (torch imported once, in the background, while the
# test goes on) with its socket in DIR, and sets TORCH_PY to its client: "$TORCH_PY"
# SCRIPT ARGS, "$TORCH_PY" -c CODE and "$TORCH_PY" - then run as REAL_PYTHON would run
# them, in a fork of the server. The server ends with the calling shell and is not one
# of its jobs.
# WIREUP_TORCH_PY_SERVER=0 (or a DIR whose socket path would be too long) runs
# REAL_PYTHON itself each time.
# shellcheck disable=SC2034  # TORCH_PY is the caller's
torch_py_serve() {
  local real=$1 dir=$2 lib
  lib=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  TORCH_PY=$real
  [[ ${WIREUP_TORCH_PY_SERVER:-1} != 0 && ${#dir} -lt 90 ]] || return 0
  # Not a job of this shell (a test may wait for all of its jobs): started from a
  # subshell, it ends when this shell ($$) does.
  WIREUP_TORCH_PY_SERVER_PID=$("$real" "$lib/torch_py_server.py" "$dir/torch_py.sock" "$$" \
    </dev/null >/dev/null 2>"$dir/torch_py_server.log" & echo $!)
  export WIREUP_TORCH_PY_SERVER_PID WIREUP_TORCH_PY_SOCKET=$dir/torch_py.sock
  export WIREUP_TORCH_PY_REAL=$real
  TORCH_PY=$lib/torch_py_client.py
}
