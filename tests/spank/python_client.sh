#!/usr/bin/env bash
# A real client: torch.distributed gloo with init_method="env://", wired only
# by the plugin: plain `srun -N2 -n4 --wireup python3 script.py`.
source "$(dirname "$0")/lib.sh"
plugstack default=off
client=$(dirname "$0")/../clients/allreduce.py

out=$(timeout 180 srun -N2 -n4 --wireup /usr/bin/python3 "$client")
echo "$out"
check "every rank reduced 1+2+3+4" "$(grep -c '^allreduce ok rank=[0-3] world=4 sum=10 ' <<<"$out")" 4
check "distinct ranks" "$(grep -o 'rank=[0-9]' <<<"$out" | sort -u | wc -l)" 4
nodes_idle
finish
