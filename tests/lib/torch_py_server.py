"""A Python with torch imported once, serving the shell tests' reference scripts.

    torch_py_server.py SOCKET OWNER_PID

Importing torch costs 1.5-3 s on the test machines, and a test runs its references
(hf_llama.py, peft_adapter.py, eval_reference.py) dozens of times. This server imports
torch once, then runs each request in a fresh fork of itself: the script sees the
client's argv, working directory, environment, stdin, stdout and stderr (passed over the
socket), and the client exits with the script's exit code. Nothing computes in the
server itself, so no thread pool exists when it forks.

Each request is handled by a forked handler that forks the runner and waits for it; when
the client goes away first (killed, timed out), the handler kills the runner. The server
exits when OWNER_PID (the test's shell) exits or its socket is removed.

Protocol (tests/lib/torch_py_client.py): the client sends a 4-byte little-endian length
with its fds 0, 1, 2 attached, then that many bytes of JSON {"argv", "cwd", "env"}; the
handler answers with the exit code as a 4-byte little-endian signed integer (128 + N for
a runner killed by signal N).
"""
import json
import os
import runpy
import select
import signal
import socket
import struct
import sys
import traceback

import torch  # noqa: F401  (the point of the server: imported once, inherited by every fork)

try:
    import numpy  # noqa: F401
except ImportError:
    pass


def recv_exact(conn, n):
    data = b""
    while len(data) < n:
        chunk = conn.recv(n - len(data))
        if not chunk:
            raise EOFError("client closed the connection")
        data += chunk
    return data


def exit_code_of(exc):
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def run_script(req, fds):
    """In the runner: become the client's python invocation, never return."""
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    os.chdir(req["cwd"])
    os.environ.clear()
    os.environ.update(req["env"])
    if "OMP_NUM_THREADS" in os.environ and os.environ["OMP_NUM_THREADS"].isdigit():
        torch.set_num_threads(max(1, int(os.environ["OMP_NUM_THREADS"])))
    argv = req["argv"]
    code = 0
    try:
        if argv[0] == "-c":
            sys.argv = ["-c"] + argv[2:]
            sys.path[0] = ""
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})
        elif argv[0] == "-":
            sys.argv = argv
            sys.path[0] = ""
            exec(compile(sys.stdin.read(), "<stdin>", "exec"), {"__name__": "__main__"})
        else:
            sys.argv = argv
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        code = exit_code_of(e)
    except BaseException:  # noqa: B036  (a script's uncaught error, reported as python does)
        traceback.print_exc()
        code = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except BaseException:  # noqa: B036  (a closed pipe: python itself would exit 120)
        code = code or 120
    os._exit(code)


def handle(conn):
    """In the handler: run one request, answer with its exit code, never return."""
    try:
        head, fds, _, _ = socket.recv_fds(conn, 4, 3)
        if len(head) < 4:
            head += recv_exact(conn, 4 - len(head))
        req = json.loads(recv_exact(conn, struct.unpack("<I", head)[0]))
    except (OSError, EOFError, ValueError):
        os._exit(1)
    if len(fds) != 3:
        os._exit(1)
    pid = os.fork()
    if pid == 0:
        conn.close()
        run_script(req, fds)
    for fd in fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    ready, _, _ = select.select([conn, pidfd], [], [])
    if conn in ready and pidfd not in ready:
        os.kill(pid, signal.SIGKILL)  # the client is gone: nobody waits for this run
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        code = 128 - code
    try:
        conn.sendall(struct.pack("<i", code))
    except OSError:
        pass
    os._exit(0)


def main():
    path = sys.argv[1]
    try:
        owner = os.pidfd_open(int(sys.argv[2]))  # readable once the test's shell has exited
    except ProcessLookupError:
        return
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # handlers are reaped by the kernel
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    sock.bind(tmp)
    sock.listen(64)
    os.rename(tmp, path)  # the socket appears only once it accepts
    ino = os.stat(path).st_ino
    while True:
        ready, _, _ = select.select([sock, owner], [], [], 1.0)
        if owner in ready:
            return
        try:
            if os.stat(path).st_ino != ino:
                return
        except FileNotFoundError:
            return
        if sock not in ready:
            continue
        conn, _ = sock.accept()
        if os.fork() == 0:
            sock.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            handle(conn)
        conn.close()


if __name__ == "__main__":
    main()
