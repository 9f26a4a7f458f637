#!/usr/bin/env bash
# wireup-prep under bad thread counts, failing writes, signals and a huge
# document: a clear error, the right exit status, and the output directory as
# it was (no .wireup-prep.PID.tmp staging directory left behind).
# Usage: prep_faults.sh WIREUP_PREP WORK_DIR
set -uo pipefail
prep=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
# shellcheck source=../../lib/assert.sh
source "$(dirname "$0")/../../lib/assert.sh"

# A small corpus: 400 lines of English-like text.
corpus=$work/corpus.txt
for i in $(seq 1 400); do
  echo "line $i of the corpus: the quick brown fox jumps over the lazy dog near river $((i % 17))"
done >"$corpus"

# No staging directory and no data set under OUT (which the run created or found empty).
no_leftovers() {
  local out=$1 what=$2
  if compgen -G "$out/.wireup-prep.*" >/dev/null; then
    fail "$what: staging directory left: $(ls -a "$out")"
  elif [[ -e $out/manifest.json ]]; then
    fail "$what: a manifest was written"
  else
    pass "$what: nothing left in the output"
  fi
}

# -j: bad values are a usage error (exit 2) naming the option, before any output.
for j in 100000 1025 0 -1 abc 2x ''; do
  out=$work/out-j
  rm -rf "$out"
  mkdir -p "$out"
  msg=$("$prep" --vocab-size 300 -q -j "$j" -o "$out" "$corpus" 2>&1)
  rc=$?
  if [[ $rc == 2 && $msg == *"-j/--threads"*"expected a whole number from 1 to 1024"* ]]; then
    pass "-j '$j': exit 2 with a clear message"
  else
    fail "-j '$j': exit $rc, message: $msg"
  fi
  no_leftovers "$out" "-j '$j'"
done

# A valid -j works.
out=$work/out-ok
if "$prep" --vocab-size 300 -q --text-docs line -j 3 -o "$out" "$corpus" && [[ -f $out/manifest.json ]]; then
  pass "-j 3 prepares the data set"
else
  fail "-j 3 did not prepare the data set"
fi

# A write that fails in the thread that writes shards (file size limit: the
# tokenizer model fits, the shards do not): exit 2 naming the shard, the
# staging directory removed, an existing data set untouched.
out=$work/out-fsize
msg=$(bash -c 'ulimit -f 40; trap "" XFSZ; exec "$@"' _ \
  "$prep" --tokenizer "$work/out-ok/tokenizer.model" -q --text-docs line --shard-tokens 100000000 \
  -o "$out" "$corpus" "$corpus" "$corpus" "$corpus" "$corpus" "$corpus" 2>&1)
rc=$?
if [[ $rc == 2 && $msg == *"train-00000.bin"*"write failed"* ]]; then
  pass "failing shard write: exit 2 naming the shard"
else
  fail "failing shard write: exit $rc, message: $msg"
fi
if [[ -e $out ]]; then fail "failing shard write: output directory $out left behind"; else pass "failing shard write: output removed"; fi

# One 64 MB document without a newline: tokenised in pieces, so memory stays
# bounded (SentencePiece given the whole text at once used over 7 GB).
big=$work/big.txt
yes "the quick brown fox jumps over the lazy dog near river seventeen" | tr '\n' ' ' |
  head -c 64000000 >"$big"
tok=$work/out-ok/tokenizer.model
out=$work/out-big
rss_limit_kb=$((1024 * 1024))
# The child's peak RSS in KiB from getrusage (python3 is in every lane; GNU time is not).
/usr/bin/python3 -c '
import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
open(sys.argv[1], "w").write("%d\n" % resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(rc)' "$work/big.rss" \
  "$prep" --tokenizer "$tok" -q -j 2 --val-fraction 0 -o "$out" "$big"
rc=$?
rss_kb=$(tail -n 1 "$work/big.rss")
if [[ $rc == 0 && -f $out/manifest.json && $rss_kb -lt $rss_limit_kb ]]; then
  pass "64 MB document: prepared with a peak RSS of $((rss_kb / 1024)) MiB (bound 1024 MiB)"
else
  fail "64 MB document: exit $rc, peak RSS $((rss_kb / 1024)) MiB (bound 1024 MiB)"
fi

# SIGTERM in the middle of that document, into an output that already holds
# a data set (--force): the run ends within seconds with 128 + 15, no staging
# directory, and the old data set exactly as it was.
out=$work/out-ok
before=$(cd "$out" && ls -A && sha256sum -- *)
"$prep" --tokenizer "$tok" -q -j 2 --val-fraction 0 --force -o "$out" "$big" &
pid=$!
sleep 3
kill -TERM "$pid"
start=$(date +%s%N)
wait "$pid"
rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
after=$(cd "$out" && ls -A && sha256sum -- *)
if [[ $rc == 143 && $ms -lt 5000 ]]; then
  pass "SIGTERM mid-document: exit 143 after $ms ms"
else
  fail "SIGTERM mid-document: exit $rc after $ms ms (expected 143 within 5000 ms)"
fi
if [[ $before == "$after" ]]; then
  pass "SIGTERM mid-document: the existing data set is untouched, no staging left"
else
  fail "SIGTERM mid-document: the output changed: before [$before] after [$after]"
fi

# A staging directory of a run killed outright (no such process) is removed
# by the next run into the same output.
mkdir -p "$out/.wireup-prep.999999999.tmp"
"$prep" --tokenizer "$tok" -q --val-fraction 0 --force -o "$out" "$corpus"
if [[ -e $out/.wireup-prep.999999999.tmp ]]; then
  fail "a dead run's staging directory was not removed"
else
  pass "a dead run's staging directory is removed by the next run"
fi

rm -rf "$big" "$work/out-big"  # 64 MB each
finish
