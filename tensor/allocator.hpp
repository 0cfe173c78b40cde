// The caching CPU allocator: blocks are rounded up to size classes and kept on free lists
// when released, so that a loop allocating the same shapes reuses warm pages instead of
// paying for page faults on every step.
#pragma once
#include <cstddef>
#include <cstdint>

namespace tide {

constexpr size_t kAlignment = 64;

// 64-byte aligned block of at least nbytes; throws tide::OutOfMemory naming the size.
void* cpu_allocate(size_t nbytes);
void cpu_free(void* ptr, size_t nbytes);

struct CpuAllocatorStats {
  size_t allocated_bytes;  // handed out and not yet freed (rounded sizes)
  size_t cached_bytes;     // kept on free lists (the shared ones and every thread's)
  uint64_t cache_hits, cache_misses;
};
CpuAllocatorStats cpu_allocator_stats();
// Returns the shared cache's blocks and the calling thread's to the system (another
// thread's small-block cache, at most 1 MiB, goes back to the shared one when it exits).
void cpu_empty_cache();
// Size class a request is rounded up to (exposed for tests).
size_t cpu_size_class(size_t nbytes);

}  // namespace tide
