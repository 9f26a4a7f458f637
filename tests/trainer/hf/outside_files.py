#!/usr/bin/env python3
"""Writes the lying files of tests/trainer/hf/outside_files.sh (plain Python).

  safetensors GOOD OUT KIND   a copy of model.safetensors GOOD that lies (KIND below)
  index GOOD OUT KIND         a copy of model.safetensors.index.json GOOD that lies
  metadata GOOD OUT KIND      a copy of a checkpoint's metadata.json GOOD that lies
  config GOOD OUT KEY VALUE   a copy of config.json GOOD with KEY set to VALUE (JSON)
"""
import json
import math
import struct
import sys


def read_st(path):
    b = open(path, "rb").read()
    n = struct.unpack("<Q", b[:8])[0]
    return json.loads(b[8:8 + n]), b[8 + n:]


def write_st(path, header_text, data):
    text = header_text.encode()
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def entry(e):
    return json.dumps(e, separators=(",", ":"))


def safetensors(good, out, kind):
    h, data = read_st(good)
    h.pop("__metadata__", None)
    if kind == "nested":  # 100 MB of opening brackets
        write_st(out, "[" * 100_000_000, b"")
        return
    if kind == "overlap":  # lm_head over the embedding's bytes
        h["lm_head.weight"]["data_offsets"] = h["model.embed_tokens.weight"]["data_offsets"]
    elif kind == "fraction":  # a shape of 64.5
        h["model.norm.weight"]["shape"] = [h["model.norm.weight"]["shape"][0] + 0.5]
    elif kind == "wrap":  # an unused tensor of 2^64 elements
        end = len(data)
        h["unused"] = {"dtype": "F32", "shape": [2**32, 2**32], "data_offsets": [end, end]}
    elif kind == "metadata":
        write_st(out, json.dumps(dict(h, __metadata__={"format": 1})), data)
        return
    if kind == "duplicate":  # model.norm.weight twice: the last would win
        text = json.dumps(h)
        write_st(out, text[:-1] + ', "model.norm.weight": ' + entry(h["model.norm.weight"]) + "}",
                 data)
        return
    write_st(out, json.dumps(h), data)


def index(good, out, kind):
    j = json.load(open(good))
    wm = j["weight_map"]
    if kind == "two_shards":  # model.norm.weight in both shards
        files = sorted(set(wm.values()))
        text = json.dumps(j)[:-2] + ', "model.norm.weight": "%s"}}' % files[0]
        if wm["model.norm.weight"] == files[0]:
            text = json.dumps(j)[:-2] + ', "model.norm.weight": "%s"}}' % files[1]
        open(out, "w").write(text)
        return
    if kind == "not_string":
        wm["model.norm.weight"] = 7
    json.dump(j, open(out, "w"))


def metadata(good, out, kind):
    j = json.load(open(good))
    if kind == "chunk_2_62":
        j["files"][0]["chunks"][0]["numel"] = 2**62
    elif kind == "huge_vocab":  # consistent shapes of 2^24 tokens, files said to hold them
        old, new = j["model"]["vocab"], 2**24
        j["model"]["vocab"] = new
        for u in j["units"]:
            for p in u["params"]:
                if p["shape"][0] == old:
                    p["shape"][0] = new
            u["numel"] = sum(math.prod(p["shape"]) for p in u["params"])
        for f in j["files"]:
            f["bytes"] = 2**50
    elif kind.startswith("world_"):
        j["world"]["world_size"] = int(kind[len("world_"):])
    json.dump(j, open(out, "w"))


def config(good, out, key, value):
    j = json.load(open(good))
    j[key] = json.loads(value)
    json.dump(j, open(out, "w"))


if __name__ == "__main__":
    {"safetensors": safetensors, "index": index, "metadata": metadata,
     "config": config}[sys.argv[1]](*sys.argv[2:])
