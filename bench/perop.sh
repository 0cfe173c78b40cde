#!/bin/bash
# Instructions per op of workload 5's cases (bench/perop.lua) under callgrind: the total of
# a run with N iterations minus that of a run with none, divided by N.
# Usage: bench/perop.sh [tide binary] [N] [case...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
tide=${1:-build/tide}
n=${2:-2000}
shift $(($# < 2 ? $# : 2))
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(add_10_float32 add_10_float64 add_scalar_10 matmul_8x8 sum_10 tiny_autograd_step)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Total instructions of one run (callgrind's "Collected" line).
instructions() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/out" "$tide" "$here/perop.lua" "$1" "$2" \
    2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}

for c in "${cases[@]}"; do
  full=$(instructions "$c" "$n")
  empty=$(instructions "$c" 0)
  echo -e "$c\t$(((full - empty) / n))"
done
