#!/usr/bin/env python3
"""wireup-prep's tokenizer against the real tiktoken (python3-tiktoken).

Usage: tiktoken_parity.py WIREUP_TOKENIZE WIREUP_PREP VOCAB_DIR WORK_DIR

1. Llama 3's tokenizer.model (tiktoken.Encoding built from the file with
   Llama 3's pattern) and cl100k_base (tiktoken's own definition, its file
   read locally): identical ids on multilingual text, emoji with ZWJ, digit
   and whitespace runs, tabs, CRLF, contractions in any case, special-token
   spellings, long runs, the license texts and seeded random text.
2. A tokenizer.json made from Llama 3's ranks by the standard conversion
   (merges derived from the ranks, as transformers' TikTokenConverter):
   the same ids again.
3. wireup-prep end to end with both Llama 3 files: manifest vocabulary
   128256, BOS/EOS 128000/128001, uint32 shards holding BOS + tiktoken's
   ids + EOS per document.
Exit 0: all equal; 1: a difference (printed); 77: python3-tiktoken is not
installed here (the trixie lane has it), so there is nothing to compare with.
"""
import base64
import json
import os
import random
import subprocess
import sys

tool, prep, vocab_dir, work = sys.argv[1:5]
try:
    import tiktoken
    import tiktoken_ext.openai_public as openai_public
except ImportError:
    print("not applicable here: python3-tiktoken is not installed (the trixie lane has it)")
    sys.exit(77)

LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")


def ranks_of(path):
    if not os.path.exists(path):
        sys.exit(f"{path} is missing: run tests/data/vocab/fetch-vocab.sh (test.sh does)")
    with open(path, "rb") as f:
        return {base64.b64decode(t): int(r) for t, r in (line.split() for line in f if line.strip())}


def texts():
    out = [
        "Hello world", "I'M here, it'S the 'LL case, THEY'VE 'D 'm 'Re",
        "1234567 digits 00 3.14159 1,000,000 ١٢٣٤ ४२",
        "tabs\tand\r\nCRLF\n\n\n  spaces   end  ", "\t\t\tindented\n\t\tcode();\r\n",
        "日本語のテキストです。中文文本，标点！", "한국어 텍스트입니다 띄어쓰기", "العربية نص تجريبي",
        "हिन्दी पाठ का उदाहरण", "Ελληνικά κείμενα", "Русский текст, ёЁ",
        "👨‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽 thumbs 🧑‍💻", "<|begin_of_text|> <|end_of_text|> <|eot_id|><|endoftext|>",
        "     x", "a\u00a0b ſ K 's \u2028 \u3000 \u200b", "", " ", "\n", "'", "''s", "x" * 10000,
        " " * 10000 + "y", "7" * 10001, "\n" * 5000 + "z", "ab" * 5000, "😀" * 3000,
    ]
    licenses = "/usr/share/common-licenses"
    for name in ("GPL-3", "Apache-2.0", "MPL-2.0"):
        with open(os.path.join(licenses, name), encoding="utf-8") as f:
            out.append(f.read())
    rng = random.Random(18)
    pools = [" \t\n\r", "abcXYZ'", "0123456789", ".,!?-_()[]{}<>|/\\\"", "éßøñç", "日本語中文",
             "한국어", "عربي", "हिन्दी", "😀👍🏽\u200d🏳️", "\u00a0\u2009\u3000"]
    for _ in range(400):
        n = rng.randrange(1, 200)
        out.append("".join(rng.choice(rng.choice(pools)) for _ in range(n)))
    return out


def ours(tokenizer, items):
    r = subprocess.run([tool, tokenizer], input=json.dumps(items), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"wireup_tokenize {tokenizer} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


failures = 0


def compare(label, enc, tokenizer, items, vocab, bos, eos):
    global failures
    got = ours(tokenizer, items)
    facts = (got["vocab_size"], got["bos_id"], got["eos_id"])
    if facts != (vocab, bos, eos):
        print(f"{label}: vocab/bos/eos {facts}, expected {(vocab, bos, eos)}")
        failures += 1
    bad = 0
    for text, ids, ok in zip(items, got["ids"], got["decoded_ok"]):
        want = enc.encode_ordinary(text)
        if ids != want or not ok:
            bad += 1
            if bad <= 5:
                print(f"{label}: {text[:60]!r}: ours {ids[:20]} tiktoken {want[:20]} decode ok {ok}")
    failures += bad
    print(f"{label}: {len(items) - bad}/{len(items)} texts give tiktoken's ids")


items = texts()
llama_file = os.path.join(vocab_dir, "llama3.tiktoken")
llama_ranks = ranks_of(llama_file)
llama = tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=llama_ranks,
                          special_tokens={})
compare("Llama 3 tokenizer.model", llama, llama_file, items, 128256, 128000, 128001)

cl100k_file = os.path.join(vocab_dir, "cl100k_base.tiktoken")
cl100k_ranks = ranks_of(cl100k_file)
openai_public.load_tiktoken_bpe = lambda *args, **kwargs: cl100k_ranks  # no download
cl100k = tiktoken.Encoding(**openai_public.cl100k_base())
compare("cl100k_base", cl100k, cl100k_file, items, cl100k.n_vocab, -1,
        cl100k._special_tokens["<|endoftext|>"])

# The standard conversion of tiktoken ranks to a tokenizer.json.
printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
byte_char, extra = {}, 0
for b in range(256):
    byte_char[b] = chr(b) if b in printable else chr(256 + (extra := extra + 1) - 1)


def spell(token):
    return "".join(byte_char[b] for b in token)


merges = []
for token, rank in llama_ranks.items():
    local = [(token[:i], token[i:]) for i in range(1, len(token))
             if token[:i] in llama_ranks and token[i:] in llama_ranks]
    local.sort(key=lambda p: (llama_ranks[p[0]], llama_ranks[p[1]]))
    merges.extend((rank, p) for p in local)
merges.sort(key=lambda m: m[0])
specials = ["<|begin_of_text|>", "<|end_of_text|>"] + [
    f"<|reserved_special_token_{i}|>" for i in range(254)]
hf = {
    "version": "1.0", "truncation": None, "padding": None,
    "added_tokens": [{"id": 128000 + i, "content": s, "single_word": False, "lstrip": False,
                      "rstrip": False, "normalized": False, "special": True}
                     for i, s in enumerate(specials)],
    "normalizer": None,
    "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": LLAMA3_PATTERN}, "behavior": "Isolated",
         "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True,
         "use_regex": False}]},
    "post_processor": {"type": "TemplateProcessing",
                       "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}},
                                  {"Sequence": {"id": "A", "type_id": 0}}],
                       "pair": [], "special_tokens": {}},
    "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True,
                "use_regex": True},
    "model": {"type": "BPE", "dropout": None, "unk_token": None,
              "continuing_subword_prefix": None, "end_of_word_suffix": None,
              "fuse_unk": False, "byte_fallback": False, "ignore_merges": True,
              "vocab": {spell(t): r for t, r in llama_ranks.items()},
              "merges": [f"{spell(a)} {spell(b)}" for _, (a, b) in merges]},
}
os.makedirs(work, exist_ok=True)
hf_file = os.path.join(work, "tokenizer.json")
with open(hf_file, "w", encoding="utf-8") as f:
    json.dump(hf, f, ensure_ascii=False)
compare("Llama 3 tokenizer.json (converted)", llama, hf_file, items, 128256, 128000, 128001)

# wireup-prep end to end: one document per line.
docs = [t for t in items[:40] if t.strip() and "\n" not in t and "\r" not in t]
corpus = os.path.join(work, "corpus.txt")
with open(corpus, "w", encoding="utf-8", newline="\n") as f:
    f.write("".join(d + "\n" for d in docs))
want = [t for d in docs for t in [128000, *llama.encode_ordinary(d), 128001]]
for label, tokenizer in (("tokenizer.model", llama_file), ("tokenizer.json", hf_file)):
    out = os.path.join(work, "prep-" + label)
    r = subprocess.run([prep, "-q", "--force", "--tokenizer", tokenizer, "--text-docs", "line",
                        "--val-fraction", "0", "-o", out, corpus], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"wireup-prep with {label} failed: {r.stderr.strip()}")
    with open(os.path.join(out, "manifest.json"), encoding="utf-8") as f:
        m = json.load(f)
    tok = m["tokenizer"]
    facts = (m["token_bytes"], tok["vocab_size"], tok["bos_id"], tok["eos_id"], tok["file"])
    expected = (4, 128256, 128000, 128001, label)
    stream = []
    for shard in m["splits"]["train"]["shards"]:
        with open(os.path.join(out, shard["file"]), "rb") as f:
            f.seek(4096)
            data = f.read(4 * shard["tokens"])
        stream += [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
    ok = facts == expected and stream == want
    failures += not ok
    print(f"wireup-prep with {label}: manifest {facts} (expected {expected}), "
          f"{len(stream)} tokens {'==' if stream == want else '!='} BOS + tiktoken + EOS")

print("FAILED" if failures else "all equal")
sys.exit(1 if failures else 0)
