#!/usr/bin/env bash
# Embedding tests (issue 7): installs the build that holds the given tide program into a
# temporary destdir (meson install), builds tests/embed/test_embed.cpp and the example host
# against the INSTALLED headers and library through pkg-config, runs them, checks that the C
# header compiles as C, that a stock lua5.4 loads the installed torch and numpy modules, and
# (when /usr/bin/python3 has torch) that DLPack tensors cross to PyTorch and back.
# Ends with "N passed, M failed" (the doctest cases plus the checks of this script).
#   bash tests/lua/test_embed.sh build/tide
set -uo pipefail
cd "$(dirname "$0")/../.."
build=$(dirname "${1:-build/tide}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0

# check NAME COMMAND...: runs the command, its output in the log; counts it.
check() {
  local name=$1
  shift
  if "$@" >"$tmp/check.log" 2>&1; then
    pass=$((pass + 1))
    echo "ok: $name"
  else
    fail=$((fail + 1))
    echo "FAILED: $name"
    tail -n 30 "$tmp/check.log"
  fi
}

finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" -eq 0 ]
  exit
}

check "meson install --destdir" meson install -C "$build" --no-rebuild --destdir "$tmp/root"
pc=$(find "$tmp/root" -name tide.pc | head -1)
lib=$(find "$tmp/root" -name libtide.so | head -1)
cmod=$(find "$tmp/root" -name torch.so | head -1)
if [ -z "$pc" ] || [ -z "$lib" ] || [ -z "$cmod" ]; then
  echo "FAILED: the install lacks tide.pc, libtide.so or torch.so"
  fail=$((fail + 1))
  finish
fi
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$tmp/root
flags=(-std=c++20 -O1 -g -pthread)
preload=()
# (grep reads all of ldd's output: with pipefail, grep -q ending first would fail the pipe)
if ldd "$lib" | grep libasan >/dev/null; then  # a sanitized build: the host programs must be too
  flags+=(-fsanitize=address,undefined)
  preload=(env "LD_PRELOAD=$(g++ -print-file-name=libasan.so) $(g++ -print-file-name=libubsan.so)"
           ASAN_OPTIONS=detect_leaks=0)
fi
link=($(pkg-config --cflags --libs tide) -Wl,-rpath,"$(dirname "$lib")")

check "headers installed: tide.hpp, tide.h, interpreter, tensor" \
  test -n "$(find "$tmp/root" -path '*/include/tide/tensor/tensor.hpp')" -a \
       -n "$(find "$tmp/root" -path '*/include/tide/interpreter/interpreter.hpp')" -a \
       -n "$(find "$tmp/root" -path '*/include/tide/tide.h')"
check "tide.h compiles as C" \
  bash -c "echo '#include <tide/tide.h>' | gcc -std=c11 -Wall -Werror -fsyntax-only $(pkg-config --cflags tide) -x c -"
check "test_embed builds against the installed headers" \
  g++ "${flags[@]}" tests/embed/test_embed.cpp "${link[@]}" -o "$tmp/test_embed"
if [ -x "$tmp/test_embed" ]; then
  "$tmp/test_embed" >"$tmp/doctest.log" 2>&1
  rc=$?
  sed 's/^\[doctest\]/doctest:/' "$tmp/doctest.log" | tail -n 40
  summary=$(grep '^\[doctest\] test cases:' "$tmp/doctest.log" | tail -1)
  if [ -n "$summary" ]; then
    pass=$((pass + $(echo "$summary" | sed -E 's/.*\| *([0-9]+) passed.*/\1/')))
    fail=$((fail + $(echo "$summary" | sed -E 's/.*\| *([0-9]+) failed.*/\1/')))
  fi
  if [ "$rc" -ne 0 ] && ! grep -q '[1-9][0-9]* failed' <<<"$summary"; then fail=$((fail + 1)); fi
fi

check "the example host builds against the installed headers" \
  g++ "${flags[@]}" examples/embed/host.cpp "${link[@]}" -o "$tmp/embed_host"
check "the example trains and reads the weights back" \
  bash -c "'$tmp/embed_host' examples/embed/train.lua 200 | grep -q 'weight = \[3.00., -2.00.\], bias = 0.50.'"

if [ ${#preload[@]} -gt 0 ]; then  # PyTorch's own allocations trip the sanitizers' interceptors
  echo "skipped: DLPack with PyTorch (a sanitized build)"
elif /usr/bin/python3 -c 'import torch' >/dev/null 2>&1; then
  check "DLPack both ways with PyTorch through the C API (ctypes)" \
    /usr/bin/python3 tests/embed/dlpack_torch.py "$lib"
else
  echo "skipped: DLPack with PyTorch (no torch for /usr/bin/python3)"
fi

lua_check='
  local torch = require "torch"
  local np = require "numpy"
  local nn = require "torch.nn"
  assert(torch.tensor{{1, 2}, {3, 4}}:sum():item() == 10)
  assert(np.ones(3):sum():item() == 3.0)
  assert(np.ones(2).dtype == "float64" and torch.ones(2).dtype == "float32")
  assert(torch.nn == nn and nn.Linear(2, 3).weight.shape[1] == 3)
  local ok, err = pcall(torch.mm, torch.ones(2, 3), torch.ones(2, 3))
  assert(not ok and err:find("mm: shapes {2,3} and {2,3} cannot be multiplied", 1, true))
  print("stock lua ok")'
check "a stock lua5.4 requires the installed torch and numpy modules" \
  "${preload[@]}" env LUA_CPATH="$(dirname "$cmod")/?.so" lua5.4 -e "$lua_check"
finish
