#!/usr/bin/env bash
# Runs every test of tide and ends with one line "N passed, M failed" counting them all:
# the engine's doctest cases, every Lua test file, the program tests, the NumPy conformance
# table and the memory test -- first on the release build, then the same suite on a build
# with AddressSanitizer + UndefinedBehaviorSanitizer (skip that half with TIDE_NO_ASAN=1).
set -uo pipefail
cd "$(dirname "$0")/.."
total_pass=0
total_fail=0
failed_suites=()

# Runs one suite; its output must contain a "N passed, M failed" line or doctest's summary.
run_suite() {
  local name=$1; shift
  local log t0=$SECONDS
  log=$(mktemp)
  "$@" >"$log" 2>&1
  local rc=$? secs=$((SECONDS - t0))
  local p f
  if grep -q '^\[doctest\] test cases:' "$log"; then
    p=$(grep '^\[doctest\] test cases:' "$log" | tail -1 | sed -E 's/.*\| *([0-9]+) passed.*/\1/')
    f=$(grep '^\[doctest\] test cases:' "$log" | tail -1 | sed -E 's/.*\| *([0-9]+) failed.*/\1/')
  else
    local line
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
    p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
  fi
  if [ -z "${p:-}" ]; then p=0; f=1; fi
  if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi   # a crash or a non-zero exit counts
  total_pass=$((total_pass + p))
  total_fail=$((total_fail + f))
  if [ "$f" -ne 0 ]; then
    failed_suites+=("$name")
    echo "---- $name: $p passed, $f failed (exit $rc, ${secs} s); its output:"
    tail -n 60 "$log"
  else
    echo "$name: $p passed (${secs} s)"
  fi
  grep -h 'skipped:' "$log" || true
  rm -f "$log"
}

# With a third argument (the release half), the Lua tests, program tests, conformance table and
# gradient column record in that file every keyword and positional argument their calls gave
# (TIDE_ARG_COVERAGE; the fuzzers' calls do not count), for the argument coverage check after them.
run_all_suites() {
  local build=$1 tag=$2 coverage=${3:-}
  run_suite "$tag engine (doctest)" "$build/tests/engine_tests"
  if [ -n "$coverage" ]; then export TIDE_ARG_COVERAGE=$coverage; fi
  for t in tests/lua/test_*.lua; do
    run_suite "$tag $(basename "$t")" "$build/tide" "$t"
  done
  for t in tests/lua/test_*.sh; do
    run_suite "$tag $(basename "$t")" bash "$t" "$build/tide"
  done
  if [ -f tests/conformance/run.sh ]; then
    run_suite "$tag conformance" bash tests/conformance/run.sh "$build/tide"
    run_suite "$tag gradients" bash tests/conformance/run_grad.sh "$build/tide"
  fi
  unset TIDE_ARG_COVERAGE
  # The fuzzers' bounded slice (docs/fuzzing.md): the reproducers of past findings, then
  # fixed seeds -- the Lua API fuzzer through every target, the file-format fuzzer over the
  # regression corpus and tests/data. A death, sanitizer report, hang or runaway allocation
  # fails the suite.
  run_suite "$tag api fuzz: regressions" python3 tests/fuzz/run_api_fuzz.py "$build" --quiet \
    --replay tests/fuzz/regressions.lua
  run_suite "$tag api fuzz: seed 1" python3 tests/fuzz/run_api_fuzz.py "$build" --quiet --seed 1 \
    --calls "$api_fuzz_calls"
  run_suite "$tag file fuzz: seed 1" "$build/tests/tide_file_fuzz" all --seed 1 --runs "$file_fuzz_runs" \
    --crash-dir "${TMPDIR:-/tmp}" tests/fuzz/corpus tests/data
  # Every op on CUDA against the CPU (prints "skipped: no CUDA device" without a GPU).
  if [ "$tag" = release ]; then
    run_suite "$tag cuda conformance" "$build/tide" tests/conformance/devicecheck.lua
  fi
  # The engine's device paths (routing, index positions, gemm layouts, autograd/nn/optim on a
  # non-CPU device) on the host-memory stand-in backend, which needs no GPU.
  # Their calls count for the argument coverage too (the CUDA functions' device arguments).
  local fake="$PWD/$build/tests/libtide_fake_cuda.so"
  run_suite "$tag device paths: test_cuda.lua (stand-in backend)" \
    env TIDE_CUDA_MODULE="$fake" TIDE_FAKE_CUDA=1 ${coverage:+TIDE_ARG_COVERAGE="$coverage"} \
    "$build/tide" tests/lua/test_cuda.lua
  run_suite "$tag device paths: test_amp.lua, autocast \"cuda\" (stand-in backend)" \
    env TIDE_CUDA_MODULE="$fake" TIDE_FAKE_CUDA=1 "$build/tide" tests/lua/test_amp.lua
  run_suite "$tag device paths: test_optim_more.lua, the optimizers and LBFGS (stand-in backend)" \
    env TIDE_CUDA_MODULE="$fake" TIDE_FAKE_CUDA=1 "$build/tide" tests/lua/test_optim_more.lua
  run_suite "$tag device paths: test_nn_utils.lua, clip_grad_norm_ and pad_sequence (stand-in backend)" \
    env TIDE_CUDA_MODULE="$fake" TIDE_FAKE_CUDA=1 "$build/tide" tests/lua/test_nn_utils.lua
  run_suite "$tag device paths: test_compile.lua, torch.compile on a device (stand-in backend)" \
    env TIDE_CUDA_MODULE="$fake" TIDE_FAKE_CUDA=1 "$build/tide" tests/lua/test_compile.lua
  run_suite "$tag device paths: conformance (stand-in backend)" \
    env TIDE_CUDA_MODULE="$fake" TIDE_FAKE_CUDA=1 "$build/tide" tests/conformance/devicecheck.lua
  # The layout column: every conformance case again with its inputs as reversed views
  # (negative strides, NumPy's a[::-1]), against the results for contiguous inputs.
  run_suite "$tag layout column: conformance on reversed views" \
    "$build/tide" tests/conformance/devicecheck.lua reversed
  run_suite "$tag layout column on the device paths (stand-in backend)" \
    env TIDE_CUDA_MODULE="$fake" TIDE_FAKE_CUDA=1 "$build/tide" tests/conformance/devicecheck.lua cuda reversed
}

# The fuzzers' slice: every API fuzzer target twice, on each build.
api_fuzz_calls=6000 file_fuzz_runs=60000  # 2952 targets today
arg_coverage=$(mktemp)
run_all_suites build release "$arg_coverage"
# Every keyword and positional parameter each binding declares was given by some test above
# (tests/arg_coverage.lua).
run_suite "release argument coverage" build/tide tests/arg_coverage.lua "$arg_coverage"
rm -f "$arg_coverage"

if [ "${TIDE_NO_ASAN:-0}" != 1 ]; then
  if [ ! -f build-asan/build.ninja ]; then
    # Without the CUDA module: the release half already compiles it, and its tests need a GPU.
    # -O1 without -g: the sanitizers find the same faults, and the build takes ~40% less time
    # than -O2 -g (reports name functions, not lines; rebuild with -g to get lines).
    meson setup build-asan --buildtype=plain -Db_sanitize=address,undefined \
      "-Dcpp_args=-O1 -fno-sanitize-recover=all" -Db_lundef=false -Dcuda=disabled >/dev/null
  fi
  build_start=$SECONDS
  if ninja -C build-asan >/tmp/tide-asan-build.log 2>&1; then
    echo "asan build: $((SECONDS - build_start)) s"
    export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
    export LSAN_OPTIONS=suppressions=$PWD/tests/lsan.supp
    export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    export TIDE_SANITIZED=1
    file_fuzz_runs=30000
    run_all_suites build-asan asan
  else
    tail -n 40 /tmp/tide-asan-build.log
    total_fail=$((total_fail + 1))
    failed_suites+=("asan build")
  fi
fi

if [ ${#failed_suites[@]} -gt 0 ]; then
  echo "failed suites: ${failed_suites[*]}"
fi
echo "tests took $SECONDS s"
echo "$total_pass passed, $total_fail failed"
[ "$total_fail" -eq 0 ]
