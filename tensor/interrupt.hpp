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

}  // namespace tide
