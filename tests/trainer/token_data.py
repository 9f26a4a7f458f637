#!/usr/bin/env python3
"""Writes a wireup-tokens data set (docs/data-format.md) of random tokens, for tests.

  token_data.py OUT --vocab V [--train N,N,...] [--validation N,...] [--seed S] [--bad_token I]
                [--chat MAX] [--preference [--learnable]]

Each number is one shard's token count; a shard holds documents of 1 to 40
tokens. --chat MAX: a chat data set instead (manifest and shards version 2):
each document is a conversation of 2 to MAX tokens whose loss mask alternates
untrained and trained turns of 1 to 6 tokens, the first token untrained. --preference: a preference data set instead (manifest
version 3, shards version 2): documents in pairs, prompt + chosen then prompt +
rejected (the same prompt of 1 to 8 tokens, completions of 1 to 12, trained).
--learnable: a preference a model can learn and carry to unseen pairs: chosen
completions of ids below V/2, rejected ones of ids at or above V/2. An empty list leaves that split without shards. The manifest lists a
placeholder tokenizer file (the trainer never opens it). --bad_token I writes id V (one past
the vocabulary) at position I of the first validation shard, with checksums that match.
"""
import argparse
import hashlib
import json
import os
import random
import struct


def write_shard(path, tokens, doc_starts, vocab, width, mask=None):
    count, docs = len(tokens), len(doc_starts)
    index_offset = (4096 + count * width + 7) // 8 * 8
    version = 1 if mask is None else 2
    header = b"WUTOKENS" + struct.pack("<IIIIII", version, width, vocab, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    header += struct.pack("<QQQQ", count, docs, 4096, index_offset)
    bits = b""
    if mask is not None:
        header += struct.pack("<QQ", index_offset + (docs + 1) * 8, sum(mask))
        packed = bytearray((count + 7) // 8)
        for i, m in enumerate(mask):
            packed[i // 8] |= m << (i % 8)
        bits = bytes(packed)
    header += b"\0" * (4096 - len(header))
    body = struct.pack("<%d%s" % (count, "H" if width == 2 else "I"), *tokens)
    pad = b"\0" * (index_offset - 4096 - len(body))
    index = struct.pack("<%dQ" % (docs + 1), *(doc_starts + [count]))
    blob = header + body + pad + index + bits
    with open(path, "wb") as f:
        f.write(blob)
    entry = {"file": os.path.basename(path), "bytes": len(blob), "tokens": count,
             "documents": docs, "sha256": hashlib.sha256(blob).hexdigest()}
    if mask is not None:
        entry["trained_tokens"] = sum(mask)
    return entry


def conversation_mask(n, rng):
    """Untrained and trained turns of 1 to 6 tokens, the first token untrained."""
    mask, trained = [0], 0
    while len(mask) < n:
        mask += [trained] * min(rng.randint(1, 6), n - len(mask))
        trained ^= 1
    return mask


def pairs_shard(n, vocab, rng, learnable=False):
    """Whole pairs of at most n tokens: tokens, document starts, mask."""
    tokens, starts, mask = [], [], []
    half = vocab // 2
    ranges = [(0, half), (half, vocab)] if learnable else [(0, vocab), (0, vocab)]
    while True:
        prompt = [rng.randrange(vocab) for _ in range(rng.randint(1, 8))]
        sides = [[rng.randrange(*r) for _ in range(rng.randint(1, 12))] for r in ranges]
        if len(tokens) + 2 * len(prompt) + len(sides[0]) + len(sides[1]) > n:
            return tokens, starts, mask
        for side in sides:
            starts.append(len(tokens))
            tokens += prompt + side
            mask += [0] * len(prompt) + [1] * len(side)


def write_split(out, name, sizes, vocab, width, rng, bad_token=None, chat=0, preference=False,
                learnable=False):
    shards = []
    for i, n in enumerate(sizes):
        if preference:
            tokens, starts, mask = pairs_shard(n, vocab, rng, learnable)
            shards.append(write_shard(os.path.join(out, "%s-%05d.bin" % (name, i)), tokens,
                                      starts, vocab, width, mask))
            continue
        tokens = [rng.randrange(vocab) for _ in range(n)]
        if bad_token is not None and i == 0:
            tokens[bad_token] = vocab
        starts, at, mask = [], 0, None if not chat else []
        while at < n:
            starts.append(at)
            length = min(rng.randint(2, chat) if chat else rng.randint(1, 40), n - at)
            if chat:
                mask += conversation_mask(length, rng)
            at += length
        shards.append(write_shard(os.path.join(out, "%s-%05d.bin" % (name, i)), tokens, starts,
                                  vocab, width, mask))
    split = {"tokens": sum(s["tokens"] for s in shards),
             "documents": sum(s["documents"] for s in shards), "shards": shards}
    if chat or preference:
        split["trained_tokens"] = sum(s["trained_tokens"] for s in shards)
    return split


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--vocab", type=int, required=True)
    ap.add_argument("--train", default="")
    ap.add_argument("--validation", default="")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bad_token", type=int)
    ap.add_argument("--chat", type=int, default=0)
    ap.add_argument("--preference", action="store_true")
    ap.add_argument("--learnable", action="store_true")
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
        "splits": {"train": write_split(a.out, "train", sizes(a.train), a.vocab, width, rng,
                                        chat=a.chat, preference=a.preference,
                                        learnable=a.learnable),
                   "validation": write_split(a.out, "validation", sizes(a.validation), a.vocab,
                                             width, rng, a.bad_token, chat=a.chat,
                                             preference=a.preference, learnable=a.learnable)},
        "inputs": [],
    }
    if a.chat:
        sp = manifest["splits"]
        manifest["version"] = 2
        manifest["chat"] = {
            "template": "llama3", "date_string": "", "train_on": "assistant", "skipped_rows": 0,
            "conversations": sp["train"]["documents"] + sp["validation"]["documents"],
            "tokens": sp["train"]["tokens"] + sp["validation"]["tokens"],
            "trained_tokens": sp["train"]["trained_tokens"] + sp["validation"]["trained_tokens"]}
    if a.preference:
        sp = manifest["splits"]
        manifest["version"] = 3
        manifest["preference"] = {
            "format": "text", "template": "", "date_string": "", "skipped_rows": 0,
            "skipped_by_reason": {},
            "pairs": (sp["train"]["documents"] + sp["validation"]["documents"]) // 2,
            "trained_tokens": sp["train"]["trained_tokens"] + sp["validation"]["trained_tokens"]}
    with open(os.path.join(a.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)


if __name__ == "__main__":
    main()
