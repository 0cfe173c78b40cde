#!/usr/bin/env bash
# The conformance suite: every row of tests/conformance/ops.lua, checked against NumPy.
#   bash tests/conformance/run.sh path/to/tide
# runner.lua (in tide) writes inputs and outputs as .npz plus a manifest; check.py (NumPy
# only) computes the references and prints one line per failing case and "N passed, M failed".
# A crash of tide is reported against the row it happened in, and the run goes on from the
# next row. Environment: CONFORMANCE_ROWS=<Lua pattern> runs only matching rows;
# CONFORMANCE_KEEP=1 keeps the work directory; TIDE_SANITIZED=1 makes fewer cases.
set -uo pipefail
TIDE=${1:?usage: bash tests/conformance/run.sh path/to/tide}
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PYTHON:-}
if [ -z "$PY" ]; then
  for c in /usr/bin/python3 python3; do
    if "$c" -c 'import numpy' >/dev/null 2>&1; then PY=$c; break; fi
  done
fi
if [ -z "$PY" ]; then
  echo "conformance: no python3 with numpy found"
  echo "0 passed, 1 failed"
  exit 1
fi
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tide-conformance.XXXXXX")
if [ "${CONFORMANCE_KEEP:-0}" = 1 ]; then echo "work directory: $WORK"; else trap 'rm -rf "$WORK"' EXIT; fi
: >"$WORK/manifest.jsonl"
: >"$WORK/progress"

first=1
for attempt in $(seq 1 50); do
  "$TIDE" "$HERE/runner.lua" "$WORK" "$first" >>"$WORK/stdout.log" 2>>"$WORK/stderr.log"
  rc=$?
  if grep -qx done "$WORK/progress"; then
    [ "$rc" -ne 0 ] && echo "exit $rc" >>"$WORK/progress"
    break
  fi
  last=$(grep '^begin ' "$WORK/progress" | tail -n 1 | cut -d' ' -f2)
  if [ -z "$last" ] || grep -qxE "crash $last( .*)?" "$WORK/progress"; then
    echo "conformance: the runner failed before any row (exit $rc):"
    tail -n 20 "$WORK/stderr.log"
    echo "0 passed, 1 failed"
    exit 1
  fi
  echo "crash $last $rc" >>"$WORK/progress"
  first=$((last + 1))
done

"$PY" "$HERE/check.py" "$WORK" "$WORK/stderr.log"
