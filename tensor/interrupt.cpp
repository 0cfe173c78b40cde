// The interrupt flag: one lock-free atomic, so a signal handler may set it.
#include "interrupt.hpp"

#include <pthread.h>

#include <atomic>
#include <csignal>

#include "error.hpp"

namespace tide {
namespace {

std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler must be able to set the flag");

pthread_t g_interrupt_thread;
std::atomic<bool> g_has_interrupt_thread{false};

}  // namespace

void request_interrupt() { g_interrupt.store(true, std::memory_order_relaxed); }

void clear_interrupt() { g_interrupt.store(false, std::memory_order_relaxed); }

bool interrupt_requested() { return g_interrupt.load(std::memory_order_relaxed); }

void check_interrupt() {
  if (interrupt_requested()) throw Error("interrupted");
}

void set_interrupt_thread() {
  g_interrupt_thread = pthread_self();
  g_has_interrupt_thread.store(true, std::memory_order_release);
}

// pthread_self and pthread_kill are async-signal-safe; a thread-directed signal waits while
// that thread blocks it (the REPL does, except inside its ppoll).
bool forward_to_interrupt_thread(int sig) {
  if (!g_has_interrupt_thread.load(std::memory_order_acquire)) return false;
  if (pthread_equal(pthread_self(), g_interrupt_thread)) return false;
  pthread_kill(g_interrupt_thread, sig);
  return true;
}

}  // namespace tide
