"""Only for the torchrun side of the benchmark (PYTHONPATH=this dir).

Debian's torchrun 1.13.1 fails at start on Python 3.11: iterating an IntFlag
skips its zero member, so Std.from_str("0") returns None ("'NoneType' object
has no attribute 'get'"). Patched here, in the torchrun process only.
"""
try:
    with open("/proc/self/cmdline", "rb") as f:
        _is_torchrun = b"torchrun" in f.read()
except OSError:
    _is_torchrun = False

if _is_torchrun:
    import re

    from torch.distributed.elastic.multiprocessing import api as _api

    def _from_str(vm):
        def to_std(v):
            return _api.Std(int(v))

        if re.fullmatch(r"^[0-3]$", vm):
            return to_std(vm)
        return {int(k): to_std(v) for k, v in (kv.split(":") for kv in vm.split(","))}

    _api.Std.from_str = staticmethod(_from_str)
