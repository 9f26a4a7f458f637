"""An unmodified-style PyTorch client: env:// rendezvous, gloo, one all_reduce.

Prints one ALLREDUCE line per rank and, for the benchmark, the wall-clock time
at which that rank finished its first all_reduce.
"""
import os
import sys
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "clients"))
import torch_store  # noqa: E402  USE_LIBUV=0 only on a torch built without libuv

dist.init_process_group("gloo", init_method="env://")
rank, world = dist.get_rank(), dist.get_world_size()
t = torch.tensor([float(rank + 1)])
dist.all_reduce(t)
done = time.time()
expected = world * (world + 1) / 2
status = "ok" if t.item() == expected else f"WRONG expected {expected}"
print(f"ALLREDUCE rank={rank} world={world} local_rank={os.environ['LOCAL_RANK']} "
      f"sum={t.item():.0f} {status} done_at={done:.6f}", flush=True)
dist.barrier()
dist.destroy_process_group()
