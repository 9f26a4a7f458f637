#!/usr/bin/env bash
# Prepares the demo corpus: the English fortune cookies of Debian's `fortunes`
# package (about 2.6 MB, 15,000 quotations, jokes and short texts, one
# document per fortune), tokenised by wireup-prep with a SentencePiece model
# trained on them. Nothing is downloaded at run time except, when missing and
# allowed, the Debian package itself.
#
# usage: demo-corpus.sh [--no-install] [--vocab-size N] [--prep PATH] [OUTDIR]
#   OUTDIR        where the shards go (default: ./demo-corpus)
#   --vocab-size  tokenizer vocabulary (default 8000)
#   --prep        the wireup-prep binary (default: $WIREUP_PREP or wireup-prep on PATH)
#   --no-install  exit 77 (skipped) instead of installing the package
set -euo pipefail

out=./demo-corpus
vocab=8000
prep=${WIREUP_PREP:-wireup-prep}
install=1
fortunes=/usr/share/games/fortunes

while [[ $# -gt 0 ]]; do
  case $1 in
    --no-install) install=0; shift ;;
    --vocab-size) vocab=${2:?--vocab-size needs a number}; shift 2 ;;
    --prep) prep=${2:?--prep needs a path}; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    -*) echo "demo-corpus.sh: unknown option $1" >&2; exit 2 ;;
    *) out=$1; shift ;;
  esac
done

if ! dpkg-query -W -f='${Status}' fortunes 2>/dev/null | grep -q 'install ok installed'; then
  if [[ $install -eq 0 ]]; then
    echo "demo-corpus.sh: the Debian package 'fortunes' is not installed; skipping" >&2
    exit 77
  fi
  if [[ $(id -u) -ne 0 ]]; then
    echo "demo-corpus.sh: needs the Debian package 'fortunes': sudo apt-get install fortunes" >&2
    exit 1
  fi
  apt-get install -y --no-install-recommends fortunes >&2
fi

if ! command -v "$prep" >/dev/null 2>&1; then
  echo "demo-corpus.sh: wireup-prep not found (build it, or pass --prep PATH)" >&2
  exit 1
fi

# Fortune files are the extension-less files: *.dat are strfile indexes,
# *.u8 are links to the same text, and off/ (fortunes-off) is left out.
mapfile -t files < <(find "$fortunes" -maxdepth 1 -type f ! -name '*.*' | LC_ALL=C sort)
if [[ ${#files[@]} -eq 0 ]]; then
  echo "demo-corpus.sh: no fortune files in $fortunes" >&2
  exit 1
fi

# Each fortune ends with a line holding only "%".
"$prep" --vocab-size "$vocab" --doc-separator % --val-fraction 0.01 --seed 0 \
  --force -o "$out" "${files[@]}"
