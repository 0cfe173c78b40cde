// The host of the Lua API fuzzer (tests/fuzz/api_fuzz.lua, docs/fuzzing.md): an embedded
// tide::Interpreter with the limits a fuzzer needs, calling the script's fuzz_next() once per
// fuzzed call until it returns false.
//
//   tide_fuzz_host [options] api_fuzz.lua [script args...]
//     --memory-limit MB   Lua heap + tensors of the interpreter (default 512): a bigger
//                         allocation is a clean "memory limit" error, not a failure
//     --interrupt-after S  a call still running after S seconds gets the engine's interrupt
//                         (Ctrl-C's "interrupted" error) and the Lua time limit (default 5)
//     --hang-after S      a call still running after S seconds is a hang (default 30)
//     --rss-limit MB      the process's resident memory past this is a runaway allocation:
//                         memory that escaped the memory limit (default 3072)
//     --leak-check-every N  with LeakSanitizer, look for leaks after every N calls (0: only at
//                         exit, the default)
//
// Every line it prints for the runner starts with "@@" on stderr (the script's "@@CALL" lines
// name each call before it is made):
//   @@ESCAPED msg an error escaped the script's pcall: the time limit (which fires at every
//                 instruction once passed; not a failure) or a bug of the fuzzer
//   @@HANG        the current call ran past --hang-after; the process exits with status 124
//   @@RUNAWAY rss the resident memory passed --rss-limit; exits with status 125
//   @@LEAK        LeakSanitizer found leaks (reported above it); exits with status 126
//   @@DONE        every call was made
// A death (a signal, a sanitizer report) shows as the process ending without @@DONE; the
// runner (run_api_fuzz.py) then blames the last @@CALL.
#include <tide/tide.hpp>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "tensor/interrupt.hpp"

// LeakSanitizer's interface, present only in sanitized builds.
extern "C" int __lsan_do_recoverable_leak_check() __attribute__((weak));

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  size_t memory_limit_mb = 512;
  double interrupt_after = 5;
  double hang_after = 30;
  size_t rss_limit_mb = 3072;
  int leak_check_every = 0;
};

// Resident memory of this process in bytes (0 if /proc is unreadable).
size_t resident_bytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  unsigned long pages = 0, resident = 0;
  int n = std::fscanf(f, "%lu %lu", &pages, &resident);
  std::fclose(f);
  return n == 2 ? size_t(resident) * size_t(sysconf(_SC_PAGESIZE)) : 0;
}

// Watches the call in progress from its own thread: interrupts it after `interrupt_after`,
// declares a hang after `hang_after`, and checks the resident memory every 50 ms.
class Watchdog {
 public:
  explicit Watchdog(const Options& o) : o_(o), thread_([this] { run(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void begin_call() {
    std::lock_guard<std::mutex> lock(mu_);
    started_ = Clock::now();
    in_call_ = true;
    interrupted_ = false;
  }
  void end_call() {
    std::lock_guard<std::mutex> lock(mu_);
    in_call_ = false;
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      cv_.wait_for(lock, std::chrono::milliseconds(50));
      if (stop_) break;
      size_t rss = resident_bytes();
      if (rss > o_.rss_limit_mb << 20) {
        std::fprintf(stderr, "@@RUNAWAY resident memory %zu MiB > %zu MiB\n", rss >> 20, o_.rss_limit_mb);
        std::fflush(stderr);
        _exit(125);
      }
      if (!in_call_) continue;
      double s = std::chrono::duration<double>(Clock::now() - started_).count();
      if (!interrupted_ && s > o_.interrupt_after) {
        tide::request_interrupt();
        interrupted_ = true;
      }
      if (s > o_.hang_after) {
        std::fprintf(stderr, "@@HANG the call ran %.0f s (interrupted after %.0f s)\n", s, o_.interrupt_after);
        std::fflush(stderr);
        _exit(124);
      }
    }
  }

  const Options& o_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  bool in_call_ = false;
  bool interrupted_ = false;
  Clock::time_point started_;
  std::thread thread_;
};

int usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--memory-limit MB] [--interrupt-after S] [--hang-after S] [--rss-limit MB]\n"
               "          [--leak-check-every N] script.lua [args...]\n",
               prog);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int i = 1;
  for (; i < argc && std::strncmp(argv[i], "--", 2) == 0; i += 2) {
    if (i + 1 >= argc) return usage(argv[0]);
    const char* v = argv[i + 1];
    if (!std::strcmp(argv[i], "--memory-limit")) o.memory_limit_mb = std::strtoull(v, nullptr, 10);
    else if (!std::strcmp(argv[i], "--interrupt-after")) o.interrupt_after = std::strtod(v, nullptr);
    else if (!std::strcmp(argv[i], "--hang-after")) o.hang_after = std::strtod(v, nullptr);
    else if (!std::strcmp(argv[i], "--rss-limit")) o.rss_limit_mb = std::strtoull(v, nullptr, 10);
    else if (!std::strcmp(argv[i], "--leak-check-every")) o.leak_check_every = std::atoi(v);
    else return usage(argv[0]);
  }
  if (i >= argc) return usage(argv[0]);
  const std::string script = argv[i];
  const std::vector<std::string> args(argv + i + 1, argv + argc);
  bool leak_checks = o.leak_check_every > 0 && __lsan_do_recoverable_leak_check != nullptr;

  try {
    tide::Interpreter vm({.memory_limit_bytes = o.memory_limit_mb << 20,
                          .time_limit_seconds = o.interrupt_after,
                          .globals = true});
    Watchdog watchdog(o);
    vm.run_file(script, args);
    for (long calls = 1;; ++calls) {
      tide::clear_interrupt();
      watchdog.begin_call();
      bool more = true;
      try {
        more = vm.call("fuzz_next").as<bool>("fuzz_next");
      } catch (const tide::ScriptError& e) {
        std::fprintf(stderr, "@@ESCAPED %s\n", e.message().c_str());
      }
      watchdog.end_call();
      if (leak_checks && (calls % o.leak_check_every == 0 || !more) && __lsan_do_recoverable_leak_check()) {
        std::fprintf(stderr, "@@LEAK\n");
        std::fflush(stderr);
        _exit(126);
      }
      if (!more) break;
    }
  } catch (const tide::ScriptError& e) {
    std::fprintf(stderr, "fuzz host: %s\n%s\n", e.message().c_str(), e.traceback().c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fuzz host: %s\n", e.what());
    return 1;
  }
  std::fprintf(stderr, "@@DONE\n");
  return 0;
}
