#!/usr/bin/env bash
# Tests of the interactive REPL, driven as a person would drive it in a real terminal: a
# pseudo-terminal made by Python's standard `pty` module runs `tide`, the test types keys
# and reads the screen. Covers results (several values, tensors, modules, long tensors),
# statements, `local`, continuation lines, errors, Tab completion, help, history across
# sessions (and its cap), Ctrl-C in a Lua loop, in a long native op and at the prompt,
# Ctrl-D, `tide -i script`, and piped input (no prompts, no escape codes).
#
#   tests/lua/test_repl.sh path/to/tide
#
# Every wait has a timeout. Prints "N passed, M failed" and exits non-zero on a failure.
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
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
if [ -z "$PY" ]; then
  echo "FAIL - python3 is needed to drive a pseudo-terminal"
  echo "0 passed, 1 failed"
  exit 1
fi

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
cd "$TMP" || exit 2

timeout 600 "$PY" - "$TIDE" "$TMP" <<'PYTHON'
import os, pty, re, select, signal, struct, subprocess, sys, time, fcntl, termios

TIDE, TMP = sys.argv[1], sys.argv[2]
passed = failed = 0
WAIT = 15  # seconds any one expectation may take


class Timeout(Exception):
    pass


def clean(raw):
    """The screen text without escape sequences, carriage returns and backspaced chars."""
    s = raw.decode("utf-8", "replace")
    s = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", s)
    s = re.sub(r"\x1b[=>()][0-9A-Za-z]?", "", s)
    s = s.replace("\r", "")
    before = None
    while before != s:
        before, s = s, re.sub(r"[^\x08\n]\x08", "", s)
    return s.replace("\x08", "")


def history_lines(path):
    """The entries of a history file (libedit writes them vis-encoded: a space is \\040)."""
    text = open(path).read()
    return [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), l) for l in text.split("\n")[1:] if l]


class Session:
    """tide on a pseudo-terminal of 24 x 100 characters."""

    def __init__(self, args=(), history=None):
        env = dict(os.environ, TERM="xterm", HOME=TMP, TIDE_HISTORY=history or os.path.join(TMP, "history"))
        env.pop("TIDE_PROGRESS", None)
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(TMP)
            os.execve(TIDE, [TIDE, *args], env)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
        self.raw = b""
        self.seen = 0
        self.status = None

    def _read(self, seconds):
        r, _, _ = select.select([self.fd], [], [], seconds)
        if not r:
            return False
        try:
            data = os.read(self.fd, 65536)
        except OSError:
            return None
        if not data:
            return None
        self.raw += data
        return True

    def expect(self, pattern, timeout=WAIT):
        """Waits until the screen shows `pattern` (a regex; ^ is where the last expect
        ended) after what earlier expects matched; returns the match."""
        end = time.time() + timeout
        rx = re.compile(pattern, re.S)
        while True:
            m = rx.search(clean(self.raw)[self.seen:])
            if m:
                self.seen += m.end()
                return m
            left = end - time.time()
            ended = left > 0 and self._read(min(left, 0.1)) is None
            if left <= 0 or ended:
                m = rx.search(clean(self.raw)[self.seen:])
                if m:
                    self.seen += m.end()
                    return m
                why = "the program ended" if ended else "timed out after %g s" % timeout
                raise Timeout("%s waiting for %r; the screen shows:\n%s" % (why, pattern, clean(self.raw)[self.seen:][-1500:]))

    def wait_raw(self, timeout):
        """Waits until the terminal has left line mode (libedit reading keys at a prompt); the
        master side of a pty reports the terminal's modes."""
        end = time.time() + timeout
        while termios.tcgetattr(self.fd)[3] & termios.ICANON and time.time() < end:
            while self._read(0):
                pass
            time.sleep(0.01)

    def send(self, keys, at_prompt=True):
        """Types keys, reading the screen meanwhile so that neither side blocks. At a prompt
        it first waits for libedit to put the terminal in raw mode (it shows the prompt just
        before, and a key typed in between would be read in line mode), which a loaded machine
        can delay well beyond the short pause every key gets."""
        time.sleep(0.05)
        if at_prompt:
            self.wait_raw(5)
        data = keys.encode()
        while data:
            _, w, _ = select.select([], [self.fd], [], 0.1)
            if w:
                n = os.write(self.fd, data[:256])
                data = data[n:]
            while self._read(0):
                pass

    def line(self, text, pattern=r"\n> $|\n> "):
        """Types a line and Enter, then waits for `pattern` (by default the next prompt)."""
        self.send(text + "\r")
        return self.expect(pattern)

    def exited(self, timeout):
        end = time.time() + timeout
        while True:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.status = os.waitstatus_to_exitcode(status)
                return True
            if time.time() >= end:
                return False
            try:
                self._read(0.05)
            except OSError:
                time.sleep(0.05)

    def close(self):
        if self.status is None and not self.exited(0):
            os.kill(self.pid, signal.SIGKILL)
            self.exited(5)
        os.close(self.fd)


def check(name, fn):
    global passed, failed
    try:
        fn()
        passed += 1
        print("ok - " + name)
    except Exception as e:  # a failed expectation or assertion
        failed += 1
        print("FAIL - %s: %s" % (name, e))
    sys.stdout.flush()


def fresh_session(*args, **kw):
    s = Session(args, **kw)
    s.expect(r"tide \d+\.\d+\.\d+ \(Lua 5\.4[^)]*\)\n> ")
    return s


# ---- one session: results, statements, errors, completion, help, Ctrl-C -----------------

s = fresh_session()

check("an expression prints its value (a tensor in its pretty form)", lambda: (
    s.line("x = torch.arange(6):reshape(2, 3)", r"reshape\(2, 3\)\n> "),
    s.line("x", r"^x\ntensor\(\[\[0, 1, 2\],\n\s+\[3, 4, 5\]\]\)\n> ")))

check("several results print on one line, tab-separated; tables as {...}", lambda:
      s.line('1 + 1, "two", {3, 4, k = "v"}, nil', r'\n2\ttwo\t\{3, 4, k = "v"\}\tnil\n> '))

check("a long tensor is summarised", lambda:
      s.line("torch.arange(5000)", r"tensor\(\[\s*0,\s+1,\s+2,\s+\.\.\.,\s+4997,\s+4998,\s+4999\]\)\n> "))

check("a module prints in its pretty form", lambda:
      s.line("nn.Sequential(nn.Linear(4, 2), nn.ReLU())",
             r"Sequential\(\n  \(0\): Linear\(in_features=4, out_features=2, bias=true\)\n  \(1\): ReLU\(\)\n\)\n> "))

check("a statement runs silently", lambda: (
    s.line("y = 7", r"y = 7\n> "),
    s.line("y * 6", r"\n42\n> ")))

check("a local is explained, not silently lost", lambda:
      s.line("local z = 1", r"note: each input is its own chunk, so local z ended with it; drop 'local' to keep it \(z = \.\.\.\)\n> "))

check("an unfinished statement continues with the >> prompt", lambda: (
    s.line("for i = 1, 3 do", r"for i = 1, 3 do\n>> "),
    s.line('io.write(i, ";")', r'io\.write\(i, ";"\)\n>> '),
    s.line("end", r"end\n1;2;3;> ")))

check("an error prints its message and a short traceback, and the session goes on", lambda: (
    s.line('error("boom")', r"stdin:1: boom\nstack traceback:\n\t\[C\]: in function 'error'\n\tstdin:1: in main chunk\n> "),
    s.line("torch.mm(torch.ones(2, 3), torch.ones(2, 3))",
           r"\nmm: shapes \{2,3\} and \{2,3\} cannot be multiplied[^\n]*\nstack traceback:\n(\t[^\n]*\n)+> "),
    s.line("y", r"\n7\n> ")))

check("a syntax error is reported at once", lambda:
      s.line("y = = 2", r"stdin:1: unexpected symbol near '='\n> "))


def complete(typed, shown):
    """Types `typed` and Tab, expects `shown`, then drops the line with Ctrl-C."""
    s.send(typed + "\t")
    try:
        s.expect(shown)
    finally:
        s.send("\x03")
        s.expect(r"\^C\n> ")


check("Tab lists tensor methods: x:su offers sub sum", lambda:
      complete("x:su", r"x:su\n(sub\s+sub_\s+sum|sub\s+sum)\b[^\n]*\n> x:su"))
check("Tab lists module functions: torch.ra offers rand randn ...", lambda:
      complete("torch.ra", r"torch\.ra\n[^>]*\brand\b[^>]*\brandint\b[^>]*\brandn\b[^>]*\brandperm\b[^>]*\n> torch\.ra"))
check("Tab completes a unique name in place", lambda:
      complete("torch.rand_l", r"^torch\.rand_like"))
check("Tab completes globals", lambda: complete("torc", r"^torch"))
check("Tab completes tensor properties after a dot", lambda: complete("x.shap", r"^x\.shape"))
check("Tab completes a module's parameters and methods", lambda: (
    s.line("lin = nn.Linear(2, 3)", r"\n> "),
    complete("lin.wei", r"^lin\.weight"),
    complete("lin:zero_g", r"^lin:zero_grad")))
check("Tab completes nested fields", lambda: complete("nn.functional.cross_en", r"^nn\.functional\.cross_entropy"))

check("help(f) prints the signature and doc from the registration", lambda:
      s.line("help(torch.mm)", r"\nmm\(a, b[^\n]*\) -> Tensor\n    matrix product[^\n]*\n> "))
check("?f is help(f), also for Lua-written classes", lambda:
      s.line("?nn.Linear", r"\nnn\.Linear\(in_features, out_features[^\n]*\n    y = x W\^T \+ b"))
check("help of an undocumented value says so", lambda:
      s.line("help(function() end)", r"help: no documentation for this function value \(defined at stdin:1\)\n> "))

check("Ctrl-C interrupts a Lua loop and keeps the session", lambda: (
    s.send("while true do end\r"),
    s.expect(r"while true do end\n"),
    time.sleep(0.5),
    s.send("\x03", at_prompt=False),
    s.expect(r"interrupted!\nstack traceback:\n\tstdin:1: in main chunk\n> "),
    s.line("y", r"\n7\n> ")))


def native_interrupt():
    # A batch of 2000 products of 64 x 200000 by 200000 x 64 (broadcast, ~100 MB): minutes
    # of work in one call; Ctrl-C must stop it between matrices within seconds.
    s.line("a = torch.randn(1, 64, 200000):expand(2000, 64, 200000); "
           "b = torch.randn(1, 200000, 64):expand(2000, 200000, 64)", r"\n> ")
    s.send("c = a:matmul(b)\r")
    s.expect(r"c = a:matmul\(b\)\n")
    time.sleep(1.0)
    start = time.time()
    s.send("\x03", at_prompt=False)
    s.expect(r"interrupted\nstack traceback:\n\t\[C\]: in method 'matmul'\n\tstdin:1: in main chunk\n> ", 10)
    assert time.time() - start < 10, "took %.1f s" % (time.time() - start)
    s.line("c, y", r"\nnil\t7\n> ")


check("Ctrl-C interrupts a long native op and keeps the session", native_interrupt)

check("Ctrl-C at the prompt drops the line, and an unfinished chunk", lambda: (
    s.send("y = 1000"), s.expect(r"^y = 1000"), s.send("\x03"), s.expect(r"\^C\n> "),
    s.line("if true then", r"\n>> "), s.send("y = 2000"), s.send("\x03"), s.expect(r"\^C\n> "),
    s.line("y", r"\n7\n> ")))


def ctrl_d_exits():
    s.send("\x04")
    assert s.exited(WAIT), "still running after Ctrl-D"
    assert s.status == 0, "exit status %s" % s.status


check("Ctrl-D exits with status 0", ctrl_d_exits)
s.close()

# ---- history ----------------------------------------------------------------------------

hist = os.path.join(TMP, "hist_a")


def history_across_sessions():
    a = fresh_session(history=hist)
    a.line("hist_value = 40 + 2", r"\n> ")
    a.send("\x04")
    assert a.exited(WAIT), "first session did not exit"
    a.close()
    assert history_lines(hist)[-1] == "hist_value = 40 + 2", history_lines(hist)[-3:]
    b = fresh_session(history=hist)
    b.send("\x1b[A")  # Up: the previous session's line
    b.expect(r"> hist_value = 40 \+ 2")
    b.send("\r")
    b.expect(r"\n> ")
    b.line("hist_value", r"\n42\n> ")
    b.close()


check("history is kept across sessions (Up recalls the last session's line)", history_across_sessions)


def history_capped():
    capped = os.path.join(TMP, "hist_big")
    with open(capped, "w") as f:  # 1100 entries, in libedit's format
        f.write("_HiStOrY_V2_\n" + "".join("v%d\\040=\\040%d\n" % (i, i) for i in range(1100)))
    c = fresh_session(history=capped)
    c.line("capped = 1", r"\n> ")
    c.send("\x04")
    assert c.exited(WAIT), "did not exit"
    c.close()
    lines = history_lines(capped)
    assert len(lines) == 1000, "%d lines kept" % len(lines)
    assert lines[0] == "v101 = 101" and lines[-1] == "capped = 1", (lines[0], lines[-1])


check("the history file keeps the last 1000 lines", history_capped)

# ---- tide -i script ---------------------------------------------------------------------


def dash_i():
    with open(os.path.join(TMP, "setup.lua"), "w") as f:
        f.write("from_script = torch.ones(2) * 3\nlocal hidden = 1\n")
    d = fresh_session("-i", "setup.lua")
    d.line("from_script, hidden", r"\ntensor\(\[3\., 3\.\]\)\tnil\n> ")
    d.send("\x04")
    assert d.exited(WAIT)
    d.close()


check("tide -i script.lua opens the REPL with the script's globals", dash_i)

# ---- piped input ------------------------------------------------------------------------


def piped():
    code = 'x = 2\nx * 3\nfor i = 1, 2 do\nprint(i)\nend\nerror("e")\nx, "s"\n?torch.mm\n'
    r = subprocess.run([TIDE, "-i"], input=code.encode(), capture_output=True, timeout=WAIT,
                       env=dict(os.environ, HOME=TMP, TIDE_HISTORY=os.path.join(TMP, "piped_history")))
    out, err = r.stdout.decode(), r.stderr.decode()
    assert r.returncode == 0, "exit %d" % r.returncode
    assert out.startswith("tide ") and "\n6\n1\n2\n2\ts\nmm(a, b" in out, repr(out)
    assert not re.search(r"(^|\n)>>? ", out) and "\x1b" not in out + err, repr(out + err)
    assert "stdin:1: e\nstack traceback:" in err, repr(err)
    assert not os.path.exists(os.path.join(TMP, "piped_history")), "piped input was written to the history"


check("piped input runs with no prompts, no escape codes and no history", piped)

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
PYTHON
