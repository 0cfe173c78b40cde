// A process-wide interrupt request (Ctrl-C). A signal handler sets it; the engine checks it
// between chunks of long work (parallel_for, the matrices of a batched product) and stops
// with tide::Error("interrupted"), which the binding turns into a Lua error. Whoever starts
// a new piece of work clears it first.
#pragma once

namespace tide {

// Asks the engine to stop at its next check. Async-signal-safe (one lock-free atomic store).
void request_interrupt();
// Forgets a pending request (before running the next chunk of a script or REPL line).
void clear_interrupt();
// Whether a request is pending.
bool interrupt_requested();
// Throws tide::Error("interrupted") when a request is pending; the request stays set, so
// every later check of the same work stops too.
void check_interrupt();

// A terminal's Ctrl-C goes to whichever thread does not block SIGINT, which may be a worker
// (the engine's or OpenBLAS's) rather than the thread whose wait or Lua code it must stop.
// Makes the calling thread the one that handles interrupt signals.
void set_interrupt_thread();
// For a signal handler: when it runs on another thread than that one, re-sends `sig` there
// and returns true (the handler then does nothing else). Async-signal-safe.
bool forward_to_interrupt_thread(int sig);

}  // namespace tide
