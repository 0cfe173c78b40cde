// The CPU allocator's per-thread cache of small blocks: reuse without the shared cache,
// statistics that stay exact across threads, blocks freed on another thread than the one
// that allocated them, the bounds, and the return of a thread's blocks when it exits.
#include <doctest/doctest.h>

#include <set>
#include <thread>
#include <vector>

#include "../../tensor/allocator.hpp"
#include "../../tensor/error.hpp"
#include "../../tensor/memory_budget.hpp"

using namespace tide;

TEST_CASE("thread cache: a freed small block is the next one of its class") {
  void* p = cpu_allocate(100);
  cpu_free(p, 100);
  auto before = cpu_allocator_stats();
  void* q = cpu_allocate(128);  // same 128-byte class
  auto after = cpu_allocator_stats();
  CHECK(q == p);
  CHECK(after.cache_hits == before.cache_hits + 1);
  CHECK(after.cache_misses == before.cache_misses);
  CHECK(after.allocated_bytes == before.allocated_bytes + 128);
  CHECK(after.cached_bytes == before.cached_bytes - 128);
  cpu_free(q, 128);
}

TEST_CASE("thread cache: statistics count every byte, in use or cached") {
  auto start = cpu_allocator_stats();
  std::vector<void*> blocks;
  for (int i = 0; i < 5000; ++i) blocks.push_back(cpu_allocate(64));  // more than a thread keeps
  auto held = cpu_allocator_stats();
  CHECK(held.allocated_bytes == start.allocated_bytes + 5000 * 64);
  CHECK(held.cache_hits + held.cache_misses == start.cache_hits + start.cache_misses + 5000);
  for (void* b : blocks) cpu_free(b, 64);
  auto freed = cpu_allocator_stats();
  CHECK(freed.allocated_bytes == start.allocated_bytes);
  CHECK(freed.allocated_bytes + freed.cached_bytes == held.allocated_bytes + held.cached_bytes);
  // Allocating them again reuses them all: from this thread's cache, then the shared one.
  for (int i = 0; i < 5000; ++i) blocks[size_t(i)] = cpu_allocate(64);
  CHECK(cpu_allocator_stats().cache_misses == freed.cache_misses);
  std::set<void*> distinct(blocks.begin(), blocks.end());
  CHECK(distinct.size() == blocks.size());
  for (void* b : blocks) cpu_free(b, 64);
}

TEST_CASE("thread cache: blocks cross threads and come back when a thread exits") {
  cpu_empty_cache();
  auto start = cpu_allocator_stats();
  std::vector<void*> blocks;
  for (int i = 0; i < 100; ++i) blocks.push_back(cpu_allocate(256));
  // Freed on another thread: its cache keeps them until it exits, then the shared one does.
  std::thread([&] {
    for (void* b : blocks) cpu_free(b, 256);
    CHECK(cpu_allocator_stats().allocated_bytes == start.allocated_bytes);
  }).join();
  auto after = cpu_allocator_stats();
  CHECK(after.allocated_bytes == start.allocated_bytes);
  CHECK(after.cached_bytes == start.cached_bytes + 100 * 256);
  // This thread gets them back from the shared cache without asking the system.
  std::set<void*> before_set(blocks.begin(), blocks.end());
  for (int i = 0; i < 100; ++i) {
    void* b = cpu_allocate(256);
    CHECK(before_set.count(b) == 1);
    blocks[size_t(i)] = b;
  }
  CHECK(cpu_allocator_stats().cache_misses == after.cache_misses);
  for (void* b : blocks) cpu_free(b, 256);
  cpu_empty_cache();
  CHECK(cpu_allocator_stats().cached_bytes == start.cached_bytes);
}

TEST_CASE("thread cache: memory budgets are charged and refunded for cached blocks too") {
  auto budget = std::make_shared<MemoryBudget>(4096);
  {
    MemoryBudgetScope scope(budget.get());
    void* a = cpu_allocate(1000);  // 1024-byte class
    CHECK(budget->used() == 1024);
    cpu_free(a, 1000);
    CHECK(budget->used() == 0);
    std::vector<void*> blocks;
    for (int i = 0; i < 4; ++i) blocks.push_back(cpu_allocate(1024));
    CHECK(budget->used() == 4096);
    CHECK_THROWS_AS(cpu_allocate(64), OutOfMemory);
    // Refunded on another thread, where the blocks join that thread's cache.
    std::thread([&] {
      for (void* b : blocks) cpu_free(b, 1024);
    }).join();
    CHECK(budget->used() == 0);
  }
}
