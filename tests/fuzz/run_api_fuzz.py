#!/usr/bin/env python3
"""Runs the Lua API fuzzer (api_fuzz.lua in tide_fuzz_host) in child processes and reports
what failed: a death (signal, sanitizer report), a hang, a runaway allocation, a leak, or a
call that changed an input it has no business writing.
docs/fuzzing.md describes it.

  run_api_fuzz.py BUILD_DIR [--seed S] [--first I] [--calls N | --minutes M] [--chunk C]
                  [--only PATTERN] [--replay FILE] [--findings DIR] [--leak-check-every K]

The calls first..first+N-1 of the seed run in chunks of C calls, each chunk in a fresh host
process in a scratch directory. When a process dies, the last call it announced ("@@CALL")
is blamed and the chunk goes on from the next call. Each distinct failure (by kind, place
and function) is printed with its call's Lua source, which runs alone as a reproducer, and
written to --findings DIR. The output ends with "N passed, M failed": calls that completed,
calls that failed.
"""
import argparse
import os
import re
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("build", help="build directory holding tests/tide_fuzz_host")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--first", type=int, default=1, help="first call index")
    p.add_argument("--calls", type=int, default=None, help="number of calls (default: one per target)")
    p.add_argument("--minutes", type=float, default=None, help="run until this much time has passed")
    p.add_argument("--chunk", type=int, default=5000, help="calls per host process")
    p.add_argument("--only", default=None, help="only targets whose name matches this Lua pattern")
    p.add_argument("--replay", default=None,
                   help="run the calls listed in this file (tests/fuzz/regressions.lua) instead of random ones")
    p.add_argument("--findings", default=None, help="write each distinct failure to a file here")
    p.add_argument("--leak-check-every", type=int, default=0,
                   help="with LeakSanitizer, check for leaks every K calls (0: at exit only)")
    p.add_argument("--memory-limit", type=int, default=512, help="MiB of Lua heap + tensors")
    p.add_argument("--interrupt-after", type=float, default=None,
                   help="seconds before a call gets the interrupt and the time limit (default 2, 6 under ASan)")
    p.add_argument("--hang-after", type=float, default=None,
                   help="seconds after which a call is a hang (default 10, 30 under ASan)")
    p.add_argument("--rss-limit", type=int, default=None, help="MiB (default 2048, 4096 under ASan)")
    p.add_argument("--quiet", action="store_true", help="no progress lines")
    return p.parse_args()


def is_sanitized(host):
    out = subprocess.run(["ldd", host], capture_output=True, text=True).stdout
    return "libasan" in out


def child_limits():
    # No core files; files the fuzzed calls write are capped at 64 MiB (a bigger write fails
    # with EFBIG instead of SIGXFSZ, which is ignored).
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    os.setpgrp()


SANITIZER_RE = re.compile(r"(ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|"
                          r"WARNING: ThreadSanitizer|AddressSanitizer:DEADLYSIGNAL)")
FRAME_RE = re.compile(r"^\s*#\d+ 0x[0-9a-f]+ in (.*?) (/\S+?):(\d+)")


def signature(kind, target, report):
    """What makes two failures the same: the kind, the first frame in tide's own sources (or
    the sanitizer's message) and, without a frame, the target."""
    place = None
    for line in report.splitlines():
        m = FRAME_RE.match(line)
        if m and REPO in m.group(2) and "/tests/fuzz/" not in m.group(2):
            place = "%s:%s" % (os.path.relpath(m.group(2), REPO), m.group(3))
            break
        m = re.search(r"(\S+\.(cpp|hpp|h)):(\d+):\d+: runtime error: (.*)", line)
        if m:
            place = "%s:%s %s" % (os.path.relpath(m.group(1), REPO) if m.group(1).startswith("/") else m.group(1),
                                  m.group(3), m.group(4)[:80])
            break
    return (kind, place or target)


class Run:
    def __init__(self, a):
        self.a = a
        self.host = os.path.abspath(os.path.join(a.build, "tests", "tide_fuzz_host"))
        if not os.access(self.host, os.X_OK):
            sys.exit("run_api_fuzz.py: %s is not built" % self.host)
        self.sanitized = is_sanitized(self.host)
        self.rss_limit = a.rss_limit or (4096 if self.sanitized else 2048)
        slow = 3 if self.sanitized else 1
        a.interrupt_after = a.interrupt_after or 2 * slow
        a.hang_after = a.hang_after or 10 * slow
        self.env = dict(os.environ)
        if self.sanitized:
            # A failed huge malloc returns null (std::bad_alloc) as in the release build, rather
            # than ending the process: an allocation the script sized without a bound shows as
            # an unclear "std::bad_alloc" message, or as resident memory past the cap.
            asan = self.env.get("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=0")
            if "allocator_may_return_null" not in asan:
                asan += ":allocator_may_return_null=1"
            self.env["ASAN_OPTIONS"] = asan
            self.env.setdefault("LSAN_OPTIONS", "suppressions=%s/tests/lsan.supp" % REPO)
            self.env.setdefault("UBSAN_OPTIONS", "halt_on_error=1:print_stacktrace=1")
        self.scratch = tempfile.mkdtemp(prefix="tide-fuzz-")
        self.calls = 0          # calls that completed
        self.failed = 0         # calls that failed
        self.limited = {}       # target -> [calls stopped by the time limit, first source] (not failures)
        self.stats = {}         # target -> [calls, returned, raised]
        self.targets = None
        self.unclear = {}       # target -> (message, source)
        self.findings = {}      # signature -> finding dict
        self.notes = set()
        self.skipped = {}       # known issue -> calls not made (tests/fuzz/known_issues.lua)
        self.escaped = []       # (call, kind, message): errors that escaped the script's pcall, inputs changed

    def host_cmd(self, first, count, leak_every):
        cmd = [self.host, "--memory-limit", str(self.a.memory_limit), "--interrupt-after", str(self.a.interrupt_after),
               "--hang-after", str(self.a.hang_after), "--rss-limit", str(self.rss_limit),
               "--leak-check-every", str(leak_every), os.path.join(HERE, "api_fuzz.lua"),
               "seed=%d" % self.a.seed, "first=%d" % first, "count=%d" % count]
        if self.a.only:
            cmd.append("only=" + self.a.only)
        if self.a.replay:
            cmd.append("replay=" + os.path.abspath(self.a.replay))
        return cmd

    def run_process(self, first, count, leak_every):
        """Runs calls first..first+count-1 in one process. Returns (rc, log text)."""
        log_path = os.path.join(self.scratch, "log.txt")
        work = os.path.join(self.scratch, "work")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(self.host_cmd(first, count, leak_every), cwd=work, stdin=subprocess.DEVNULL,
                                    stdout=log, stderr=subprocess.STDOUT, env=self.env, preexec_fn=child_limits)
            # The host's own watchdog ends hangs; this catches a host that stopped writing
            # for much longer (a wedged watchdog).
            last_size, last_change = 0, time.monotonic()
            while proc.poll() is None:
                time.sleep(0.2)
                size = os.path.getsize(log_path)
                if size != last_size:
                    last_size, last_change = size, time.monotonic()
                elif time.monotonic() - last_change > self.a.hang_after + 60:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    with open(log_path, "ab") as f:
                        f.write(b"@@HANG the host stopped writing (killed by the runner)\n")
        with open(log_path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        return proc.returncode, text

    def record(self, kind, index, target, source, report):
        self.failed += 1
        sig = signature(kind, target, report)
        f = self.findings.get(sig)
        if f is None:
            f = self.findings[sig] = {"kind": kind, "place": sig[1], "index": index, "target": target,
                                      "source": source, "report": report, "count": 0, "targets": set()}
            if not self.a.quiet:
                print("FAILURE %s in call %d (%s)\n  reproducer: %s\n%s" %
                      (kind, index, target, source, "\n".join("  | " + l for l in report.splitlines()[:40])),
                      flush=True)
        f["count"] += 1
        f["targets"].add(target)

    def parse(self, text):
        """Reads a log: returns (last call index or None, its target, its source, text after it,
        whether @@DONE was reached)."""
        last = None
        after_start = 0
        done = False
        for m in re.finditer(r"^@@(\w+) ?(.*)$", text, re.M):
            tag, rest = m.group(1), m.group(2)
            if tag == "CALL":
                idx, tail = rest.split(" ", 1)
                target, source = tail.split(" | ", 1)
                last = (int(idx), target, source)
                after_start = m.end()
                self.calls += 1
            elif tag == "STAT":
                name, calls, ok, err = rest.rsplit(" ", 3)
                s = self.stats.setdefault(name, [0, 0, 0])
                s[1] += int(ok)
                s[2] += int(err)
            elif tag == "TARGETS":
                self.targets = int(rest)
            elif tag == "UNCLEAR":
                target, msg, source = rest.split(" | ", 2)
                self.unclear.setdefault(target, (msg, source))
            elif tag == "ESCAPED" and last and "time limit of" in rest:
                self.limited.setdefault(last[1], [0, last[2]])[0] += 1
            elif tag == "ESCAPED":
                self.escaped.append((last, "error escaped the fuzzer's pcall", rest))
            elif tag == "CHANGED":
                head, what, source = rest.split(" | ", 2)
                self.escaped.append((last, "input changed", what))
            elif tag == "SKIP":
                owner = rest.split(" | ", 1)[1]
                self.calls -= 1
                self.skipped[owner] = self.skipped.get(owner, 0) + 1
            elif tag == "NOTE":
                self.notes.add(rest)
            elif tag == "DONE":
                done = True
        return last, text[after_start:], done

    def classify(self, rc, after, done):
        """The kind of failure a process ending shows, or None."""
        if "@@HANG" in after:
            return "hang"
        if "@@RUNAWAY" in after:
            return "runaway allocation"
        if "@@LEAK" in after:
            return "leak"
        m = SANITIZER_RE.search(after)
        if m:
            if "LeakSanitizer" in m.group(0):
                return "leak"
            return "UBSan" if "runtime error" in m.group(0) else "ASan"
        if rc is not None and rc < 0:
            return "signal %s" % signal.Signals(-rc).name
        if rc != 0 or not done:
            return "exit status %s" % rc
        return None

    def run_range(self, first, count, deadline=None):
        """Runs calls first..first+count-1, restarting after each failure."""
        end = first + count
        while first < end:
            if deadline and time.monotonic() > deadline:
                return False
            n = min(self.a.chunk, end - first)
            rc, text = self.run_process(first, n, self.a.leak_check_every)
            last, after, done = self.parse(text)
            for call, kind, msg in self.escaped:
                index, target, source = call or (first, "(process)", "")
                self.calls -= 1
                self.record(kind, index, target, source, msg)
            self.escaped = []
            kind = self.classify(rc, after, done)
            if kind is None:
                first += n
                continue
            if last is None or done:  # before the first call or after the last: the process itself
                report = after if last is None else text[text.find("@@DONE"):]
                self.record(kind + (" at exit" if done else " at start"), first, "(process)", "", report[-6000:])
                if last is None:
                    return True
                first += n
                continue
            index, target, source = last
            self.calls -= 1  # the blamed call did not complete
            if kind == "leak" and self.a.leak_check_every > 1:
                self.attribute_leak(max(first, index - self.a.leak_check_every + 1), index)
            else:
                self.record(kind, index, target, source, after[-6000:])
            first = index + 1
        return True

    def attribute_leak(self, first, last):
        """Runs first..last again with a leak check after every call to find the leaking one."""
        rc, text = self.run_process(first, last - first + 1, 1)
        saved = self.calls
        found, after, done = self.parse(text)
        self.calls = saved
        if found and not done and ("@@LEAK" in after or "LeakSanitizer" in after):
            self.record("leak", found[0], found[1], found[2], after[-6000:])
        else:
            self.record("leak", last, "(calls %d..%d)" % (first, last), "", "the leak did not show again alone")

    def main(self):
        a = self.a
        start = time.monotonic()
        try:
            if a.minutes is not None:
                deadline = start + a.minutes * 60
                first = a.first
                while time.monotonic() < deadline:
                    self.run_range(first, a.chunk, deadline)
                    first += a.chunk
                    if not a.quiet:
                        print("progress: %d calls, %d failed, %.0f s, next call %d" %
                              (self.calls, self.failed, time.monotonic() - start, first), flush=True)
            else:
                count = a.calls
                if count is None:
                    count = self.targets_from_listing()
                self.run_range(a.first, count)
        finally:
            shutil.rmtree(self.scratch, ignore_errors=True)
        self.report(time.monotonic() - start)
        return 0 if self.failed == 0 else 1

    def targets_from_listing(self):
        """The number of targets (replay entries with --replay), from a run that makes no call.
        A listing run that does not say is retried once, then recorded as a failure: running
        one call instead (as before) hid every other call behind "1 passed"."""
        for _ in range(2):
            rc, text = self.run_process(1, 0, 0)
            self.parse(text)
            if self.targets:
                return self.targets
        self.record("listing", 0, "(process)", "", "the listing run (count=0) printed no @@TARGETS line, exit status "
                    "%s:\n%s" % (rc, text[-3000:]))
        return 0

    def report(self, seconds):
        a = self.a
        reached = sum(1 for s in self.stats.values() if s[1] + s[2] > 0)
        returned = sum(1 for s in self.stats.values() if s[1] > 0)
        print("api fuzz: seed %d, %d calls in %.0f s (%.0f/s) on %s; %d of %s targets reached, %d returned a value "
              "at least once; %d calls stopped by the time limit" %
              (a.seed, self.calls + self.failed, seconds, (self.calls + self.failed) / max(seconds, 1e-9),
               "ASan+UBSan" if self.sanitized else "release", reached, self.targets or "?", returned,
               sum(n for n, _ in self.limited.values())))
        for t in sorted(self.limited):
            n, src = self.limited[t]
            print("  time limit: %s, %d calls, e.g. %s" % (t, n, src[:300]))
        for owner in sorted(self.skipped):
            print("  skipped (known issue): %d calls: %s" % (self.skipped[owner], owner))
        for note in sorted(self.notes):
            print("note:", note)
        if self.unclear:
            print("%d targets raised an error whose message is not an op's (first example each):" % len(self.unclear))
            for t in sorted(self.unclear):
                msg, src = self.unclear[t]
                print("  %s: %s\n      %s" % (t, msg[:200], src[:300]))
        if self.findings:
            print("%d distinct failures:" % len(self.findings))
            for i, f in enumerate(sorted(self.findings.values(), key=lambda f: f["index"])):
                print("  [%d] %s at %s: %d calls, in %s\n      e.g. call %d: %s" %
                      (i + 1, f["kind"], f["place"], f["count"], ", ".join(sorted(f["targets"]))[:300],
                       f["index"], f["source"]))
                if a.findings:
                    os.makedirs(a.findings, exist_ok=True)
                    name = os.path.join(a.findings, "seed%d-call%d.txt" % (a.seed, f["index"]))
                    with open(name, "w") as out:
                        out.write("-- %s at %s (seed %d, call %d, %s)\n-- %d calls failed this way, in: %s\n"
                                  "local H = dofile(\"tests/fuzz/values.lua\")\n%s\n--[[\n%s\n]]\n" %
                                  (f["kind"], f["place"], a.seed, f["index"], f["target"], f["count"],
                                   ", ".join(sorted(f["targets"])), re.sub(r"; return ", "\nreturn ", f["source"]),
                                   f["report"]))
        print("%d passed, %d failed" % (self.calls, self.failed))


if __name__ == "__main__":
    sys.exit(Run(parse_args()).main())
