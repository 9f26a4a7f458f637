#!/usr/bin/env python3
"""Checks a --profile_steps trace of a CUDA run (tests/gpu/gpu_stages.sh, stage trace).

trace_check.py TRACE.json --units N --steps A:B [--slack_us S] [--nccl]

Passes (exit 0, one summary line) when TRACE is valid JSON holding, for every
step A..B, the host's "step" span and, on the track named "cuda compute",
"forward unit U" and "backward unit U" for every unit U < N, each with a
duration above 0 and inside its step's host span (S microseconds of slack
either side, default 1000); with --nccl, also a track "cuda nccl" with spans
in those steps. Else exit 1 and the first thing that was wrong.
"""
import argparse
import json
import sys


def check(path, units, first, last, slack, nccl):
    try:
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, ValueError) as e:
        return "%s: not a readable JSON file: %s" % (path, e)
    events = trace.get("traceEvents") if isinstance(trace, dict) else None
    if not isinstance(events, list):
        return "%s: no traceEvents list" % path
    tracks = {e["args"]["name"]: e["tid"] for e in events
              if e.get("ph") == "M" and e.get("name") == "thread_name"}
    if "cuda compute" not in tracks:
        return "no track named 'cuda compute' (tracks: %s)" % sorted(tracks)
    if nccl and "cuda nccl" not in tracks:
        return "no track named 'cuda nccl' (tracks: %s)" % sorted(tracks)
    xs = [e for e in events if e.get("ph") == "X"]
    compute = tracks["cuda compute"]
    for step in range(first, last + 1):
        hosts = [e for e in xs if e["name"] == "step" and e["args"]["step"] == step]
        if len(hosts) != 1:
            return "step %d: %d host 'step' spans, expected 1" % (step, len(hosts))
        lo, hi = hosts[0]["ts"] - slack, hosts[0]["ts"] + hosts[0]["dur"] + slack
        on_gpu = {e["name"]: e for e in xs
                  if e["tid"] == compute and e["args"]["step"] == step}
        for u in range(units):
            for phase in ("forward", "backward"):
                name = "%s unit %d" % (phase, u)
                e = on_gpu.get(name)
                if e is None:
                    return "step %d: no '%s' on 'cuda compute' (has: %s)" % (
                        step, name, sorted(on_gpu))
                if not e["dur"] > 0:
                    return "step %d: '%s' on the GPU lasts %s us" % (step, name, e["dur"])
                if e["ts"] < lo or e["ts"] + e["dur"] > hi:
                    return ("step %d: '%s' on the GPU [%d, %d] is outside the step's host "
                            "span [%d, %d] (slack %d us)" % (
                                step, name, e["ts"], e["ts"] + e["dur"], lo + slack,
                                hi - slack, slack))
        if nccl and not any(e["tid"] == tracks["cuda nccl"] and e["args"]["step"] == step
                            for e in xs):
            return "step %d: nothing on 'cuda nccl'" % step
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--units", type=int, required=True)
    ap.add_argument("--steps", required=True, help="A:B")
    ap.add_argument("--slack_us", type=int, default=1000)
    ap.add_argument("--nccl", action="store_true")
    a = ap.parse_args()
    first, last = (int(x) for x in a.steps.split(":"))
    problem = check(a.trace, a.units, first, last, a.slack_us, a.nccl)
    if problem:
        print("trace_check: " + problem)
        return 1
    print("trace_check: %s: steps %d..%d, %d units' forward and backward on 'cuda compute', "
          "inside their steps (slack %d us)" % (a.trace, first, last, a.units, a.slack_us))
    return 0


if __name__ == "__main__":
    sys.exit(main())
