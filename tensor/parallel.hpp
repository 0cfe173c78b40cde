// One engine-owned thread pool. set_num_threads sets the engine's loops and OpenBLAS's
// threads from one budget. Work is split into chunks whose boundaries depend only on the
// problem size and the grain, never on the thread count, so results are bit-identical.
#pragma once
#include <cstdint>
#include <functional>

namespace tide {

// The engine's threads, the calling one included. set_num_threads(n) asks for n: when the
// system refuses to start a thread (address-space or process limits), the engine runs on
// the threads it could start, down to the calling thread alone, and get_num_threads says
// how many. OpenBLAS gets min(n, the threads it started when it was loaded).
int get_num_threads();
void set_num_threads(int n);

// For a program whose OpenBLAS could not start its threads while loading (it raises SIGINT
// then, which `tide`'s main catches, see interpreter/main.cpp): keeps OpenBLAS on the
// calling thread from now on, as it would otherwise hand work to threads that do not exist.
void blas_threads_failed_to_start();

// Elements below which an elementwise loop runs on the calling thread. Chosen by measuring
// `a + b` into an existing float32 output (bench/grain.lua) on this project's 2-core
// machine: 2 threads first win at 2^18 elements (41 us -> 26 us); below that, handing work
// to another thread costs more than it saves.
constexpr int64_t kParallelGrain = 262144;

// While the pool's workers are awake (spinning after a region, as between the steps of a
// training loop: no thread needs waking), elementwise loops go parallel from
// kAwakeParallelMin elements, in chunks of kAwakeParallelGrain. What that wins is less the
// arithmetic (a + b on 2^16 warm elements takes as long on 2 threads as on 1) than the
// caches: data a parallel region just wrote or read sits in both cores' caches, and one
// core alone then writes it at the speed of cache-line transfers. The two-layer step's w1
// update (100k float32, after products split over both cores): 68-80 -> 42-50 us a step with
// chunks of 2^15, 54-69 us with chunks of 2^16 (2026-11-27, 2-core Zen 4).
constexpr int64_t kAwakeParallelMin = 65536;
constexpr int64_t kAwakeParallelGrain = 32768;

// The grain an elementwise loop over numel elements passes to parallel_for: kParallelGrain,
// or kAwakeParallelGrain from kAwakeParallelMin elements while the workers are awake.
// Elementwise results do not depend on the chunks, so this may follow timing.
int64_t pointwise_grain(int64_t numel);

// Calls f(begin, end) on disjoint ranges covering [begin, end), in parallel when the range
// is at least `grain` long. Chunk boundaries are multiples of `grain` from `begin`.
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f);

// True while the calling thread runs inside a parallel_for (nested calls run inline).
bool in_parallel_region();

}  // namespace tide
