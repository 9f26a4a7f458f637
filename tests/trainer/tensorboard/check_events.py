#!/usr/bin/python3
"""Reads the TensorBoard event files of a directory as TensorBoard would and
checks them against the [train] and [val] lines of the runs that wrote them.

Nothing here comes from the writer: the TFRecord CRCs are checked with this
file's own CRC-32C, and each Event is decoded by protobuf's Python runtime
from .proto definitions written below with TensorBoard's field numbers
(tensorboard/compat/proto/event.proto and summary.proto), compiled by protoc.
Files are read in name order, and both of TensorBoard's loaders are
followed: its Python event accumulator, for which the first SessionLog START
is a start and every later one a restart that drops the events already read
whose step is >= its step; and its Rust data server (--load_fast), which
ignores SessionLog and drops, per tag, the points whose step is >= that of a
new point.

Checks: each record's length and data CRC; each Event decodes, has no field
outside the definitions and re-serializes to the same bytes; each file starts
with file_version "brain.Event:2" then a START; after the restarts, each tag's
steps strictly increase, and (tag, step) pairs and values are exactly those of
the log lines (later lines replace earlier ones of the same step), to the
precision printed, in both loaders' views. Exit 0 when all hold, 1 otherwise, 77 when python3-protobuf
or protoc is missing.

usage: check_events.py DIR LOG... [--expect_restarts N] [--min_purged N]
"""
import argparse
import importlib
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

SUMMARY_PROTO = """syntax = "proto3";
package wireup_check;
message Summary {
  message Value {
    string node_name = 7;
    string tag = 1;
    oneof value { float simple_value = 2; }
  }
  repeated Value value = 1;
}
"""
EVENT_PROTO = """syntax = "proto3";
package wireup_check;
import "summary.proto";
message Event {
  double wall_time = 1;
  int64 step = 2;
  oneof what {
    string file_version = 3;
    bytes graph_def = 4;
    Summary summary = 5;
    SessionLog session_log = 7;
  }
}
message SessionLog {
  enum SessionStatus { STATUS_UNSPECIFIED = 0; START = 1; STOP = 2; CHECKPOINT = 3; }
  SessionStatus status = 1;
  string checkpoint_path = 2;
  string msg = 3;
}
"""


def crc_table():
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ 0x82F63B78 if c & 1 else c >> 1
        table.append(c)
    return table


TABLE = crc_table()


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc = TABLE[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) & 0xFFFFFFFF


assert crc32c(b"123456789") == 0xE3069283


def skip(why):
    print("SKIP: " + why)
    sys.exit(77)


def load_protos(work):
    try:
        import google.protobuf  # noqa: F401
    except ImportError:
        skip("no protobuf Python runtime (python3-protobuf)")
    protoc = shutil.which("protoc")
    if not protoc:
        skip("no protoc (protobuf-compiler)")
    for name, text in (("summary.proto", SUMMARY_PROTO), ("event.proto", EVENT_PROTO)):
        with open(os.path.join(work, name), "w") as f:
            f.write(text)
    subprocess.run([protoc, "--proto_path=" + work, "--python_out=" + work,
                    "summary.proto", "event.proto"], check=True)
    sys.path.insert(0, work)
    return importlib.import_module("event_pb2")


def records(path):
    with open(path, "rb") as f:
        data = f.read()
    at = 0
    while at < len(data):
        if len(data) - at < 12:
            raise ValueError("%s: %d bytes left at %d, not a record header" % (path, len(data) - at, at))
        (length,) = struct.unpack_from("<Q", data, at)
        (length_crc,) = struct.unpack_from("<I", data, at + 8)
        if length_crc != masked(crc32c(data[at:at + 8])):
            raise ValueError("%s: length CRC wrong at byte %d" % (path, at))
        end = at + 12 + length
        if end + 4 > len(data):
            raise ValueError("%s: record at byte %d truncated" % (path, at))
        (data_crc,) = struct.unpack_from("<I", data, end)
        if data_crc != masked(crc32c(data[at + 12:end])):
            raise ValueError("%s: data CRC wrong in the record at byte %d" % (path, at))
        yield data[at + 12:end]
        at = end + 4


def decode(event_pb2, raw, where):
    event = event_pb2.Event()
    event.ParseFromString(raw)
    event.DiscardUnknownFields()
    if event.SerializeToString() != raw:
        raise ValueError("%s: not the canonical encoding of the fields defined" % where)
    return event


def read_dir(event_pb2, directory):
    """Both loaders' views (tag -> [(step, value)]), and the restart counts."""
    files = sorted(n for n in os.listdir(directory) if "tfevents" in n)
    if not files:
        raise ValueError("%s: no event files" % directory)
    points, per_tag, seen_start, restarts, purged = {}, {}, False, 0, 0
    for name in files:
        for i, raw in enumerate(records(os.path.join(directory, name))):
            event = decode(event_pb2, raw, "%s record %d" % (name, i))
            kind = event.WhichOneof("what")
            if i == 0 and (kind != "file_version" or event.file_version != "brain.Event:2"):
                raise ValueError("%s: first record is not file_version brain.Event:2" % name)
            if i == 1 and kind != "session_log":
                raise ValueError("%s: second record is not a SessionLog START" % name)
            if kind == "session_log" and event.session_log.status == event_pb2.SessionLog.START:
                if seen_start:
                    restarts += 1
                    for tag in points:
                        kept = [p for p in points[tag] if p[0] < event.step]
                        purged += len(points[tag]) - len(kept)
                        points[tag] = kept
                seen_start = True
            elif kind == "summary":
                for value in event.summary.value:
                    if value.WhichOneof("value") != "simple_value":
                        raise ValueError("%s: %s is not a simple_value" % (name, value.tag))
                    point = (event.step, value.simple_value)
                    points.setdefault(value.tag, []).append(point)
                    series = [p for p in per_tag.get(value.tag, []) if p[0] < event.step]
                    per_tag[value.tag] = series + [point]
    return files, points, per_tag, restarts, purged


TRAIN = re.compile(r"^\[train\] step=(\d+)/\d+ (.*)$")
VAL = re.compile(r"^\[val\] step=(\d+) val_loss=(\S+)")


def expected_points(logs):
    expected = {}
    for log in logs:
        with open(log, errors="replace") as f:
            for line in f:
                m = TRAIN.match(line.strip())
                if m:
                    for pair in m.group(2).split():
                        key, text = pair.split("=", 1)
                        # The ranks' compute spread goes under straggler/.
                        group = "straggler/" if key == "slowest_rank" or key.startswith("compute_") \
                            else "train/"
                        expected[(group + key, int(m.group(1)))] = text
                m = VAL.match(line.strip())
                if m:
                    expected[("val/loss", int(m.group(1)))] = m.group(2)
    return expected


def within_print(value, text):
    m = re.fullmatch(r"-?\d+(?:\.(\d*))?(?:[eE]([+-]?\d+))?", text)
    if not m:
        return False
    resolution = 0.5 * 10.0 ** (int(m.group(2) or 0) - len(m.group(1) or ""))
    printed = float(text)
    return abs(value - printed) <= resolution + abs(printed) * 2.0 ** -23 + 1e-30


def check(points, expected):
    errors = []
    for tag, series in sorted(points.items()):
        steps = [s for s, _ in series]
        if any(b <= a for a, b in zip(steps, steps[1:])):
            errors.append("%s: steps not strictly increasing: %s" % (tag, steps))
    got = {(tag, s): v for tag, series in points.items() for s, v in series}
    for key in sorted(set(expected) - set(got)):
        errors.append("%s step %d: logged, not in the event files" % key)
    for key in sorted(set(got) - set(expected)):
        errors.append("%s step %d: in the event files, not logged" % key)
    for key in sorted(set(got) & set(expected)):
        if not within_print(got[key], expected[key]):
            errors.append("%s step %d: %r in the file, %s logged" % (key + (got[key], expected[key])))
    return errors


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--expect_restarts", type=int)
    ap.add_argument("--min_purged", type=int, default=0)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="wireup-tb-check.")
    try:
        event_pb2 = load_protos(work)
        files, points, per_tag, restarts, purged = read_dir(event_pb2, args.dir)
    except (ValueError, subprocess.CalledProcessError) as e:
        print("FAIL: %s" % e)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    expected = expected_points(args.logs)
    errors = check(points, expected)
    if per_tag != points:
        errors.append("the Rust data server's view (per-tag preemption) differs from the START purge")
    if not expected:
        errors.append("no [train] lines in %s" % " ".join(args.logs))
    if args.expect_restarts is not None and restarts != args.expect_restarts:
        errors.append("%d restarts (SessionLog START after the first), expected %d"
                      % (restarts, args.expect_restarts))
    if purged < args.min_purged:
        errors.append("%d points dropped by restarts, expected at least %d" % (purged, args.min_purged))
    for e in errors:
        print("FAIL: " + e)
    steps = sorted({s for series in points.values() for s, _ in series})
    print("%s: %d files, %d tags, steps %s..%s, %d values checked, %d restarts, %d dropped"
          % ("ok" if not errors else "FAILED", len(files), len(points), steps[0] if steps else "-",
             steps[-1] if steps else "-", len(expected), restarts, purged))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
