#!/usr/bin/python3
"""The loss `wireup-train eval` must report, computed independently.

  eval_reference.py HF_DIR DATA --split S --context T --windows N [--adapter DIR]

Reads the split's shards as the format document describes them (header
fields, little-endian tokens at byte 4096), concatenates them in manifest
order, takes window i = tokens [i*T, i*T+T] and prints the mean next-token
cross-entropy of hf_llama.py's Hugging Face Llama over all N*T targets; with
--adapter, with a PEFT LoRA adapter applied unmerged (../lora/peft_adapter.py).
"""
import argparse
import json
import os
import struct
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hf_llama import HfLlama  # noqa: E402


def split_tokens(data, split):
    with open(os.path.join(data, "manifest.json")) as f:
        manifest = json.load(f)
    stream = []
    for shard in manifest["splits"][split]["shards"]:
        with open(os.path.join(data, shard["file"]), "rb") as f:
            blob = f.read()
        assert blob[:8] == b"WUTOKENS", shard["file"]
        width, = struct.unpack_from("<I", blob, 12)
        count, = struct.unpack_from("<Q", blob, 32)
        stream += struct.unpack_from("<%d%s" % (count, "H" if width == 2 else "I"), blob, 4096)
    return stream


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("hf_dir")
    ap.add_argument("data")
    ap.add_argument("--split", default="validation")
    ap.add_argument("--context", type=int, required=True)
    ap.add_argument("--windows", type=int, required=True)
    ap.add_argument("--adapter", help="a PEFT LoRA adapter directory")
    a = ap.parse_args()
    torch.set_num_threads(1)
    stream = split_tokens(a.data, a.split)
    T = a.context
    rows = [stream[i * T:i * T + T + 1] for i in range(a.windows)]
    assert all(len(r) == T + 1 for r in rows), "not enough tokens"
    if a.adapter:
        sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lora"))
        from peft_adapter import LoraLlama  # noqa: E402
        model = LoraLlama(a.hf_dir, a.adapter)
    else:
        model = HfLlama(a.hf_dir)
    with torch.no_grad():
        print(f"{model.loss(torch.tensor(rows, dtype=torch.long)):.9g}")


if __name__ == "__main__":
    main()
