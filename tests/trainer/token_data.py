#!/usr/bin/env python3
"""Writes a wireup-tokens data set (docs/data-format.md) of random tokens, for tests.

  token_data.py OUT --vocab V [--train N,N,...] [--validation N,...] [--seed S] [--bad_token I]

Each number is one shard's token count; a shard holds documents of 1 to 40
tokens. An empty list leaves that split without shards. The manifest lists a
placeholder tokenizer file (the trainer never opens it). --bad_token I writes id V (one past
the vocabulary) at position I of the first validation shard, with checksums that match.
"""
import argparse
import hashlib
import json
import os
import random
import struct


def write_shard(path, tokens, doc_starts, vocab, width):
    count, docs = len(tokens), len(doc_starts)
    index_offset = (4096 + count * width + 7) // 8 * 8
    header = b"WUTOKENS" + struct.pack("<IIIIII", 1, width, vocab, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    header += struct.pack("<QQQQ", count, docs, 4096, index_offset)
    header += b"\0" * (4096 - len(header))
    body = struct.pack("<%d%s" % (count, "H" if width == 2 else "I"), *tokens)
    pad = b"\0" * (index_offset - 4096 - len(body))
    index = struct.pack("<%dQ" % (docs + 1), *(doc_starts + [count]))
    blob = header + body + pad + index
    with open(path, "wb") as f:
        f.write(blob)
    return {"file": os.path.basename(path), "bytes": len(blob), "tokens": count,
            "documents": docs, "sha256": hashlib.sha256(blob).hexdigest()}


def write_split(out, name, sizes, vocab, width, rng, bad_token=None):
    shards = []
    for i, n in enumerate(sizes):
        tokens = [rng.randrange(vocab) for _ in range(n)]
        if bad_token is not None and i == 0:
            tokens[bad_token] = vocab
        starts, at = [], 0
        while at < n:
            starts.append(at)
            at += rng.randint(1, 40)
        shards.append(write_shard(os.path.join(out, "%s-%05d.bin" % (name, i)), tokens, starts,
                                  vocab, width))
    return {"tokens": sum(s["tokens"] for s in shards),
            "documents": sum(s["documents"] for s in shards), "shards": shards}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--train", default="")
    ap.add_argument("--validation", default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bad_token", type=int)
    a = ap.parse_args()
    sizes = lambda s: [int(x) for x in s.split(",") if x]
    os.makedirs(a.out, exist_ok=True)
    width = 2 if a.vocab <= 65536 else 4
    rng = random.Random(a.seed)
    tok = b"placeholder tokenizer\n"
    with open(os.path.join(a.out, "tokenizer.model"), "wb") as f:
        f.write(tok)
    manifest = {
        "format": "wireup-tokens", "version": 1, "created_by": "token_data.py",
        "token_bytes": width,
        "tokenizer": {"type": "sentencepiece", "file": "tokenizer.model",
                      "sha256": hashlib.sha256(tok).hexdigest(), "source": "test",
                      "vocab_size": a.vocab, "bos_id": -1, "eos_id": -1},
        "documents": {"add_bos": False, "add_eos": False},
        "split": {"validation_fraction": 0.5, "seed": a.seed},
        "splits": {"train": write_split(a.out, "train", sizes(a.train), a.vocab, width, rng),
                   "validation": write_split(a.out, "validation", sizes(a.validation), a.vocab,
                                             width, rng, a.bad_token)},
        "inputs": [],
    }
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
