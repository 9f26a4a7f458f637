# wireup-launch --preload: the fork server of one agent (embedded in the binary,
# run as `PYTHON -u -c THIS FD AGENT_PID PATH|-m TARGET MODULE...`).
#
# It imports MODULEs once, says READY on the socket FD, then for each request
# (an 8-byte length with the worker's stdout/stderr pipes as SCM_RIGHTS, then
# "ARGC\0ARG\0...ENVC\0NAME=VALUE\0...") forks twice: the middle process sets the
# worker's process group, reports its pid and exits, so the worker is adopted
# by the agent (a child subreaper) that waits for it, forwards signals to its
# group and kills it. The worker waits until the agent is its parent, sets
# its parent-death signal, and returns to the top level below to run the
# program as __main__, as `python -u PATH ARGS` or `python -u -m TARGET ARGS`
# would. This process never runs the program itself.
import os
import sys


def _serve():
    import ctypes
    import socket
    import struct
    import time
    import traceback

    fd, agent_pid, kind, target = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
    modules = sys.argv[5:]
    # Imports resolve as they will in the workers.
    sys.path[0] = os.getcwd() if kind == "-m" else os.path.dirname(os.path.realpath(target))
    for name in modules:
        try:
            __import__(name)
        except BaseException:
            sys.stderr.write(f"wireup-launch: --preload: importing {name} failed:\n")
            traceback.print_exc()
            sys.stderr.flush()
            os._exit(1)
    libc = ctypes.CDLL(None, use_errno=True)
    conn = socket.socket(fileno=fd)
    conn.sendall(b"READY\n")

    def recv_exact(n):
        buf = bytearray()
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                os._exit(0)
            buf += chunk
        return bytes(buf)

    while True:
        try:
            head, fds, _, _ = socket.recv_fds(conn, 8, 2)
        except OSError:
            os._exit(0)
        if not head:
            os._exit(0)  # the agent is gone or done
        if len(head) < 8:
            head += recv_exact(8 - len(head))
        (size,) = struct.unpack("<Q", head)
        request = recv_exact(size)
        if len(fds) != 2:
            for f in fds:
                os.close(f)
            conn.sendall(b"ERR expected the worker's stdout and stderr pipes\n")
            continue
        rpipe, wpipe = os.pipe()
        middle = os.fork()
        if middle == 0:
            middle_pid = os.getpid()
            try:
                worker = os.fork()
            except BaseException:
                os._exit(1)
            if worker == 0:
                # The worker: no try/finally of this function may run past here.
                os.setpgid(0, 0)
                deadline = time.monotonic() + 10
                while (parent := os.getppid()) != agent_pid:  # the middle process is exiting
                    if parent != middle_pid or time.monotonic() > deadline:
                        os._exit(137)  # adopted by someone else: the agent is gone
                    time.sleep(0.0002)
                libc.prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
                if os.getppid() != agent_pid:  # the agent died before prctl
                    os._exit(137)
                os.dup2(fds[0], 1)
                os.dup2(fds[1], 2)
                for f in (fds[0], fds[1], rpipe, wpipe):
                    os.close(f)
                conn.detach()
                os.close(fd)
                return request
            try:
                try:
                    os.setpgid(worker, worker)  # before the agent hears of it
                except OSError:
                    pass
                os.write(wpipe, str(worker).encode())
            finally:
                os._exit(0)
        os.close(wpipe)
        pid = b""
        while True:
            chunk = os.read(rpipe, 32)
            if not chunk:
                break
            pid += chunk
        os.close(rpipe)
        os.waitpid(middle, 0)
        for f in fds:
            os.close(f)
        conn.sendall(b"PID " + pid + b"\n" if pid else b"ERR fork failed\n")


_request = _serve().split(b"\0")
del _serve
_argc = int(_request[0])
sys.argv = [os.fsdecode(a) for a in _request[1:1 + _argc]]
os.environb.clear()
for _kv in _request[2 + _argc:2 + _argc + int(_request[1 + _argc])]:
    _k, _, _v = _kv.partition(b"=")
    if _k:
        os.environb[_k] = _v
del _request, _argc
if "numpy" in sys.modules:  # a fresh process would seed numpy's global generator anew
    sys.modules["numpy"].random.seed()
import runpy  # noqa: E402

if sys.argv[0] == "-m":
    sys.argv.pop(0)
    sys.path[0] = os.getcwd()
    runpy.run_module(sys.argv[0], run_name="__main__", alter_sys=True)
else:
    if not os.path.exists(sys.argv[0]):
        sys.stderr.write(f"{sys.executable}: can't open file {sys.argv[0]!r}: "
                         "[Errno 2] No such file or directory\n")
        sys.exit(2)
    sys.path[0] = os.path.dirname(os.path.realpath(sys.argv[0]))
    runpy.run_path(sys.argv[0], run_name="__main__")
