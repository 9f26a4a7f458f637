"""A worker for the --preload tests (run with --preload=preload_probe).

MODE env: one WORKER line (print_env.sh's keys, then what --preload must keep:
preloaded before the script ran, __main__, adopted by the agent, own process
group, parent-death SIGKILL, argv, sys.path[0]); fail: rank 2 exits 3, the
others sleep; raise: rank 1 raises; flaky: rank 1 exits 7 on the first attempt
(the others sleep), everyone prints OK on the next; sleep: says SLEEPING, then
sleeps.
"""
import os
import sys

preloaded = "preload_probe" in sys.modules  # before this script imports anything
import ctypes  # noqa: E402
import time  # noqa: E402

mode, rank = sys.argv[1], int(os.environ["RANK"])
restart = int(os.environ["TORCHELASTIC_RESTART_COUNT"])
if mode == "env":
    e = os.environ.get
    sig = ctypes.c_int()
    ctypes.CDLL(None).prctl(2, ctypes.byref(sig))  # PR_GET_PDEATHSIG
    with open(f"/proc/{os.getppid()}/comm") as f:
        parent = f.read().strip()
    here = os.path.dirname(os.path.realpath(__file__))
    keys = [("RANK", "RANK"), ("LOCAL_RANK", "LOCAL_RANK"), ("WORLD_SIZE", "WORLD_SIZE"),
            ("LOCAL_WORLD_SIZE", "LOCAL_WORLD_SIZE"), ("GROUP_RANK", "GROUP_RANK"),
            ("GROUP_WORLD_SIZE", "GROUP_WORLD_SIZE"), ("ROLE_RANK", "ROLE_RANK"),
            ("ROLE_WORLD_SIZE", "ROLE_WORLD_SIZE"), ("ROLE_NAME", "ROLE_NAME"),
            ("MASTER_ADDR", "MASTER_ADDR"), ("MASTER_PORT", "MASTER_PORT"),
            ("RESTARTS", "TORCHELASTIC_RESTART_COUNT"), ("MAX_RESTARTS", "TORCHELASTIC_MAX_RESTARTS"),
            ("RUN_ID", "TORCHELASTIC_RUN_ID"), ("AGENT_STORE", "TORCHELASTIC_USE_AGENT_STORE"),
            ("NCCL_AEH", "TORCH_NCCL_ASYNC_ERROR_HANDLING")]
    line = " ".join(f"{k}={e(v, '')}" for k, v in keys)
    line += f" ERROR_FILE={e('TORCHELASTIC_ERROR_FILE', 'unset')} OMP={e('OMP_NUM_THREADS', 'unset')}"
    line += f" PMIX={e('PMIX_RANK', 'none')}"
    checks = {
        "PRELOADED": preloaded,
        "MAIN": __name__ == "__main__",
        "ADOPTED": parent == "wireup-launch",
        "PGID": os.getpgid(0) == os.getpid(),
        "PDEATHSIG": sig.value == 9,
        "ARGV": sys.argv[1:] == ["env", "a b", "c"] and sys.argv[0] == __file__,
        "PATH0": sys.path[0] == here,
        "NO_CODE": "WIREUP_PRELOAD_CODE" not in os.environ,
    }
    bad = [k for k, ok in checks.items() if not ok]
    print(f"WORKER {line} PRELOAD_CHECKS={'ok' if not bad else ','.join(bad)}", flush=True)
elif mode == "fail":
    if rank == 2:
        time.sleep(0.2)
        print("rank 2 fails", file=sys.stderr, flush=True)
        sys.exit(3)
    time.sleep(300)
elif mode == "raise":
    if rank == 1:
        time.sleep(0.2)
        raise ValueError("boom from rank 1")
    time.sleep(300)
elif mode == "flaky":
    if restart == 0:
        if rank == 1:
            time.sleep(0.2)
            sys.exit(7)
        time.sleep(300)
    print(f"OK rank={rank} restart={restart} preloaded={int(preloaded)}", flush=True)
elif mode == "sleep":
    print(f"SLEEPING rank={rank}", flush=True)
    time.sleep(300)
