#!/usr/bin/env bash
# MFU: against a peak the trainer measured (a GEMM probe at start, on every
# rank at once) or one the user gave (--peak_tflops, WIREUP_PEAK_FLOPS); the
# banner says which, every [train] line on the CPU reports mfu > 0, and a
# peak that is not a positive number is refused by name.
source "$(dirname "$0")/lib.sh"
unset WIREUP_PEAK_FLOPS  # ctest gives every other trainer test a peak (tests/CMakeLists.txt)
common=(--preset tiny --synthetic_data --max_steps 3 --num_threads 1)
mfus() { sed -n 's/^\[train\] .* mfu=\([0-9.]*\) .*/\1/p'; }
all_positive() {  # DESCRIPTION FILE
  local v
  v=$(mfus <"$2" | tr '\n' ' ')
  [[ $(mfus <"$2" | wc -l) == 3 ]] && awk -v v="$v" 'BEGIN { n = split(v, a, " ");
      for (i = 1; i <= n; i++) if (!(a[i] > 0)) exit 1 }' && pass "$1: mfu $v" || fail "$1: mfu '$v'"
}

train 2 "${common[@]}" --train_batch_size 2 >"$WORK/measured.out"
grep -Eq '^\[mfu\] peak=[0-9.e+-]+ TFLOP/s per rank \(measured: 1024\^3 fp32 GEMM probe, [0-9.]+ s, mean of the ranks\)$' \
  "$WORK/measured.out" && pass "banner: measured peak ($(grep '^\[mfu\]' "$WORK/measured.out"))" ||
  fail "banner: $(grep '^\[mfu\]' "$WORK/measured.out" || echo none)"
all_positive "measured peak, world 2" "$WORK/measured.out"

# Given: mfu = tokens_per_s * flops_per_token / (peak * world); the tiny preset's
# flops_per_token is 6 * 125248 + 12 * 2 * 64 * 64 = 849792.
"$WIREUP_TRAIN" "${common[@]}" --peak_tflops 0.5 >"$WORK/given.out"
grep -qx '\[mfu\] peak=0.5 TFLOP/s per rank (given: --peak_tflops)' "$WORK/given.out" &&
  pass "banner: given peak" || fail "banner: $(grep '^\[mfu\]' "$WORK/given.out" || echo none)"
all_positive "given peak" "$WORK/given.out"
sed -n 's/^\[train\] .* tokens_per_s=\([0-9.]*\) mfu=\([0-9.]*\) .*/\1 \2/p' "$WORK/given.out" |
  awk '{ want = $1 * 849792 / 0.5e12; d = $2 - want; if (d < 0) d = -d; if (d > 0.00006) bad = 1; n++ }
       END { exit !(n == 3 && !bad) }' && pass "mfu = tokens/s x FLOPs/token / peak" ||
  fail "mfu formula: $(grep '^\[train\]' "$WORK/given.out")"
WIREUP_PEAK_FLOPS=2e11 "$WIREUP_TRAIN" "${common[@]}" >"$WORK/env.out"
grep -qx '\[mfu\] peak=0.2 TFLOP/s per rank (given: WIREUP_PEAK_FLOPS)' "$WORK/env.out" &&
  pass "banner: WIREUP_PEAK_FLOPS" || fail "banner: $(grep '^\[mfu\]' "$WORK/env.out" || echo none)"

for bad in 0 -2 nan; do
  set +e
  msg=$("$WIREUP_TRAIN" "${common[@]}" --peak_tflops "$bad" 2>&1)
  rc=$?
  set -e
  ((rc == 2)) && [[ $msg == *"--peak_tflops "*": expected one rank's peak in TFLOP/s, a positive number"* ]] &&
    pass "--peak_tflops $bad refused" || fail "--peak_tflops $bad: rc=$rc $msg"
done
set +e
msg=$(WIREUP_PEAK_FLOPS=fast "$WIREUP_TRAIN" "${common[@]}" 2>&1)
rc=$?
set -e
((rc == 2)) && [[ $msg == *"WIREUP_PEAK_FLOPS=fast: expected"* ]] && pass "WIREUP_PEAK_FLOPS=fast refused" ||
  fail "WIREUP_PEAK_FLOPS=fast: rc=$rc $msg"
finish
