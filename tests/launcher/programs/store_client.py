"""A worker under `wireup-launch --agent-store`: torch's own TCPStore client
against the agent's store (every call of torch 1.13's Python API), then raw
clients: CHECK, a garbage one (dropped, the store keeps serving), WATCH_KEY, and the numbering of
later torch releases (VALIDATE first) written by hand from torch's source;
last, gloo through env:// as a training script would. Prints STORE ... ok.
"""
import os
import socket
import struct
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients"))
import torch_store  # noqa: E402  USE_LIBUV=0 only on a torch built without libuv

assert os.environ["TORCHELASTIC_USE_AGENT_STORE"] == "True", os.environ["TORCHELASTIC_USE_AGENT_STORE"]
rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
addr, port = os.environ["MASTER_ADDR"], int(os.environ["MASTER_PORT"])
store = dist.TCPStore(addr, port, world, False, timedelta(seconds=30), **torch_store.tcpstore_kwargs())
p = f"t{rank}/"

store.set(p + "a", "1")
assert store.get(p + "a") == b"1"
store.set(p + "a", b"\x00\xffbinary")
assert store.get(p + "a") == b"\x00\xffbinary"
assert store.add(p + "n", 5) == 5 and store.add(p + "n", -2) == 3 and store.get(p + "n") == b"3"
assert store.compare_set(p + "c", "", "x") == b"x"  # missing, nothing expected: set
assert store.compare_set(p + "c", "y", "z") == b"x"  # no match: the current value
assert store.compare_set(p + "c", "x", "z") == b"z"
assert store.compare_set(p + "gone", "q", "z") == b"q"  # torch's answer for a missing key
assert store.delete_key(p + "a") and not store.delete_key(p + "a")
big = os.urandom(8 << 20)
store.set(p + "big", big)
assert store.get(p + "big") == big
t0 = time.time()
try:
    store.wait([p + "never"], timedelta(milliseconds=300))
    raise AssertionError("wait for a missing key returned")
except RuntimeError as e:
    assert "imeout" in str(e) or "timed out" in str(e), e
assert 0.25 < time.time() - t0 < 10, time.time() - t0

# Across ranks: everyone waits for everyone; the late key wakes the waiters.
store.set(f"hello/{rank}", str(rank))
store.wait([f"hello/{r}" for r in range(world)])
assert [store.get(f"hello/{r}") for r in range(world)] == [str(r).encode() for r in range(world)]
if rank == 0:
    time.sleep(0.3)
    store.set("late", "x")
else:
    t0 = time.time()
    store.wait(["late"], timedelta(seconds=20))
    assert time.time() - t0 < 10
assert store.num_keys() >= 4 * world


def raw():
    s = socket.create_connection((addr, port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return s


def enc(b):
    b = b.encode() if isinstance(b, str) else b
    return struct.pack("<Q", len(b)) + b


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        assert chunk, "the agent store closed the connection"
        buf += chunk
    return buf


def recv_vec(s):
    return recv_exact(s, struct.unpack("<Q", recv_exact(s, 8))[0])


if rank == 0:
    # Garbage: the connection is closed (the client fails instead of hanging).
    s = raw()
    s.sendall(bytes([200]) + b"not a store query")
    assert s.recv(1) == b"", "garbage was answered"
    s = raw()
    s.sendall(b"\x00" + struct.pack("<Q", 1 << 40))  # a 1 TiB key
    assert s.recv(1) == b"", "a 1 TiB key was accepted"

    # CHECK (4) in torch 1.13's numbering (not in its Python API).
    c = raw()
    c.sendall(b"\x04" + struct.pack("<Q", 2) + enc("/t0/n") + enc("/t0/c"))
    assert recv_exact(c, 1) == b"\x00"  # READY
    c.sendall(b"\x04" + struct.pack("<Q", 2) + enc("/t0/n") + enc("/t0/nope"))
    assert recv_exact(c, 1) == b"\x01"  # NOT_READY

    # WATCH_KEY (7) in torch 1.13's numbering: registered, then told of a SET.
    w = raw()
    w.sendall(b"\x07" + enc("/watched"))
    assert recv_exact(w, 1) == b"\x03"  # KEY_CALLBACK_REGISTERED
    store.set("watched", "v1")  # the client adds its "/" prefix
    assert recv_exact(w, 1) == b"\x01"  # KEY_CREATED
    assert recv_vec(w) == b"/watched" and recv_vec(w) == b"" and recv_vec(w) == b"v1"

    # Later torch: VALIDATE (0) + magic first, then SET=1, GET=3, ADD=4, CHECK=5, PING=13.
    v = raw()
    v.sendall(b"\x00" + struct.pack("<I", 0x3C85F7CE))
    v.sendall(b"\x01" + enc("/v/key") + enc(b"val"))
    v.sendall(b"\x03" + enc("/v/key"))
    assert recv_vec(v) == b"val"
    v.sendall(b"\x04" + enc("/v/n") + struct.pack("<q", 7))
    assert struct.unpack("<q", recv_exact(v, 8))[0] == 7
    v.sendall(b"\x05" + struct.pack("<Q", 2) + enc("/v/key") + enc("/v/n"))
    assert recv_exact(v, 1) == b"\x00"  # READY
    v.sendall(b"\x0d" + struct.pack("<I", 4242))
    assert struct.unpack("<I", recv_exact(v, 4))[0] == 4242
    assert store.get("v/key") == b"val"  # one store for both numberings
    v.sendall(b"\x00" + struct.pack("<I", 0x12345678))  # a wrong magic number
    assert v.recv(1) == b"", "a wrong VALIDATE number was accepted"
    store.set("raw/done", "1")
store.wait(["raw/done"], timedelta(seconds=30))
assert store.get(p + "n") == b"3"  # still serving after the garbage

dist.init_process_group("gloo", init_method="env://")
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
assert t.item() == world * (world + 1) / 2, t.item()
dist.barrier()
dist.destroy_process_group()
print(f"STORE rank={rank} world={world} restart={os.environ['TORCHELASTIC_RESTART_COUNT']} "
      f"port={port} ok", flush=True)
sys.exit(0)
