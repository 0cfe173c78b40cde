// The interrupt flag: one lock-free atomic, so a signal handler may set it.
#include "interrupt.hpp"

#include <atomic>

#include "error.hpp"

namespace tide {
namespace {

std::atomic<bool> g_interrupt{false};
static_assert(std::atomic<bool>::is_always_lock_free, "a signal handler must be able to set the flag");

}  // namespace

void request_interrupt() { g_interrupt.store(true, std::memory_order_relaxed); }

void clear_interrupt() { g_interrupt.store(false, std::memory_order_relaxed); }

bool interrupt_requested() { return g_interrupt.load(std::memory_order_relaxed); }

void check_interrupt() {
  if (interrupt_requested()) throw Error("interrupted");
}

}  // namespace tide
