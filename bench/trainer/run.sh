#!/usr/bin/env bash
# wireup-train against its PyTorch eager peers, all in one run on this machine:
# throughput (vs eager at world 1, vs DDP at world 2), efficiency (model FLOP/s
# over the single-thread GEMM peak measured in the same run: the faster of
# OpenBLAS through torch.mm and oneDNN's sgemm, which wireup-train's linear
# layers call), scaling (world 2
# over world 1, divided by the machine's own two-process GEMM scaling) and
# sharded state bytes for N = 1, 2, 4; and generate's decoding against eager
# decoding with a KV cache (decode_bench.sh); SFT's document masking against plain causal
# attention on the same packed windows (sft_bench.sh); LoRA's peak memory against a full
# fine-tune, each against eager PyTorch (lora_bench.sh). Peer and wireup runs are interleaved,
# REPS of each; figures are medians over them. See docs/bench-trainer.md.
# Usage: run.sh BUILD_DIR OUT.md [REPS]
# Environment: WIREUP_BENCH_REPS (3), WIREUP_BENCH_TRAINER_WARMUP (1 untimed
# step), WIREUP_BENCH_TRAINER_STEPS (4 timed steps), WIREUP_BENCH_TRAINER_EXTRA
# (1: also other model shapes, once each), WIREUP_BENCH_PORT (29710).
set -euo pipefail
build=$1 out=$2 reps=${3:-${WIREUP_BENCH_REPS:-3}}
warm=${WIREUP_BENCH_TRAINER_WARMUP:-1} timed=${WIREUP_BENCH_TRAINER_STEPS:-4}
extra=${WIREUP_BENCH_TRAINER_EXTRA:-1}
port=${WIREUP_BENCH_PORT:-29710}
here=$(cd "$(dirname "$0")" && pwd)
train=$build/trainer/wireup-train
py=/usr/bin/python3   # Debian's python3-torch; the first python3 on PATH may lack torch
[[ -x $train ]] || { echo "no $train: build first (cmake --build $build --target wireup-train)" >&2; exit 1; }
"$py" -c 'import torch' 2>/dev/null || { echo "$py cannot import torch: apt-get install python3-torch" >&2; exit 1; }
dir=$(mktemp -d /tmp/wireup-bench-trainer.XXXXXX)
trap 'rm -rf "$dir"' EXIT
export OMP_NUM_THREADS=1   # one intra-op thread everywhere (the flags say so too)
load0=$(cut -d' ' -f1-3 /proc/loadavg) t_begin=$(date +%s)

# --- runners: each writes its output to the file named first ------------------
run1() {  # OUT CMD... : one process
  local o=$1; shift
  timeout 600 "$@" >"$o" 2>&1 || { echo "failed: $*" >&2; cat "$o" >&2; return 1; }
}
runN() {  # OUT N CMD... : N ranks on 127.0.0.1; rank r writes OUT.r (rank 0 also OUT)
  local o=$1 n=$2 r pids=() rc=0; shift 2
  port=$((port + 1))
  for ((r = n - 1; r >= 0; r--)); do
    RANK=$r WORLD_SIZE=$n LOCAL_RANK=$r LOCAL_WORLD_SIZE=$n MASTER_ADDR=127.0.0.1 MASTER_PORT=$port \
      timeout 600 "$@" >"$o.$r" 2>&1 & pids+=($!)
  done
  for r in "${pids[@]}"; do wait "$r" || rc=$?; done
  ((rc == 0)) || { echo "failed ($rc): $*" >&2; cat "$o".* >&2; return 1; }
  cp "$o.0" "$o"
}
gemm() {  # OUT NPROC [LIBRARY] : NPROC single-thread 2048 GEMM processes over the same 4 seconds
  local o=$1 n=$2 lib=${3:-torch} at r pids=() rc=0 recs=()
  at=$(($(date +%s) + 3))   # time enough to import torch
  for ((r = 0; r < n; r++)); do
    timeout 120 "$py" "$here/gemm_peak.py" --library "$lib" --seconds 4 --start_at "$at" --record "$o.rec$r" >"$o.$r" 2>&1 &
    pids+=($!) recs+=("$o.rec$r")
  done
  for r in "${pids[@]}"; do wait "$r" || rc=$?; done
  ((rc == 0)) || { echo "gemm x$n failed" >&2; cat "$o".* >&2; return 1; }
  "$py" "$here/gemm_peak.py" --combine "${recs[@]}" >"$o"
}

# --- parsers -----------------------------------------------------------------
field() {  # FILE TAG KEY : KEY's value on the first line starting with TAG
  awk -v tag="$2" -v key="$3" 'index($0, tag) == 1 {
      for (i = 1; i <= NF; i++) if (index($i, key "=") == 1) { print substr($i, length(key) + 2); exit } }' "$1"
}
# wireup-train's [train] lines after WARMUP steps: tokens/s over all of them
# (from step_time_s), tokens/s of the fastest one, its mfu column there, and
# rank 0's CPU seconds per step (cpu_s, appended by stepcpu.py).
wireup_tps() {  # FILE [WARMUP]
  awk -v w="${2:-$warm}" '
    /^\[config\]/ { for (i = 1; i <= NF; i++) if ($i ~ /^global_batch_tokens=/) { split($i, a, "="); tok = a[2] } }
    /^\[train\]/ { s = 0; for (i = 1; i <= NF; i++) { split($i, a, "=");
        if (a[1] == "step") { split(a[2], b, "/"); s = b[1] }
        if (a[1] == "step_time_s") st = a[2]; if (a[1] == "mfu") m = a[2]; if (a[1] == "cpu_s") c = a[2] }
      if (s == w) c0 = c
      if (s > w) { n++; t += st; c1 = c; if (best == "" || st < best) { best = st; bm = m } } }
    END { if (n == 0 || t <= 0) { print "nan nan nan nan"; exit }
          printf "%.1f %.1f %.4f %.3f\n", n * tok / t, tok / best, bm, (c1 - c0) / n }' "$1"
}
# FLOPs per token: 6 x non-embedding params + 12 x layers x hidden x seq (the trainer's formula).
fpt() {
  awk '/^\[config\]/ { for (i = 1; i <= NF; i++) { split($i, a, "="); v[a[1]] = a[2] }
    printf "%.0f\n", 6 * (v["params"] - v["vocab"] * v["hidden"]) + 12 * v["layers"] * v["hidden"] * v["context"] }' "$1"
}
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
range() { printf '%s\n' "$@" | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {print lo " – " hi}'; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
pct() { calc %.1f "100 * $1"; }
verdict() {  # VALUE OP TARGET
  awk -v v="$1" -v t="$3" -v op="$2" 'BEGIN {
    ok = (op == ">=") ? (v >= t) : (v <= t); print (ok ? "PASS" : "FAIL") " (" op " " t ")" }'
}

eager_args=(--threads 1 --warmup "$warm" --steps "$timed")
wireup_base=(--preset small --synthetic_data --num_threads 1)
wireup_args=("${wireup_base[@]}" --max_steps "$((warm + timed))")
# per rep: GEMM best/mean (one process: OpenBLAS gb, oneDNN go, the faster g1),
# pair best/mean; per run: best-step tokens/s (b*), mean tokens/s (m*), CPU
# s/step (c*); wireup's mfu column (f*)
declare -a gb gbm go gom g2o g2om g1 g1m g1c g2 g2m be1 me1 ce1 bw1 mw1 cw1 fw1 bd2 md2 cd2 bw2 mw2 cw2 fw2
faster() {  # FILE_A FILE_B : the one of two gemm outputs with the higher best_gflops
  awk -v a="$(field "$1" '[gemm-combined]' best_gflops)" -v b="$(field "$2" '[gemm-combined]' best_gflops)" \
    -v fa="$1" -v fb="$2" 'BEGIN { print (b > a) ? fb : fa }'
}

echo "bench trainer: $reps interleaved repetitions, $warm warmup + $timed timed steps each" >&2
for ((i = 0; i < reps; i++)); do
  gemm "$dir/gemm1b.$i" 1 torch
  gemm "$dir/gemm1o.$i" 1 onednn
  gb+=("$(field "$dir/gemm1b.$i" '[gemm-combined]' best_gflops)") gbm+=("$(field "$dir/gemm1b.$i" '[gemm-combined]' mean_gflops)")
  go+=("$(field "$dir/gemm1o.$i" '[gemm-combined]' best_gflops)") gom+=("$(field "$dir/gemm1o.$i" '[gemm-combined]' mean_gflops)")
  best=$(faster "$dir/gemm1b.$i" "$dir/gemm1o.$i")
  g1+=("$(field "$best" '[gemm-combined]' best_gflops)") g1m+=("$(field "$best" '[gemm-combined]' mean_gflops)")
  g1c+=("$(field "$best.0" '[gemm]' cpu_gflops)")
  gemm "$dir/gemm2.$i" 2
  gemm "$dir/gemm2o.$i" 2 onednn
  g2o+=("$(field "$dir/gemm2o.$i" '[gemm-combined]' best_gflops)") g2om+=("$(field "$dir/gemm2o.$i" '[gemm-combined]' mean_gflops)")
  g2+=("$(field "$dir/gemm2.$i" '[gemm-combined]' best_gflops)") g2m+=("$(field "$dir/gemm2.$i" '[gemm-combined]' mean_gflops)")
  peak=$(calc %.0f "${g1[i]} * 1e9")
  # Alternate which side goes first, so that a drift in the machine's load
  # does not always favour the same one.
  order=(eager wireup)
  ((i % 2 == 0)) || order=(wireup eager)
  for side in "${order[@]}"; do
    if [[ $side == eager ]]; then
      f=$dir/e1.$i; run1 "$f" "$py" "$here/llama_eager.py" "${eager_args[@]}"
      be1+=("$(field "$f" '[eager]' best_tokens_per_s)") me1+=("$(field "$f" '[eager]' tokens_per_s)") ce1+=("$(field "$f" '[eager]' cpu_step_s)")
      f=$dir/d2.$i; runN "$f" 2 "$py" "$here/llama_eager.py" "${eager_args[@]}"
      bd2+=("$(field "$f" '[eager]' best_tokens_per_s)") md2+=("$(field "$f" '[eager]' tokens_per_s)") cd2+=("$(field "$f" '[eager]' cpu_step_s)")
    else
      f=$dir/w1.$i; WIREUP_PEAK_FLOPS=$peak run1 "$f" "$py" "$here/stepcpu.py" "$train" "${wireup_args[@]}"
      read -r m b x c < <(wireup_tps "$f"); mw1+=("$m") bw1+=("$b") fw1+=("$x") cw1+=("$c")
      f=$dir/w2.$i; WIREUP_PEAK_FLOPS=$peak runN "$f" 2 "$py" "$here/stepcpu.py" "$train" "${wireup_args[@]}"
      read -r m b x c < <(wireup_tps "$f"); mw2+=("$m") bw2+=("$b") fw2+=("$x") cw2+=("$c")
    fi
  done
  echo "  rep $((i + 1)): GEMM ${gb[i]} (OpenBLAS) / ${go[i]} (oneDNN) GFLOP/s, two processes ${g2[i]}; best-step tokens/s: eager ${be1[i]}," \
    "wireup ${bw1[i]}, DDP x2 ${bd2[i]}, wireup x2 ${bw2[i]}" >&2
done

# --- memory: sharded state bytes for N = 1, 2, 4 (one step each) ---------------
declare -a mem_rows
mem_ok=1
for n in 1 2 4; do
  f=$dir/mem.$n
  if ((n == 1)); then run1 "$f" "$train" "${wireup_base[@]}" --max_steps 1
  else runN "$f" "$n" "$train" "${wireup_base[@]}" --max_steps 1; fi
  P=$(field "$f" '[config]' params) S=$(field "$f" '[config]' state_bytes_per_rank)
  ratio=$(calc %.4f "$S / (16 * $P / $n)")
  v=$(awk -v r="$ratio" 'BEGIN { print (r >= 0.9 && r <= 1.1) ? "PASS" : "FAIL" }')
  [[ $v == PASS ]] || mem_ok=0
  mem_rows+=("| $n | $P | $(field "$f" '[config]' params_per_rank) | $S | $(calc %.0f "16 * $P / $n") | $ratio | $(field "$f" '[summary]' peak_mem_mib) | $v |")
done

# --- other shapes, once each: efficiency and throughput ------------------------
mG=$(median "${g1[@]}")
declare -a extra_rows
if ((extra)); then
  gemm "$dir/gemmxb" 1 torch   # a fresh peak: the load may have changed since the repetitions
  gemm "$dir/gemmxo" 1 onednn
  best=$(faster "$dir/gemmxb" "$dir/gemmxo")
  xG=$(field "$best" '[gemm-combined]' best_gflops) xGc=$(field "$best.0" '[gemm]' cpu_gflops)
  shapes=(
    "batch 8|--batch 8|--train_batch_size 8"
    "seq 512, batch 2|--seq 512 --batch 2|--max_context_width 512 --train_batch_size 2"
    "hidden 768, 12 heads, 4 KV, intermediate 2048|--hidden 768 --heads 12 --kv_heads 4 --intermediate 2048|--hidden_width 768 --num_heads 12 --num_key_value_heads 4 --intermediate_size 2048"
  )
  k=0
  for c in "${shapes[@]}"; do
    IFS='|' read -r name ea wa <<<"$c"
    read -ra ea_arr <<<"$ea"; read -ra wa_arr <<<"$wa"
    run1 "$dir/xe.$k" "$py" "$here/llama_eager.py" --threads 1 --warmup 1 --steps 3 "${ea_arr[@]}"
    WIREUP_PEAK_FLOPS=$(calc %.0f "$xG * 1e9") run1 "$dir/xw.$k" "$py" "$here/stepcpu.py" "$train" "${wireup_base[@]}" --max_steps 4 "${wa_arr[@]}"
    et=$(field "$dir/xe.$k" '[eager]' best_tokens_per_s) ec=$(field "$dir/xe.$k" '[eager]' cpu_step_s)
    read -r _ wt _ wc < <(wireup_tps "$dir/xw.$k" 1)
    xf=$(fpt "$dir/xw.$k") xt=$(field "$dir/xw.$k" '[config]' global_batch_tokens)
    extra_rows+=("| $name | $(field "$dir/xw.$k" '[config]' params) | $xf | $et | $wt | $(calc %.3f "$wt / $et") | $(calc %.3f "$ec / $wc") | $(pct "$et * $xf / ($xG * 1e9)")% / $(pct "$xt * $xf / ($ec * $xGc * 1e9)")% | $(pct "$wt * $xf / ($xG * 1e9)")% / $(pct "$xt * $xf / ($wc * $xGc * 1e9)")% |")
    k=$((k + 1))
  done
fi

# --- figures -----------------------------------------------------------------
F=$(fpt "$dir/w1.0")
mG2=$(median "${g2[@]}") mGm=$(median "${g1m[@]}") mG2m=$(median "${g2m[@]}")
E1=$(median "${be1[@]}") W1=$(median "${bw1[@]}") D2=$(median "${bd2[@]}") W2=$(median "${bw2[@]}")
# The machine's scaling: two GEMM processes against one, each library against
# itself; the larger of the two (the stricter yardstick for wireup's scaling).
m_b=$(calc %.3f "$mG2 / $(median "${gb[@]}")") m_o=$(calc %.3f "$(median "${g2o[@]}") / $(median "${go[@]}")")
machine=$(awk -v a="$m_b" -v b="$m_o" 'BEGIN { print (a > b) ? a : b }')
machine_m=$(awk -v a="$(calc %.3f "$mG2m / $(median "${gbm[@]}")")" -v b="$(calc %.3f "$(median "${g2om[@]}") / $(median "${gom[@]}")")" \
  'BEGIN { print (a > b) ? a : b }')
r_eager=$(calc %.3f "$W1 / $E1") r_ddp=$(calc %.3f "$W2 / $D2")
r_eager_m=$(calc %.3f "$(median "${mw1[@]}") / $(median "${me1[@]}")") r_ddp_m=$(calc %.3f "$(median "${mw2[@]}") / $(median "${md2[@]}")")
r_cpu=$(calc %.3f "$(median "${ce1[@]}") / $(median "${cw1[@]}")") r_cpu2=$(calc %.3f "$(median "${cd2[@]}") / $(median "${cw2[@]}")")
mfu_w1=$(pct "$W1 * $F / ($mG * 1e9)") mfu_e1=$(pct "$E1 * $F / ($mG * 1e9)")
mGc=$(median "${g1c[@]}") tok1=$(field "$dir/w1.0" '[config]' global_batch_tokens)
cmfu_w1=$(pct "$tok1 * $F / ($(median "${cw1[@]}") * $mGc * 1e9)") cmfu_e1=$(pct "$tok1 * $F / ($(median "${ce1[@]}") * $mGc * 1e9)")
mfu_w2=$(pct "$W2 * $F / (2 * $mG * 1e9)") mfu_d2=$(pct "$D2 * $F / (2 * $mG * 1e9)")
mfu_w2p=$(pct "$W2 * $F / ($mG2 * 1e9)") mfu_d2p=$(pct "$D2 * $F / ($mG2 * 1e9)")
s_w=$(calc %.3f "$W2 / $W1") s_e=$(calc %.3f "$D2 / $E1")
sr_w=$(calc %.3f "$s_w / $machine") sr_e=$(calc %.3f "$s_e / $machine")
sr_w_m=$(calc %.3f "$(median "${mw2[@]}") / $(median "${mw1[@]}") / $machine_m")
load1=$(cut -d' ' -f1-3 /proc/loadavg) secs=$(($(date +%s) - t_begin)) cores=$(getconf _NPROCESSORS_ONLN)
busy=$(awk -v a="${load0%% *}" -v b="${load1%% *}" -v n="$cores" 'BEGIN { print (a > n || b > n) ? 1 : 0 }')
row() {  # LABEL BEST_ARRAY MEAN_ARRAY CPU_ARRAY
  local -n bs=$2 ms=$3 cs=$4
  echo "| $1 | $(median "${bs[@]}") | $(range "${bs[@]}") | ${bs[*]} | $(median "${ms[@]}") | $(median "${cs[@]}") |"
}
{
  echo "## trainer: wireup-train vs PyTorch eager (CPU, one thread per rank)"
  echo
  echo "Llama 'small' (hidden 512, 4 layers, 8 heads, 4 KV heads, intermediate 1376, vocab 8000, seq 256),"
  echo "$(field "$dir/w1.0" '[config]' params) parameters, 4 sequences per rank per step, fp32, AdamW, clipping at 1.0."
  echo "Peers: Debian python3-torch $("$py" -c 'import torch; print(torch.__version__)') eager (world 1) and DDP over Gloo (world 2)."
  echo "$reps interleaved repetitions of $warm warmup + $timed timed steps. Per run the fastest timed step"
  echo "counts (other load only slows steps down), like the GEMM peak's best 1 s; figures are medians over"
  echo "the repetitions. FLOPs/token = 6 x non-embedding params + 12 x layers x hidden x seq = $F."
  echo "BLAS: $(field "$dir/w1.0" '[config]' blas) (torch.mm, both peers); wireup-train's linear layers:"
  echo "$(field "$dir/w1.0" '[config]' gemm) (gemm= of its [config] line); its ranks at world 2:"
  echo "$(grep -o 'transport=[a-z]*' "$dir/w2.0" | head -n 1) (DDP: Gloo over loopback TCP). Load average before / after: $load0 / $load1 ($cores cores); ${secs} s."
  if ((busy)); then
    echo
    echo "**Warning: the load average exceeded the $cores cores: other work competed for them during this run."
    echo "Wall-clock figures, and the verdicts built on them, move by tens of percent between such runs;"
    echo "the CPU-time figures are the steadier guide (docs/bench-trainer.md).**"
  fi
  echo
  echo "| run | tokens/s (fastest step) | range | all reps | tokens/s (mean of steps) | CPU s/step, rank 0 |"
  echo "| --- | --- | --- | --- | --- | --- |"
  row "PyTorch eager, world 1" be1 me1 ce1
  row "wireup-train, world 1" bw1 mw1 cw1
  row "PyTorch DDP, world 2" bd2 md2 cd2
  row "wireup-train, world 2" bw2 mw2 cw2
  echo
  echo "| GEMM 2048 fp32, one thread per process | best 1 s, GFLOP/s | all reps | mean, GFLOP/s |"
  echo "| --- | --- | --- | --- |"
  echo "| one process, OpenBLAS (torch.mm) | $(median "${gb[@]}") | ${gb[*]} | |"
  echo "| one process, oneDNN (dnnl_sgemm) | $(median "${go[@]}") | ${go[*]} | |"
  echo "| one process, the faster of the two per rep (the peak) | $mG | ${g1[*]} | $mGm |"
  echo "| two OpenBLAS processes together | $mG2 | ${g2[*]} | $mG2m |"
  echo "| two oneDNN processes together | $(median "${g2o[@]}") | ${g2o[*]} | $(median "${g2om[@]}") |"
  echo
  echo "One process per CPU second (time waiting for a core not counted): $mGc GFLOP/s (${g1c[*]})."
  echo
  echo "- **Throughput** wireup / eager at world 1: **$r_eager** — $(verdict "$r_eager" ">=" 1.1);"
  echo "  wireup / DDP at world 2: **$r_ddp** — $(verdict "$r_ddp" ">=" 1.1)."
  echo "  Means of steps instead: $r_eager_m and $r_ddp_m. CPU time per step, eager / wireup: $r_cpu and $r_cpu2."
  echo "- **Efficiency** model FLOP/s / GEMM peak, wireup at world 1: **$mfu_w1%** — $(verdict "$mfu_w1" ">=" 60);"
  echo "  eager $mfu_e1%. By CPU time (model FLOPs per CPU second of a step / GEMM FLOPs per CPU second):"
  echo "  wireup $cmfu_w1%, eager $cmfu_e1%. World 2 against 2 x the peak: wireup $mfu_w2%, DDP $mfu_d2%; against the two-process"
  echo "  GEMM rate: wireup $mfu_w2p%, DDP $mfu_d2p%. wireup-train's own mfu column on its fastest step"
  echo "  (WIREUP_PEAK_FLOPS = that rep's peak): $(median "${fw1[@]}") at world 1, $(median "${fw2[@]}") at world 2."
  echo "- **Scaling** machine (two GEMM processes / one, the larger of OpenBLAS $m_b and oneDNN $m_o): $machine. wireup world 2 / world 1: $s_w;"
  echo "  divided by the machine's: **$sr_w** — $(verdict "$sr_w" ">=" 0.9). Means instead: $sr_w_m."
  echo "  DDP world 2 / eager world 1: $s_e, divided by the machine's: $sr_e."
  echo
  echo "**Memory**: per-rank bytes of fp32 parameters + gradients + AdamW m and v (state_bytes_per_rank of"
  echo "the [config] line) against 16 x params / N, within 10%: $( ((mem_ok)) && echo PASS || echo FAIL)."
  echo
  echo "| N | params | params per rank | state bytes per rank | 16 x params / N | ratio | peak RSS MiB, rank 0 | within 10% |"
  echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
  printf '%s\n' "${mem_rows[@]}"
  if ((extra)); then
    echo
    echo "Other shapes, one run each of 1 warmup + 3 timed steps, fastest step, one thread. MFU by wall"
    echo "clock against a fresh GEMM peak ($xG GFLOP/s) / by CPU time against its CPU-time rate ($xGc GFLOP/s):"
    echo
    echo "| shape (else as above) | params | FLOPs/token | eager tokens/s | wireup tokens/s | wireup / eager | CPU s/step eager / wireup | eager MFU wall / CPU | wireup MFU wall / CPU |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    printf '%s\n' "${extra_rows[@]}"
  fi
} >"$out"
# wireup-train generate against PyTorch eager decoding with a KV cache.
"$here/decode_bench.sh" "$build" "$dir/decode.md" "$reps" >/dev/null
{ echo; cat "$dir/decode.md"; } >>"$out"
# SFT: document masking against plain causal training on the same packed windows.
"$here/sft_bench.sh" "$build" "$dir/sft.md" "$reps" >/dev/null
{ echo; cat "$dir/sft.md"; } >>"$out"
# LoRA's peak memory against a full fine-tune, wireup and eager PyTorch (PEFT's layer).
"$here/lora_bench.sh" "$build" "$dir/lora.md" >/dev/null
{ echo; cat "$dir/lora.md"; } >>"$out"
cat "$out"
