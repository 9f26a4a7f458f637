"""A real PyTorch client: rendezvous from env://, one gloo all_reduce, checked.

Prints one line per rank: "allreduce ok rank=R world=W sum=S".
Exits non-zero on any mismatch, so a launcher test fails loudly.
"""
import os
import sys
import time

import torch
import torch.distributed as dist

import torch_store  # noqa: F401  USE_LIBUV=0 only on a torch built without libuv


def main() -> int:
    start = time.time()
    dist.init_process_group("gloo", init_method="env://")
    rank, world = dist.get_rank(), dist.get_world_size()
    expected_rank = int(os.environ["RANK"])
    if rank != expected_rank or world != int(os.environ["WORLD_SIZE"]):
        print(f"allreduce FAIL rank={rank} env RANK={expected_rank}", file=sys.stderr)
        return 1
    t = torch.tensor([float(rank + 1)])
    dist.all_reduce(t)
    want = world * (world + 1) / 2
    if t.item() != want:
        print(f"allreduce FAIL rank={rank} got {t.item()} want {want}", file=sys.stderr)
        return 1
    dist.destroy_process_group()
    print(f"allreduce ok rank={rank} world={world} sum={t.item():g} "
          f"seconds={time.time() - start:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
