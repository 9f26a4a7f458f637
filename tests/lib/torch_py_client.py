#!/usr/bin/python3 -SE
"""Runs `python3 ARGS...` in the test's preloaded torch server (torch_py_server.py).

    torch_py_client.py SCRIPT ARGS... | -c CODE ARGS... | - ARGS...

The socket is $WIREUP_TORCH_PY_SOCKET. Without a server (none started, or it could not
start), or for any other python option, it runs $WIREUP_TORCH_PY_REAL (default
/usr/bin/python3) itself: the same result, only slower. Exits with the script's code.
"""
import json
import os
import socket
import struct
import sys
import time

REAL = os.environ.get("WIREUP_TORCH_PY_REAL", "/usr/bin/python3")


def direct():
    os.execv(REAL, [REAL] + sys.argv[1:])


def server_alive():
    pid = os.environ.get("WIREUP_TORCH_PY_SERVER_PID", "")
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
        return True
    except OSError:
        return False


def connect(path):
    """The server's socket, waiting while it imports torch; None when there is none."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if os.path.exists(path):
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                sock.connect(path)
                return sock
            except OSError:
                sock.close()
        if not server_alive():
            return None
        time.sleep(0.05)
    return None


def main():
    args = sys.argv[1:]
    path = os.environ.get("WIREUP_TORCH_PY_SOCKET", "")
    if not args or (args[0].startswith("-") and args[0] not in ("-c", "-")) or not path:
        direct()
    sock = connect(path)
    if sock is None:
        direct()
    body = json.dumps({"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    socket.send_fds(sock, [struct.pack("<I", len(body))], [0, 1, 2])
    sock.sendall(body)
    answer = b""
    while len(answer) < 4:
        chunk = sock.recv(4 - len(answer))
        if not chunk:
            print("torch_py_client: the server ended without an exit code", file=sys.stderr)
            sys.exit(1)
        answer += chunk
    sys.exit(struct.unpack("<i", answer)[0])


if __name__ == "__main__":
    main()
