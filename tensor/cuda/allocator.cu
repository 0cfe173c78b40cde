// The caching allocator (the idea of PyTorch's CUDACachingAllocator, simpler): cudaMalloc'd
// segments are cut into blocks that go back to a per-device cache when tensors die, so that a
// training loop allocates from the cache instead of calling cudaMalloc/cudaFree every step.
//
// Requests are rounded up to 512 bytes. Small ones (< 1 MiB) come from 2 MiB segments, large
// ones from segments of their size rounded up to 2 MiB. Free blocks sit in size-ordered sets
// (small and large pools); a request takes the best fit, which is split when the rest is worth
// keeping, and a freed block merges with its free neighbours of the same segment. Each device
// has one stream, so a block freed after work was queued on it may be handed out again at once:
// the new user's work runs after that work on the same stream.
#include <cstdio>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime.cuh"

namespace tide::cuda {

namespace {

constexpr size_t kRound = 512;                      // every block is a multiple of this
constexpr size_t kSmallLimit = size_t(1) << 20;     // requests below this use the small pool
constexpr size_t kSmallSegment = size_t(2) << 20;   // segment size of the small pool
constexpr size_t kLargeRound = size_t(2) << 20;     // large segments are multiples of this

// A block of a segment; blocks of one segment form a list in address order.
struct Block {
  char* ptr;
  size_t size;
  bool small;
  bool allocated = false;
  Block* prev = nullptr;
  Block* next = nullptr;
};

// Best-fit order: by size, then address.
struct BySize {
  bool operator()(const Block* a, const Block* b) const {
    return a->size != b->size ? a->size < b->size : a->ptr < b->ptr;
  }
};

struct DevicePool {
  std::set<Block*, BySize> free_small, free_large;
  std::unordered_map<void*, Block*> live;  // allocated blocks by address
  size_t allocated = 0, reserved = 0, peak = 0;
  std::set<Block*, BySize>& free_set(bool small) { return small ? free_small : free_large; }
};

struct Allocator {
  std::mutex mutex;
  std::vector<DevicePool> pools;
};

Allocator& allocator() {
  static Allocator* a = [] {
    auto* al = new Allocator;  // never destroyed: no cudaFree after the driver may be gone
    al->pools.resize(size_t(device_count()));
    return al;
  }();
  return *a;
}

size_t round_up(size_t n, size_t m) { return (n + m - 1) / m * m; }

// "1.50 GiB", "3.00 MiB", "512 bytes"
std::string human_bytes(size_t n) {
  char buf[64];
  if (n >= (size_t(1) << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", double(n) / double(size_t(1) << 30));
  else if (n >= (size_t(1) << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", double(n) / double(size_t(1) << 20));
  else if (n >= (size_t(1) << 10)) std::snprintf(buf, sizeof buf, "%.2f KiB", double(n) / 1024.0);
  else std::snprintf(buf, sizeof buf, "%zu bytes", n);
  return buf;
}

// cudaFree's every segment of the device that is entirely free (a lone free block).
void release_free_segments(DevicePool& pool, int device) {
  for (bool small : {true, false}) {
    auto& set = pool.free_set(small);
    for (auto it = set.begin(); it != set.end();) {
      Block* b = *it;
      if (b->prev || b->next) {
        ++it;
        continue;
      }
      set_device(device);
      check(cudaFree(b->ptr), "cudaFree");
      pool.reserved -= b->size;
      it = set.erase(it);
      delete b;
    }
  }
}

// A new segment of `size` bytes as one free block (not yet in a set); on failure the cache is
// released and the cudaMalloc retried once, then tide::OutOfMemory explains the situation.
Block* new_segment(DevicePool& pool, size_t size, bool small, size_t asked, int device) {
  set_device(device);
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, size);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    release_free_segments(pool, device);
    err = cudaMalloc(&p, size);
  }
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    size_t free_bytes = 0, total_bytes = 0;
    if (cudaMemGetInfo(&free_bytes, &total_bytes) != cudaSuccess) cudaGetLastError();
    throw OutOfMemory("cuda: out of memory: tried to allocate " + human_bytes(asked) + " on cuda:" +
                      std::to_string(device) + " (" + human_bytes(pool.allocated) + " allocated by tensors, " +
                      human_bytes(pool.reserved - pool.allocated) + " cached; the device has " +
                      human_bytes(free_bytes) + " free of " + human_bytes(total_bytes) + ")");
  }
  check(err, "cudaMalloc");
  pool.reserved += size;
  return new Block{static_cast<char*>(p), size, small};
}

DevicePool& pool_of(Allocator& a, int device) {
  TIDE_CHECK(device >= 0 && size_t(device) < a.pools.size(), "cuda: device ", device, " does not exist (",
             a.pools.size(), " CUDA devices found)");
  return a.pools[size_t(device)];
}

}  // namespace

void* allocate(size_t nbytes, int device) {
  TIDE_CHECK(nbytes <= (size_t(1) << 62), "cuda: cannot allocate ", nbytes, " bytes");
  const size_t size = round_up(nbytes == 0 ? 1 : nbytes, kRound);
  const bool small = size < kSmallLimit;
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  DevicePool& pool = pool_of(a, device);
  auto& set = pool.free_set(small);
  Block key{nullptr, size, small};
  auto it = set.lower_bound(&key);
  Block* b;
  if (it != set.end()) {
    b = *it;
    set.erase(it);
  } else {
    b = new_segment(pool, small ? kSmallSegment : round_up(size, kLargeRound), small, nbytes, device);
  }
  // Split off the rest when it can serve another request of this pool.
  const size_t rest = b->size - size;
  if (small ? rest >= kRound : rest > kSmallLimit) {
    auto* r = new Block{b->ptr + size, rest, small, false, b, b->next};
    if (b->next) b->next->prev = r;
    b->next = r;
    b->size = size;
    set.insert(r);
  }
  b->allocated = true;
  pool.live.emplace(b->ptr, b);
  pool.allocated += b->size;
  if (pool.allocated > pool.peak) pool.peak = pool.allocated;
  return b->ptr;
}

// Never throws (it runs from destructors); an unknown pointer is ignored.
void free_block(void* ptr, size_t, int device) noexcept {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  if (device < 0 || size_t(device) >= a.pools.size()) return;
  DevicePool& pool = a.pools[size_t(device)];
  auto found = pool.live.find(ptr);
  if (found == pool.live.end()) return;
  Block* b = found->second;
  pool.live.erase(found);
  pool.allocated -= b->size;
  b->allocated = false;
  auto& set = pool.free_set(b->small);
  if (Block* p = b->prev; p && !p->allocated) {  // merge into the free block before
    set.erase(p);
    p->size += b->size;
    p->next = b->next;
    if (b->next) b->next->prev = p;
    delete b;
    b = p;
  }
  if (Block* n = b->next; n && !n->allocated) {  // absorb the free block after
    set.erase(n);
    b->size += n->size;
    b->next = n->next;
    if (n->next) n->next->prev = b;
    delete n;
  }
  set.insert(b);
}

DeviceMemoryStats memory_stats(int device) {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  const DevicePool& pool = pool_of(a, device);
  DeviceMemoryStats s;
  s.allocated = pool.allocated;
  s.reserved = pool.reserved;
  s.peak_allocated = pool.peak;
  return s;
}

void empty_cache() {
  Allocator& a = allocator();
  std::lock_guard<std::mutex> lock(a.mutex);
  for (size_t d = 0; d < a.pools.size(); ++d) release_free_segments(a.pools[d], int(d));
}

}  // namespace tide::cuda
