// Caching CPU allocator. Small requests (< 1 MiB) are rounded to a multiple of 64 bytes
// below 4 KiB and to a quarter-power-of-two above; large ones to a quarter power of two too,
// so that the waste is at most 25%. Freed blocks wait on a free list of their exact size
// class, capped at kMaxCachedBytes.
//
// Blocks of up to 4 KiB (the tensors of per-op-overhead loops) first go to a per-thread
// cache that needs no lock: a free list per class, bounded per class and per thread, that
// exchanges half a list at a time with the shared, mutex-guarded cache (the garbage
// collector frees temporaries in bursts, so one lock moves hundreds of blocks) and gives
// everything back to it when the thread exits.
#include "allocator.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <iomanip>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "error.hpp"
#include "memory_budget.hpp"

namespace tide {

namespace {

constexpr size_t kSmallBytes = 4096;
constexpr size_t kSmallClasses = kSmallBytes / kAlignment;  // classes of 64..4096 bytes
// A thread keeps at most this many bytes of one class, and of all classes together.
constexpr size_t kThreadClassBytes = 128 * 1024;
constexpr size_t kThreadBytes = 1024 * 1024;
// Cached bytes above this are given back to the system at once.
constexpr size_t kMaxCachedBytes = size_t(2) << 30;

size_t small_index(size_t cls) { return cls / kAlignment - 1; }
// Blocks of class cls a thread keeps at most.
uint32_t thread_capacity(size_t cls) { return uint32_t(std::max<size_t>(kThreadClassBytes / cls, 4)); }

// One thread's share of the statistics, written only by that thread (relaxed atomics so
// that cpu_allocator_stats can read them from another). Bytes may go negative: a block
// freed on another thread than the one that allocated it.
struct ThreadCounters {
  std::atomic<int64_t> allocated{0}, cached{0};
  std::atomic<uint64_t> hits{0}, misses{0};
};

template <typename T, typename D>
void bump(std::atomic<T>& counter, D delta) {
  counter.store(counter.load(std::memory_order_relaxed) + T(delta), std::memory_order_relaxed);
}

struct Cache {
  std::mutex mu;
  std::vector<void*> small[kSmallClasses];  // indexed directly: no hashing
  std::unordered_map<size_t, std::vector<void*>> large;
  // The shared lists' and large blocks' numbers, plus the counters of exited threads.
  CpuAllocatorStats stats{};
  std::vector<const ThreadCounters*> threads;  // of the threads with a live cache

  std::vector<void*>& list(size_t cls) { return cls <= kSmallBytes ? small[small_index(cls)] : large[cls]; }
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: tensors may die during static teardown
  return *c;
}

// A cached block's first bytes link it to the next one of its class.
struct FreeBlock {
  FreeBlock* next;
};

struct ThreadCache {
  struct List {
    FreeBlock* head = nullptr;
    uint32_t count = 0;
  };
  List lists[kSmallClasses];
  size_t bytes = 0;  // in all lists
  ThreadCounters counters;

  ThreadCache();
  ~ThreadCache();
};

// The calling thread's cache: set on first use, and null again once the thread has exited
// (its thread-local objects are being destroyed), when blocks go to the shared cache.
constinit thread_local ThreadCache* t_cache = nullptr;
constinit thread_local bool t_cache_destroyed = false;

ThreadCache* thread_cache() {
  if (ThreadCache* c = t_cache) [[likely]]
    return c;
  if (t_cache_destroyed) return nullptr;
  static thread_local ThreadCache owned;  // constructed here once per thread
  return &owned;
}

// Moves up to n blocks from a thread list to the shared list of class cls; the caller holds
// the lock. Returns how many moved.
uint32_t move_to_shared(Cache& c, ThreadCache::List& l, size_t cls, uint32_t n) {
  std::vector<void*>& shared = c.small[small_index(cls)];
  uint32_t moved = 0;
  for (; moved < n && l.head; ++moved) {
    FreeBlock* b = l.head;
    l.head = b->next;
    if (c.stats.cached_bytes + cls <= kMaxCachedBytes) {
      shared.push_back(b);
      c.stats.cached_bytes += cls;
    } else {
      std::free(b);
    }
  }
  l.count -= moved;
  return moved;
}

ThreadCache::ThreadCache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.threads.push_back(&counters);
  t_cache = this;
}

// At thread exit: every block goes to the shared cache, the counters into its statistics.
ThreadCache::~ThreadCache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  for (size_t i = 0; i < kSmallClasses; ++i) move_to_shared(c, lists[i], (i + 1) * kAlignment, lists[i].count);
  c.stats.allocated_bytes += size_t(counters.allocated.load(std::memory_order_relaxed));
  c.stats.cache_hits += counters.hits.load(std::memory_order_relaxed);
  c.stats.cache_misses += counters.misses.load(std::memory_order_relaxed);
  c.threads.erase(std::find(c.threads.begin(), c.threads.end(), &counters));
  t_cache = nullptr;
  t_cache_destroyed = true;
}

// Half a thread list's worth of class cls from the shared cache (one lock for all of them).
void refill(ThreadCache& tc, size_t cls) {
  Cache& c = cache();
  ThreadCache::List& l = tc.lists[small_index(cls)];
  std::lock_guard<std::mutex> lock(c.mu);
  std::vector<void*>& shared = c.small[small_index(cls)];
  size_t n = std::min<size_t>(shared.size(), thread_capacity(cls) / 2);
  n = std::min(n, (kThreadBytes - std::min(tc.bytes, kThreadBytes)) / cls);
  for (size_t k = 0; k < n; ++k) {
    auto* b = static_cast<FreeBlock*>(shared.back());
    shared.pop_back();
    b->next = l.head;
    l.head = b;
  }
  l.count += uint32_t(n);
  c.stats.cached_bytes -= n * cls;
  tc.bytes += n * cls;
  bump(tc.counters.cached, n * cls);
}

// Makes room for one block of class cls in a thread's cache: half its list goes to the
// shared cache. Returns false when the thread's cache is full with other classes.
bool make_room(ThreadCache& tc, size_t cls) {
  ThreadCache::List& l = tc.lists[small_index(cls)];
  if (l.count >= thread_capacity(cls)) {
    Cache& c = cache();
    std::lock_guard<std::mutex> lock(c.mu);
    uint32_t moved = move_to_shared(c, l, cls, l.count / 2);
    tc.bytes -= moved * cls;
    bump(tc.counters.cached, -int64_t(moved * cls));
  }
  return tc.bytes + cls <= kThreadBytes;
}

size_t physical_memory_bytes() {
  static const size_t total = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t(1) << 62;
  }();
  return total;
}

std::string human_bytes(size_t n) {
  const char* units[] = {"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double v = double(n);
  int u = 0;
  while (v >= 1024 && u < 6) v /= 1024, ++u;
  std::ostringstream os;
  os << n << " bytes";
  if (u > 0) os << " (" << std::fixed << std::setprecision(1) << v << " " << units[u] << ")";
  return os.str();
}

// A new block of class cls from the system; throws OutOfMemory naming the request.
void* system_allocate(size_t nbytes, size_t cls) {
  if (nbytes > physical_memory_bytes())
    throw OutOfMemory("out of memory: cannot allocate " + human_bytes(nbytes) + ", more than this machine's " +
                      human_bytes(physical_memory_bytes()) + " of memory");
  void* p = std::aligned_alloc(kAlignment, cls);
  if (!p) {
    cpu_empty_cache();
    p = std::aligned_alloc(kAlignment, cls);
  }
  if (!p) throw OutOfMemory("out of memory: cannot allocate " + human_bytes(nbytes));
  return p;
}

// A small block from the thread's cache, refilled from the shared one, else the system.
void* allocate_small(ThreadCache& tc, size_t nbytes, size_t cls) {
  ThreadCache::List& l = tc.lists[small_index(cls)];
  if (!l.head) refill(tc, cls);
  if (FreeBlock* b = l.head) {
    l.head = b->next;
    --l.count;
    tc.bytes -= cls;
    bump(tc.counters.cached, -int64_t(cls));
    bump(tc.counters.allocated, cls);
    bump(tc.counters.hits, 1);
    return b;
  }
  void* p = system_allocate(nbytes, cls);
  bump(tc.counters.allocated, cls);
  bump(tc.counters.misses, 1);
  return p;
}

// A block from the shared cache or the system: large blocks, and small ones on a thread
// whose cache is gone.
void* allocate_shared(size_t nbytes, size_t cls) {
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    std::vector<void*>& free_list = c.list(cls);
    if (!free_list.empty()) {
      void* p = free_list.back();
      free_list.pop_back();
      c.stats.cached_bytes -= cls;
      c.stats.allocated_bytes += cls;
      ++c.stats.cache_hits;
      return p;
    }
  }
  void* p = system_allocate(nbytes, cls);
  std::lock_guard<std::mutex> lock(c.mu);
  c.stats.allocated_bytes += cls;
  ++c.stats.cache_misses;
  return p;
}

}  // namespace

size_t cpu_size_class(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  if (nbytes <= kSmallBytes) return (nbytes + kAlignment - 1) & ~(kAlignment - 1);
  size_t p = size_t(1) << (63 - __builtin_clzll(nbytes - 1));  // largest power of two < nbytes
  size_t step = p / 4;
  return (nbytes + step - 1) / step * step;
}

// Charged to the thread's memory budget, if an embedded interpreter installed one.
void* cpu_allocate(size_t nbytes) {
  const size_t cls = cpu_size_class(nbytes);
  return budget_charged_allocation(cls, [&] {
    ThreadCache* tc = cls <= kSmallBytes ? thread_cache() : nullptr;
    return tc ? allocate_small(*tc, nbytes, cls) : allocate_shared(nbytes, cls);
  });
}

void cpu_free(void* ptr, size_t nbytes) {
  if (!ptr) return;
  budget_release(ptr);
  const size_t cls = cpu_size_class(nbytes);
  ThreadCache* tc = cls <= kSmallBytes ? thread_cache() : nullptr;
  if (tc && make_room(*tc, cls)) {
    ThreadCache::List& l = tc->lists[small_index(cls)];
    auto* b = static_cast<FreeBlock*>(ptr);
    b->next = l.head;
    l.head = b;
    ++l.count;
    tc->bytes += cls;
    bump(tc->counters.cached, cls);
    bump(tc->counters.allocated, -int64_t(cls));
    return;
  }
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (tc) bump(tc->counters.allocated, -int64_t(cls));
    else c.stats.allocated_bytes -= cls;
    if (c.stats.cached_bytes + cls <= kMaxCachedBytes) {
      c.list(cls).push_back(ptr);
      c.stats.cached_bytes += cls;
      return;
    }
  }
  std::free(ptr);
}

CpuAllocatorStats cpu_allocator_stats() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  CpuAllocatorStats s = c.stats;
  for (const ThreadCounters* t : c.threads) {
    s.allocated_bytes += size_t(t->allocated.load(std::memory_order_relaxed));
    s.cached_bytes += size_t(t->cached.load(std::memory_order_relaxed));
    s.cache_hits += t->hits.load(std::memory_order_relaxed);
    s.cache_misses += t->misses.load(std::memory_order_relaxed);
  }
  return s;
}

void cpu_empty_cache() {
  Cache& c = cache();
  std::vector<void*> blocks;
  ThreadCache* tc = t_cache;
  if (tc) {
    for (ThreadCache::List& l : tc->lists) {
      for (FreeBlock* b = l.head; b; b = b->next) blocks.push_back(b);
      l = ThreadCache::List{};
    }
    bump(tc->counters.cached, -int64_t(tc->bytes));
    tc->bytes = 0;
  }
  {
    std::lock_guard<std::mutex> lock(c.mu);
    for (auto& l : c.small) blocks.insert(blocks.end(), l.begin(), l.end()), l.clear();
    for (auto& [cls, l] : c.large) blocks.insert(blocks.end(), l.begin(), l.end());
    c.large.clear();
    c.stats.cached_bytes = 0;
  }
  for (void* p : blocks) std::free(p);
}

}  // namespace tide
