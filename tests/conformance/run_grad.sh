#!/usr/bin/env bash
# The gradient column of the conformance table: autograd against finite differences for
# every row of tests/conformance/ops.lua with a `grad` column (gradcheck.lua, in tide).
#   bash tests/conformance/run_grad.sh path/to/tide
# Prints one line per failing check and ends with "N passed, M failed". A crash of tide is
# charged to the row it happened in (one failure), and the run goes on from the next row.
# Environment: CONFORMANCE_ROWS=<Lua pattern> checks only matching rows; TIDE_SANITIZED=1
# checks fewer cases.
set -uo pipefail
TIDE=${1:?usage: bash tests/conformance/run_grad.sh path/to/tide}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tide-gradcheck.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
PROGRESS=$WORK/progress
: >"$PROGRESS"

crashes=0
first=1
while :; do
  "$TIDE" "$HERE/gradcheck.lua" "$WORK" "$first" 2>>"$WORK/stderr.log"
  rc=$?
  if grep -qx done "$PROGRESS"; then
    if [ "$rc" -ne 0 ]; then
      echo "FAIL gradcheck: tide exited with status $rc after checking every row; stderr:"
      tail -n 20 "$WORK/stderr.log"
      crashes=$((crashes + 1))
    fi
    break
  fi
  last=$(grep '^begin ' "$PROGRESS" | tail -n 1)
  index=$(echo "$last" | cut -d' ' -f2)
  if [ -z "$index" ] || [ "$index" -lt "$first" ]; then
    echo "FAIL gradcheck: tide failed before checking a row (exit status $rc); stderr:"
    tail -n 20 "$WORK/stderr.log"
    crashes=$((crashes + 1))
    break
  fi
  echo "FAIL $(echo "$last" | cut -d' ' -f3-): tide crashed (exit status $rc) while checking this row; stderr:"
  tail -n 8 "$WORK/stderr.log"
  crashes=$((crashes + 1))
  first=$((index + 1))
done

awk -v crashes="$crashes" '
  $1 == "end" { passed += $3; failed += $4 }
  END { failed += crashes; printf "%d passed, %d failed\n", passed, failed; exit failed > 0 }
' "$PROGRESS"
