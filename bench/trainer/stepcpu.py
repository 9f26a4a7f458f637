#!/usr/bin/python3
"""Runs a command and passes its output through, appending ` cpu_s=X` to every
line that starts with [train]: the command's own CPU time (user + system, all
threads) when the line arrived. The difference between two such lines is the
CPU time of the steps between them, which other load on a shared machine
disturbs much less than the wall clock. Exits with the command's status.

Usage: stepcpu.py COMMAND [ARGS...]
"""
import os
import subprocess
import sys

TICK = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime
    except (OSError, IndexError, ValueError):
        return float("nan")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    child = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE, text=True, bufsize=1)
    for line in child.stdout:  # the child is not reaped yet: its /proc entry stays readable
        line = line.rstrip("\n")
        if line.startswith("[train]"):
            line += f" cpu_s={cpu_seconds(child.pid):.3f}"
        print(line, flush=True)
    return child.wait()


if __name__ == "__main__":
    sys.exit(main())
