#!/usr/bin/env bash
# Tests of the `tide` program's command line (it behaves like Lua 5.4's `lua`): arg, -e,
# -l, -i with piped input, -, -v, -E, LUA_INIT, exit codes, error messages with traceback,
# syntax errors, Ctrl-C, and the preloaded modules.
#
#   tests/lua/test_program.sh path/to/tide
#
# Prints "N passed, M failed" and exits non-zero when a check fails.
set -u

if [ $# -lt 1 ]; then
  echo "usage: $0 path/to/tide" >&2
  exit 2
fi
TIDE=$1
case $TIDE in /*) ;; *) TIDE=$PWD/$TIDE ;; esac
if [ ! -x "$TIDE" ]; then
  echo "$0: $TIDE is not an executable" >&2
  exit 2
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 2

passed=0
failed=0
INPUT=""     # when set (USE_INPUT=1), piped to the command's stdin; else stdin is /dev/null
USE_INPUT=0

# run CMD...: runs it with stdout in $TMP/out, stderr in $TMP/err, status in $rc.
run() {
  if [ "$USE_INPUT" = 1 ]; then
    printf '%s' "$INPUT" | "$@" >"$TMP/out" 2>"$TMP/err"
  else
    "$@" </dev/null >"$TMP/out" 2>"$TMP/err"
  fi
  rc=$?
}

fail() {
  failed=$((failed + 1))
  echo "FAIL - $1: $2"
  echo "  stdout: $(head -c 2000 "$TMP/out")"
  echo "  stderr: $(head -c 2000 "$TMP/err")"
}

# check NAME RC STDOUT-SUBSTRING STDERR-SUBSTRING CMD...: the status is RC and each output
# contains its substring (an empty substring means "anything"; "<empty>" means no output).
check() {
  local name=$1 want_rc=$2 want_out=$3 want_err=$4
  shift 4
  run "$@"
  if [ "$rc" != "$want_rc" ]; then fail "$name" "exit status $rc, expected $want_rc"; return; fi
  if ! matches "$TMP/out" "$want_out"; then fail "$name" "stdout lacks '$want_out'"; return; fi
  if ! matches "$TMP/err" "$want_err"; then fail "$name" "stderr lacks '$want_err'"; return; fi
  passed=$((passed + 1))
  echo "ok - $name"
}

matches() {
  if [ "$2" = "<empty>" ]; then [ ! -s "$1" ]; return; fi
  [ -z "$2" ] || grep -qF -- "$2" "$1"
}

# check_exact NAME RC EXPECTED-STDOUT CMD...: the whole stdout is EXPECTED-STDOUT (plus a
# final newline).
check_exact() {
  local name=$1 want_rc=$2 want_out=$3
  shift 3
  run "$@"
  if [ "$rc" != "$want_rc" ]; then fail "$name" "exit status $rc, expected $want_rc"; return; fi
  if [ "$(cat "$TMP/out")" != "$want_out" ]; then
    fail "$name" "stdout differs; expected: $want_out"
    return
  fi
  passed=$((passed + 1))
  echo "ok - $name"
}

TAB=$'\t'

# ---- -v ----------------------------------------------------------------------------
VERSION_RE='^tide 0\.1\.0 \(Lua 5\.4\.[0-9]+\)$'
# check_version NAME: the first line of the last run's stdout is the version line.
check_version() {
  if head -n 1 "$TMP/out" | grep -qE "$VERSION_RE"; then
    passed=$((passed + 1)); echo "ok - $1"
  else
    fail "$1" "first line is not 'tide 0.1.0 (Lua 5.4.x)'"
  fi
}
check "-v exits 0 quietly on stderr" 0 "" "<empty>" "$TIDE" -v
check_version "-v prints the version"
[ "$(wc -l <"$TMP/out")" = 1 ] && { passed=$((passed + 1)); echo "ok - -v prints one line"; } ||
  fail "-v prints one line" "more output"
check "-v -e runs the code after the version" 0 "7" "" "$TIDE" -v -e 'print(7)'
check_version "-v -e: the version comes first"

# ---- arg and ... -------------------------------------------------------------------
cat >args.lua <<'EOF'
local n = 0
for k in pairs(arg) do n = n + 1 end
print(arg[0], arg[1], arg[2], #arg, select("#", ...), ...)
print(arg[-1] == os.getenv("TIDE_UNDER_TEST"), arg[-2], arg[-3])
EOF
export TIDE_UNDER_TEST=$TIDE
check_exact "arg and ... for a script" 0 "args.lua${TAB}a${TAB}b c${TAB}2${TAB}2${TAB}a${TAB}b c
true${TAB}nil${TAB}nil" "$TIDE" args.lua a "b c"
check_exact "arg: no arguments" 0 "args.lua${TAB}nil${TAB}nil${TAB}0${TAB}0
true${TAB}nil${TAB}nil" "$TIDE" args.lua
check_exact "arg: options get negative indices" 0 \
  "args.lua${TAB}x${TAB}nil${TAB}1${TAB}1${TAB}x
false${TAB}-e${TAB}$TIDE" "$TIDE" -e 'y=1' args.lua x
check_exact "arg: -- ends the options" 0 "args.lua${TAB}-v${TAB}nil${TAB}1${TAB}1${TAB}-v
false${TAB}$TIDE${TAB}nil" "$TIDE" -- args.lua -v
check_exact "arg: options after the script go to the script" 0 \
  "args.lua${TAB}-e${TAB}print(1)${TAB}2${TAB}2${TAB}-e${TAB}print(1)
true${TAB}nil${TAB}nil" "$TIDE" args.lua -e 'print(1)'
check_exact "arg without a script: arg[0] is the program" 0 "true${TAB}-e${TAB}nil" \
  "$TIDE" -e 'print(arg[0] == os.getenv("TIDE_UNDER_TEST"), arg[1], arg[-1])'

# ---- -e ----------------------------------------------------------------------------
check_exact "-e runs in order" 0 "2" "$TIDE" -e 'a = 1' -e 'print(a + 1)'
check_exact "-e with the code attached" 0 "5" "$TIDE" '-eprint(5)'
cat >args2.lua <<'EOF'
print("hello " .. G)
EOF
check_exact "-e runs before the script" 0 "hello 3" "$TIDE" -e 'G = 3' args2.lua
check "-e needs an argument" 1 "" "'-e' needs argument" "$TIDE" -e
check "unknown option" 1 "" "unrecognized option '-x'" "$TIDE" -x
check "usage after a bad option" 1 "" "usage: " "$TIDE" -x

# ---- -l ----------------------------------------------------------------------------
mkdir -p lib
cat >lib/mymod.lua <<'EOF'
return {value = 42, name = ...}
EOF
check_exact "-l mod sets the global mod" 0 "42${TAB}mymod" \
  env LUA_PATH="$TMP/lib/?.lua" "$TIDE" -l mymod -e 'print(mymod.value, mymod.name)'
check_exact "-l g=mod sets the global g" 0 "42${TAB}nil" \
  env LUA_PATH="$TMP/lib/?.lua" "$TIDE" -l m=mymod -e 'print(m.value, mymod)'
check_exact "-l with the name attached" 0 "42" \
  env LUA_PATH="$TMP/lib/?.lua" "$TIDE" -lmymod -e 'print(mymod.value)'
check_exact "-l a standard module" 0 "abab" "$TIDE" -l s=string -e 'print(s.rep("ab", 2))'
check "-l a missing module fails" 1 "" "module 'no_such_module' not found" \
  "$TIDE" -l no_such_module
check "-E ignores LUA_PATH" 1 "" "module 'mymod' not found" \
  env LUA_PATH="$TMP/lib/?.lua" "$TIDE" -E -l mymod
check_exact "-l torch and require give the preloaded module" 0 "true${TAB}true" \
  "$TIDE" -l t=torch -e 'print(t == require("torch"), t == torch)'

# ---- preloaded globals -------------------------------------------------------------
check_exact "torch and np are globals" 0 "table${TAB}table${TAB}true${TAB}true" \
  "$TIDE" -e 'print(type(torch), type(np), require("torch") == torch, require("numpy") == np)'

# ---- LUA_INIT ----------------------------------------------------------------------
check_exact "LUA_INIT runs first" 0 "5" env LUA_INIT='X_INIT = 5' "$TIDE" -e 'print(X_INIT)'
echo 'X_INIT = "file"' >init.lua
check_exact "LUA_INIT=@file runs the file" 0 "file" \
  env LUA_INIT="@$TMP/init.lua" "$TIDE" -e 'print(X_INIT)'
check_exact "LUA_INIT_5_4 wins over LUA_INIT" 0 "54" \
  env LUA_INIT='X_INIT = 1' LUA_INIT_5_4='X_INIT = 54' "$TIDE" -e 'print(X_INIT)'
check_exact "-E ignores LUA_INIT" 0 "nil" env LUA_INIT='X_INIT = 5' "$TIDE" -E -e 'print(X_INIT)'

# ---- stdin ---------------------------------------------------------------------------
USE_INPUT=1
INPUT='print("from stdin", ...)
print(arg[0])
'
check_exact "- runs stdin with the arguments" 0 "from stdin${TAB}a${TAB}b
-" "$TIDE" - a b
INPUT='print("piped", ...)'
check_exact "no arguments and piped stdin runs stdin" 0 "piped" "$TIDE"
check_exact "-- alone runs stdin" 0 "piped" "$TIDE" --
INPUT='error("from stdin")'
check "an error in stdin" 1 "" "stdin:1: from stdin" "$TIDE" -

# ---- -i with piped input -------------------------------------------------------------
INPUT='x = 2
x * 3
1, "two", nil
for i = 1, 2 do
  print("loop", i)
end
error("oops")
print("after the error")
=x + 1
local t = {1,
 2}
print(#{...})
'
check "-i: runs the piped chunks" 0 "after the error" "oops" "$TIDE" -i
check_version "-i prints the version first"
sed -i 1d "$TMP/out"
if [ "$(cat "$TMP/out")" = "6
1${TAB}two${TAB}nil
loop${TAB}1
loop${TAB}2
after the error
3
0" ]; then
  passed=$((passed + 1)); echo "ok - -i: expressions print, statements are silent, errors continue"
else
  fail "-i: expressions print, statements are silent, errors continue" "unexpected output"
fi
check "-i: the error message has a traceback and no program name" 0 "" "stdin:1: oops" "$TIDE" -i
if grep -q "^$TIDE:" "$TMP/err" || ! grep -q "stack traceback:" "$TMP/err"; then
  fail "-i: error format" "expected 'stdin:1: oops' + traceback"
else
  passed=$((passed + 1)); echo "ok - -i: error format"
fi
if grep -qF "> " "$TMP/out"; then
  fail "-i: no prompts when stdin is not a terminal" "found a prompt"
else
  passed=$((passed + 1)); echo "ok - -i: no prompts when stdin is not a terminal"
fi
INPUT='print(S, ...)
'
echo 'S = "script ran"' >setS.lua
check "-i runs the script first, then the REPL" 0 "script ran" "" "$TIDE" -i setS.lua
INPUT='local t = {
'
check "-i: unfinished chunk at end of input" 0 "" "<eof>" "$TIDE" -i
INPUT='os.exit(4)
'
check "-i: os.exit ends the REPL" 4 "" "" "$TIDE" -i
INPUT='print(1)
'
check "-i: a failing script skips the REPL" 1 "" "script failed" \
  "$TIDE" -i -e 'error("script failed")'
USE_INPUT=0

# ---- errors --------------------------------------------------------------------------
check "error: message and traceback, status 1" 1 "<empty>" "(command line):1: boom" \
  "$TIDE" -e 'error("boom")'
check "error: traceback" 1 "" "stack traceback:" "$TIDE" -e 'error("boom")'
check "error: message prefixed with the program name" 1 "" "$TIDE: (command line):1: boom" \
  "$TIDE" -e 'error("boom")'
cat >fails.lua <<'EOF'
local function inner() error("deep error") end
local function outer() inner() end
outer()
EOF
check "error in a script names file and line" 1 "" "fails.lua:1: deep error" "$TIDE" fails.lua
check "traceback lists the callers" 1 "" "fails.lua:2: in " "$TIDE" fails.lua
check "error with a table value" 1 "" "(error object is a table value)" "$TIDE" -e 'error({})'
check "error with __tostring" 1 "" "custom message" \
  "$TIDE" -e 'error(setmetatable({}, {__tostring = function() return "custom message" end}))'
check "runtime error" 1 "" "attempt to perform arithmetic on a nil value" \
  "$TIDE" -e 'local x; print(x + 1)'
check "tensor error is a Lua error with a traceback" 1 "" "stack traceback:" \
  "$TIDE" -e 'torch.zeros(2, 3):mm(torch.zeros(2, 3))'
check "a tensor error names the op" 1 "" "mm" \
  "$TIDE" -e 'torch.zeros(2, 3):mm(torch.zeros(2, 3))'
check "pcall catches errors" 0 "false" "<empty>" "$TIDE" -e 'print(pcall(error, "x"))'
check "output before an error is kept" 1 "before" "boom" "$TIDE" -e 'print("before") error("boom")'

# ---- syntax errors and missing files ---------------------------------------------------
printf 'local x = = 1\n' >bad.lua
check "syntax error in a script" 1 "<empty>" "bad.lua:1: unexpected symbol near '='" "$TIDE" bad.lua
check "syntax error in -e" 1 "" "(command line):1: unexpected symbol near '='" "$TIDE" -e 'x = = 1'
check "missing script" 1 "" "cannot open no_such_file.lua" "$TIDE" no_such_file.lua
printf '#!/usr/bin/env tide\nprint("shebang ok")\n' >shebang.lua
check_exact "a #! first line is skipped" 0 "shebang ok" "$TIDE" shebang.lua

# ---- os.exit ---------------------------------------------------------------------------
check "os.exit(3)" 3 "" "" "$TIDE" -e 'os.exit(3)'
check "os.exit(true)" 0 "" "" "$TIDE" -e 'os.exit(true)'
check "os.exit(false)" 1 "" "" "$TIDE" -e 'os.exit(false)'
check "os.exit(0, true) closes the state" 0 "" "" "$TIDE" -e 'x = torch.ones(3); os.exit(0, true)'
check "os.exit flushes output" 5 "flushed" "" "$TIDE" -e 'io.write("flushed"); os.exit(5)'
echo 'os.exit(7)' >exit7.lua
check "os.exit in a script" 7 "" "" "$TIDE" exit7.lua
check "normal end: status 0" 0 "" "<empty>" "$TIDE" -e 'local x = 1'

# ---- Ctrl-C ----------------------------------------------------------------------------
echo 'io.stdout:write("ready\n"); io.stdout:flush(); while true do end' >loop.lua
"$TIDE" loop.lua >"$TMP/out" 2>"$TMP/err" &
pid=$!
for _ in $(seq 100); do grep -q ready "$TMP/out" && break; sleep 0.05; done
kill -INT "$pid" 2>/dev/null
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
if kill -0 "$pid" 2>/dev/null; then
  kill -KILL "$pid"
  wait "$pid" 2>/dev/null
  fail "SIGINT interrupts a running script" "still running 5 s after SIGINT"
else
  wait "$pid"
  rc=$?
  if [ "$rc" = 1 ] && grep -qF "interrupted!" "$TMP/err" && grep -qF "stack traceback:" "$TMP/err"; then
    passed=$((passed + 1)); echo "ok - SIGINT interrupts a running script"
  else
    fail "SIGINT interrupts a running script" "status $rc"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
