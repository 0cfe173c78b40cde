// Caching CPU allocator. Small requests (< 1 MiB) are rounded to a multiple of 64 bytes
// below 4 KiB and to a quarter-power-of-two above; large ones to a quarter power of two too,
// so that the waste is at most 25%. Freed blocks wait on a free list of their exact size
// class; the cache is capped so that it never holds more than what was in use at the peak.
#include "allocator.hpp"

#include <unistd.h>

#include <cstdlib>
#include <iomanip>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "error.hpp"
#include "memory_budget.hpp"

namespace tide {

namespace {

constexpr size_t kSmallClasses = 4096 / kAlignment;  // classes of 64..4096 bytes

struct Cache {
  std::mutex mu;
  std::vector<void*> small[kSmallClasses];  // indexed directly: no hashing on the hot path
  std::unordered_map<size_t, std::vector<void*>> large;
  CpuAllocatorStats stats{};

  std::vector<void*>& list(size_t cls) { return cls <= 4096 ? small[cls / kAlignment - 1] : large[cls]; }
};

Cache& cache() {
  static Cache* c = new Cache();  // never destroyed: tensors may die during static teardown
  return *c;
}

size_t physical_memory_bytes() {
  static const size_t total = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? size_t(pages) * size_t(page) : size_t(1) << 62;
  }();
  return total;
}

// Cached bytes above this are given back to the system at once.
constexpr size_t kMaxCachedBytes = size_t(2) << 30;

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

}  // namespace

size_t cpu_size_class(size_t nbytes) {
  if (nbytes == 0) nbytes = 1;
  if (nbytes <= 4096) return (nbytes + kAlignment - 1) & ~(kAlignment - 1);
  size_t p = size_t(1) << (63 - __builtin_clzll(nbytes - 1));  // largest power of two < nbytes
  size_t step = p / 4;
  return (nbytes + step - 1) / step * step;
}

// A block from the cache or the system (cpu_allocate without the budget).
static void* allocate_block(size_t nbytes) {
  size_t cls = cpu_size_class(nbytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    std::vector<void*>& free_list = c.list(cls);
    if (!free_list.empty()) {
      void* p = free_list.back();
      free_list.pop_back();
      c.stats.cached_bytes -= cls;
      c.stats.allocated_bytes += cls;
      if (c.stats.allocated_bytes > c.stats.peak_allocated_bytes)
        c.stats.peak_allocated_bytes = c.stats.allocated_bytes;
      ++c.stats.cache_hits;
      return p;
    }
  }
  if (nbytes > physical_memory_bytes())
    throw OutOfMemory("out of memory: cannot allocate " + human_bytes(nbytes) + ", more than this machine's " +
                      human_bytes(physical_memory_bytes()) + " of memory");
  void* p = std::aligned_alloc(kAlignment, cls);
  if (!p) {
    cpu_empty_cache();
    p = std::aligned_alloc(kAlignment, cls);
  }
  if (!p) throw OutOfMemory("out of memory: cannot allocate " + human_bytes(nbytes));
  std::lock_guard<std::mutex> lock(c.mu);
  c.stats.allocated_bytes += cls;
  if (c.stats.allocated_bytes > c.stats.peak_allocated_bytes)
    c.stats.peak_allocated_bytes = c.stats.allocated_bytes;
  ++c.stats.cache_misses;
  return p;
}

// Charged to the thread's memory budget, if an embedded interpreter installed one.
void* cpu_allocate(size_t nbytes) {
  return budget_charged_allocation(cpu_size_class(nbytes), [&] { return allocate_block(nbytes); });
}

void cpu_free(void* ptr, size_t nbytes) {
  if (!ptr) return;
  budget_release(ptr);
  size_t cls = cpu_size_class(nbytes);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    c.stats.allocated_bytes -= cls;
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
  return c.stats;
}

void cpu_empty_cache() {
  Cache& c = cache();
  std::vector<void*> blocks;
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
