// The engine's interrupt flag (Ctrl-C): a pending request stops parallel_for before any
// work and a running region between chunks, with tide::Error("interrupted"); once cleared,
// work runs again. A signal handler that runs on the wrong thread forwards the signal.
#include <doctest/doctest.h>

#include <lua.hpp>
#include <pthread.h>

#include <atomic>
#include <csignal>
#include <thread>

#include "../../bindings/lua_api.hpp"
#include "../../tensor/error.hpp"
#include "../../tensor/interrupt.hpp"
#include "../../tensor/ops/creation.hpp"
#include "../../tensor/ops/index.hpp"
#include "../../tensor/ops/shape.hpp"
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

// count_nonzero and nonzero walk serially (found by the API fuzzer: over an expanded view of
// 2^62 elements they ran forever, deaf to Ctrl-C); they check the interrupt as they go.
TEST_CASE("a serial nonzero walk over a huge view stops on an interrupt") {
  Tensor huge = ops::expand(ops::ones({1, 1}, DType::Bool), {int64_t(1) << 31, int64_t(1) << 31});
  request_interrupt();
  CHECK_THROWS_WITH_AS(ops::count_nonzero(huge), "interrupted", Error);
  CHECK_THROWS_WITH_AS(ops::nonzero(huge), "interrupted", Error);
  clear_interrupt();
  CHECK(ops::count_nonzero(ops::expand(ops::ones({1}, DType::Bool), {3 << 20})) == 3 << 20);
}

// x:tolist() builds Lua tables in a C loop that Lua's hook never sees; over an expanded view
// with a 2^40-long dim (and no elements) it ran until memory ran out (found by the API
// fuzzer). It checks the interrupt as it goes.
TEST_CASE("tolist of a view with a 2^40-long dim stops on an interrupt") {
  lua_State* L = luaL_newstate();
  Tensor view = ops::expand(ops::ones({1, 1}, DType::Bool), {int64_t(1) << 40, 0});
  request_interrupt();
  CHECK_THROWS_WITH_AS(lua::push_tolist(L, view), "interrupted", Error);
  clear_interrupt();
  lua_settop(L, 0);
  lua::push_tolist(L, ops::expand(ops::ones({1, 1}, DType::Bool), {3, 0}));
  CHECK(lua_rawlen(L, -1) == 3);
  lua_close(L);
}

namespace {
std::atomic<bool> g_handled_on_interrupt_thread{false};
std::atomic<int> g_handler_calls{0};
pthread_t g_test_main;

void record_sigusr1(int sig) {
  ++g_handler_calls;
  if (forward_to_interrupt_thread(sig)) return;
  g_handled_on_interrupt_thread = pthread_equal(pthread_self(), g_test_main) != 0;
}
}  // namespace

// A terminal's Ctrl-C may land on a worker thread; the handler must hand it to the thread
// that waits for it (the REPL's reader), even while that thread blocks the signal.
TEST_CASE("a signal that lands on another thread is forwarded to the interrupt thread") {
  g_test_main = pthread_self();
  set_interrupt_thread();
  struct sigaction sa, old;
  sa.sa_handler = record_sigusr1;
  sa.sa_flags = 0;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR1, &sa, &old);
  sigset_t usr1, before;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &usr1, &before);  // as the REPL's reader outside its wait
  std::thread worker([] {
    sigset_t all;
    sigemptyset(&all);
    sigaddset(&all, SIGUSR1);
    pthread_sigmask(SIG_UNBLOCK, &all, nullptr);
    pthread_kill(pthread_self(), SIGUSR1);  // delivered here, on the worker
  });
  worker.join();
  CHECK(g_handler_calls == 1);  // the worker's call only forwarded it
  CHECK_FALSE(g_handled_on_interrupt_thread);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);  // the pending signal is delivered here
  CHECK(g_handler_calls == 2);
  CHECK(g_handled_on_interrupt_thread);
  sigaction(SIGUSR1, &old, nullptr);
}
