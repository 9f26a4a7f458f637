"""Fixes for Debian's torchrun where Debian's build breaks it; the launch benchmarks run
torchrun with PYTHONPATH=this dir, and sitecustomize.py applies them in the torchrun
process only (its workers run unchanged).

- "Std.from_str": torchrun 1.13 on Python 3.11 (bookworm) fails at start: iterating an
  IntFlag skips its zero member, so Std.from_str("0") returns None ("'NoneType' object has
  no attribute 'get'").
- "TCPStore without libuv": torch 2.4 and later create a libuv TCPStore unless told
  otherwise, and Debian's torch 2.6 (trixie) is built without libuv, so torchrun's c10d
  rendezvous store fails ("The connection to the C10d store has failed"). Its stores are
  made with use_libuv=False instead, what USE_LIBUV=0 does for env://.

  python3 torchrun_fixes.py      prints the fixes this Python's torch needs (comma-separated)
"""
import re


def _std_broken():
    from torch.distributed.elastic.multiprocessing.api import Std

    return Std.from_str("0") is None


def _libuv_missing():
    import torch.distributed as dist

    try:
        store = dist.TCPStore("127.0.0.1", 0, 1, True, use_libuv=True)
    except TypeError:  # torch < 2.2: no use_libuv, no libuv default
        return False
    except RuntimeError as e:
        if "libuv" in str(e):
            return True
        raise
    del store
    return False


def needed():
    return [name for name, broken in (("Std.from_str", _std_broken),
                                      ("TCPStore without libuv", _libuv_missing)) if broken()]


def _fix_std():
    from torch.distributed.elastic.multiprocessing import api

    def from_str(vm):
        def to_std(v):
            return api.Std(int(v))

        if re.fullmatch(r"^[0-3]$", vm):
            return to_std(vm)
        return {int(k): to_std(v) for k, v in (kv.split(":") for kv in vm.split(","))}

    api.Std.from_str = staticmethod(from_str)


def _fix_libuv():
    import sys

    import torch.distributed as dist

    class TCPStoreWithoutLibuv(dist.TCPStore):
        def __init__(self, *args, **kwargs):
            kwargs.setdefault("use_libuv", False)
            super().__init__(*args, **kwargs)

    dist.TCPStore = TCPStoreWithoutLibuv
    # Modules that imported the name before this ran.
    for mod in list(sys.modules.values()):
        if mod is not None and mod is not dist and getattr(mod, "TCPStore", None) is \
                TCPStoreWithoutLibuv.__bases__[0]:
            mod.TCPStore = TCPStoreWithoutLibuv


def apply():
    fixes = needed()
    if "Std.from_str" in fixes:
        _fix_std()
    if "TCPStore without libuv" in fixes:
        _fix_libuv()
    return fixes


if __name__ == "__main__":
    print(", ".join(needed()) or "none")
