// The engine's interrupt flag (Ctrl-C): a pending request stops parallel_for before any
// work and a running region between chunks, with tide::Error("interrupted"); once cleared,
// work runs again.
#include <doctest/doctest.h>

#include <atomic>

#include "../../tensor/error.hpp"
#include "../../tensor/interrupt.hpp"
#include "../../tensor/parallel.hpp"

using namespace tide;

TEST_CASE("a pending interrupt stops parallel_for before it starts") {
  std::atomic<int64_t> done{0};
  auto count = [&](int64_t b, int64_t e) { done += e - b; };
  request_interrupt();
  CHECK(interrupt_requested());
  CHECK_THROWS_WITH_AS(parallel_for(0, 10, 100, count), "interrupted", Error);  // serial size
  CHECK_THROWS_WITH_AS(parallel_for(0, 1 << 20, 1024, count), "interrupted", Error);
  CHECK(done == 0);
  clear_interrupt();
  CHECK_FALSE(interrupt_requested());
  parallel_for(0, 1 << 20, 1024, count);
  CHECK(done == 1 << 20);
}

TEST_CASE("an interrupt during a parallel region skips the chunks not yet started") {
  int threads = get_num_threads();
  set_num_threads(2);
  std::atomic<int64_t> chunks{0};
  // 64 chunks; the first one to run asks for the interrupt.
  CHECK_THROWS_WITH_AS(parallel_for(0, 64 * 1024, 1024,
                                    [&](int64_t, int64_t) {
                                      if (chunks++ == 0) request_interrupt();
                                    }),
                       "interrupted", Error);
  CHECK(chunks < 64);
  clear_interrupt();
  set_num_threads(threads);
}
