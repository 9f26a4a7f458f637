"""Only for the torchrun side of the launch benchmarks (PYTHONPATH=this dir): applies
torchrun_fixes (what Debian's build breaks) in the torchrun process only."""
try:
    with open("/proc/self/cmdline", "rb") as f:
        _is_torchrun = b"torchrun" in f.read()
except OSError:
    _is_torchrun = False

if _is_torchrun:
    import torchrun_fixes

    torchrun_fixes.apply()
