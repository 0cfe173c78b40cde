#!/usr/bin/env bash
# torch.distributed over MPI (docs/distributed.md): tide and libtide do not link MPI; without
# mpirun, or without the MPI module, is_available() is false with the reason; under mpirun
# with 2 and 4 ranks every collective on every dtype matches NumPy's reductions
# (distributed/collectives.lua, references from distributed/make_refs.py); DDP and
# DistributedSampler on 2 ranks (distributed/ddp.lua); a rank that fails ends every rank
# with its message, and a rank stuck in Lua ends with the others' timeout. Ends with
# "N passed, M failed".
#   bash tests/lua/test_distributed.sh build/tide
set -uo pipefail
cd "$(dirname "$0")/../.."
tide=$(cd "$(dirname "${1:-build/tide}")" && pwd)/$(basename "${1:-build/tide}")
python=/usr/bin/python3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0 fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL $*"; }

# Neither the program nor the library links MPI: the module is loaded on first use.
libtide=$(ldd "$tide" | awk '/libtide\.so/ {print $3}')
# (grep reads all of ldd's output: with pipefail, grep -q ending first would fail the pipe)
if ldd "$tide" "$libtide" | grep 'libmpi' >/dev/null; then bad "tide or libtide links MPI"; else ok; fi

# Not started by mpirun: unavailable, and init_process_group says why.
out=$("$tide" -e '
  local dist = torch.distributed
  print(dist.is_available(), dist.unavailable_reason())
  print(select(2, pcall(dist.init_process_group, {backend = "mpi"})))
  assert(dist.unavailable_reason("mpi") == dist.unavailable_reason())' 2>&1)
want='false	this process was not started by mpirun (run `mpirun -n 2 tide script.lua`)
init_process_group: the mpi backend is not available: this process was not started by mpirun (run `mpirun -n 2 tide script.lua`)'
if [ "$out" = "$want" ]; then ok; else bad "without mpirun: got <$out>"; fi

if ! command -v mpirun >/dev/null; then
  echo "skipped the MPI runs: no mpirun (setup.sh installs openmpi-bin)"
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
# Under AddressSanitizer (tests/run_all.sh's second half), OpenMPI's memory patcher, which
# rewrites the allocation functions ASan intercepts, stays off (it serves RDMA networks only);
# The ranks run without LeakSanitizer: OpenMPI's components leak at exit from code that
# MPI_Finalize has already unloaded (frames "<unknown module>", which no suppression can
# name). Every other sanitizer check stays on in the ranks, and the leak check covers the
# same engine and bindings in the rest of the suite (test_multiprocessing.lua included).
if [ "${TIDE_SANITIZED:-0}" = 1 ]; then
  export OMPI_MCA_memory=^patcher
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
mpi() { timeout 120 mpirun --oversubscribe --bind-to none -n "$@"; }

# Started by mpirun, but the module cannot be found.
out=$(TIDE_MPI_MODULE=/nonexistent/libtide_mpi.so mpi 1 "$tide" -e '
  print(torch.distributed.is_available(), torch.distributed.unavailable_reason())' 2>&1)
want='false	tide was built without MPI (no /nonexistent/libtide_mpi.so)'
if [ "$out" = "$want" ]; then ok; else bad "without the module: got <$out>"; fi

# Each rank's output goes to a file of its own (mpirun --output-filename DIR writes
# DIR/1/rank.R/stdout and stderr), not interleaved with the others'.
rank_file() { echo "$1/1/rank.$2/$3"; }

# Runs SCRIPT on N ranks, each printing its own "N passed, M failed": run_tests N SCRIPT ARGS...
run_tests() {
  local n=$1 script=$2
  shift 2
  local out="$tmp/$(basename "$script" .lua)$n" r line f
  mpi "$n" --output-filename "$out" "$tide" "$script" "$@" >/dev/null 2>&1
  local rc=$?
  for ((r = 0; r < n; r++)); do
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$(rank_file "$out" $r stdout)" 2>/dev/null | tail -1)
    f=1
    if [ -z "$line" ]; then bad "$script on $n ranks: rank $r reported nothing"; else
      pass=$((pass + ${line%% *}))
      f=$(echo "$line" | awk '{print $3}')
      fail=$((fail + f))
    fi
    if [ "$f" -ne 0 ]; then echo "rank $r:"; head -c 4000 "$(rank_file "$out" $r stderr)"; fi
  done
  [ "$rc" -eq 0 ] || bad "$script on $n ranks: mpirun exit $rc"
}

# The collectives with 2 and 4 ranks, against NumPy.
for n in 2 4; do
  mkdir -p "$tmp/$n"
  if "$python" tests/lua/distributed/make_refs.py "$n" "$tmp/$n"; then
    run_tests "$n" tests/lua/distributed/collectives.lua "$tmp/$n"
  else
    bad "make_refs.py $n"
  fi
done
run_tests 2 tests/lua/distributed/ddp.lua

# A failing rank ends every rank with its message (waiting in a collective, or busy in Lua);
# a rank stuck computing makes the others' all_reduce time out, and their failure ends it.
for run in "2 wait" "4 wait" "2 busy" "2 hang"; do
  set -- $run
  n=$1 mode=$2
  out="$tmp/failure$n$mode"
  t0=$SECONDS
  mpi "$n" --output-filename "$out" "$tide" tests/lua/distributed/failure.lua "$mode" >/dev/null 2>&1
  rc=$?
  secs=$((SECONDS - t0))
  last=$((n - 1))
  message="rank $last gives up on purpose"
  [ "$mode" = hang ] && message="all_reduce: timed out after 3 s waiting for the other ranks"
  good=1
  [ "$rc" -ne 0 ] || good=0
  [ "$secs" -lt 20 ] || good=0
  for ((r = 0; r < n; r++)); do
    grep -q "was not stopped" "$(rank_file "$out" $r stdout)" && good=0
    grep -q "^[^ ]*tide: \[rank $r\] .*$message" "$(rank_file "$out" $r stderr)" || good=0
  done
  if [ "$good" -eq 1 ]; then ok; else
    bad "failure ($mode, $n ranks): exit $rc after $secs s:"
    cat "$out"/1/rank.*/stderr | head -30
  fi
done

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
