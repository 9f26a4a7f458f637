"""Checks print_env.sh's WORKER lines: every rank once, a consistent wiring."""
import os
import re
import subprocess
import sys

path, world, local_world, nodes = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
# "agent": workers must not see PMIx; "exec": the task keeps its own; "plain": no PMIx at all
mode = sys.argv[5]
# optional "store": --agent-store (TORCHELASTIC_USE_AGENT_STORE=True)
agent_store = len(sys.argv) > 6 and sys.argv[6] == "store"
lines = [l for l in open(path) if "WORKER " in l]
by_rank = {}
for l in lines:
    kv = dict(re.findall(r"(\w+)=(\S*)", l.split("WORKER ", 1)[1]))
    r = int(kv["RANK"])
    assert r not in by_rank, f"rank {r} reported twice"
    by_rank[r] = kv
assert sorted(by_rank) == list(range(world)), f"ranks seen: {sorted(by_rank)}"
masters = {(kv["MASTER_ADDR"], kv["MASTER_PORT"]) for kv in by_rank.values()}
assert len(masters) == 1, f"ranks disagree on the master: {masters}"
addr, port = masters.pop()
assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", addr), f"MASTER_ADDR {addr} is not IPv4"
assert 0 < int(port) < 65536
# MASTER_ADDR is rank 0's node: the address its name spells (ip-127-0-0-K) or its NodeAddr
# in the test cluster's slurm.conf (any naming style); in the PMIx modes rank 0 publishes
# an address of its own host, and every emulated node's host is this machine, so one of
# this machine's addresses also counts there (Slurm 24.11 gives PMIx the NodeHostname).
node0 = re.fullmatch(r"ip-(\d+)-(\d+)-(\d+)-(\d+)", by_rank[0].get("NODE", ""))
want = {".".join(node0.groups())} if node0 else set()
conf = os.path.join(os.environ.get("WIREUP_TEST_CLUSTER", "/nonexistent"), "slurm.conf")
if os.path.exists(conf) and "NODE" in by_rank[0]:
    node_addr = dict(re.findall(r"^NodeName=(\S+) NodeAddr=(\S+)", open(conf).read(), re.M))
    if by_rank[0]["NODE"] in node_addr:
        want.add(node_addr[by_rank[0]["NODE"]])
if want and mode != "plain":
    out = subprocess.run(["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True).stdout
    want |= set(re.findall(r"inet (\d+\.\d+\.\d+\.\d+)/", out))
if want:
    assert addr in want, f"MASTER_ADDR {addr}, but rank 0 ran on {by_rank[0]['NODE']} ({sorted(want)})"
groups = {}
for r, kv in by_rank.items():
    def eq(key, want):
        assert kv[key] == str(want), f"rank {r}: {key}={kv[key]}, expected {want}"
    eq("WORLD_SIZE", world); eq("ROLE_WORLD_SIZE", world); eq("ROLE_RANK", r)
    eq("LOCAL_WORLD_SIZE", local_world); eq("GROUP_WORLD_SIZE", nodes)
    eq("ROLE_NAME", "default"); eq("AGENT_STORE", agent_store); eq("NCCL_AEH", 1)
    eq("OMP", 1 if local_world > 1 else "unset"); 
    if mode == "agent":
        eq("PMIX", "none")
    elif mode == "exec":
        assert kv["PMIX"] != "none", f"rank {r}: exec mode lost the task's PMIx identity"
    eq("RESTARTS", 0)
    if "PRELOAD_CHECKS" in kv:  # preload_worker.py
        eq("PRELOAD_CHECKS", "ok")
    # Block placement: ranks of one node are consecutive, local rank = offset.
    eq("GROUP_RANK", r // local_world); eq("LOCAL_RANK", r % local_world)
    groups.setdefault(kv["GROUP_RANK"], set()).add(kv["LOCAL_RANK"])
assert len(groups) == nodes
print(f"ok: {world} ranks, {nodes} nodes, master {addr}:{port}" + (f", rank 0 on {node0.group(0)}" if node0 else ""))
