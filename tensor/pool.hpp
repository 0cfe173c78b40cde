// Small-object pool for the engine's per-op objects (the control blocks of TensorImpl and
// Storage, autograd's nodes and metas): a thread-local free list per 64-byte size class, so
// that creating one costs no malloc/free pair on the hot path. Blocks freed on another thread
// join that thread's list; a thread's blocks go back to the system when it exits. Use it as
// std::allocate_shared<T>(PoolAllocator<T>(), ...).
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>

namespace tide {

namespace detail {

// The lists are a trivially destructible thread-local, so that a use costs one
// __tls_get_addr call at most (one with a destructor went through its wrapper on every
// access: 14 calls an op); a second thread-local, created on a thread's first use of the
// pool (pool_activate), gives the blocks back when the thread exits.
struct BlockPool {
  static constexpr size_t kClasses = 8;  // up to 512 bytes
  struct Node {
    Node* next;
  };
  enum State : uint8_t { Unused, Active, Exited };
  Node* heads[kClasses];
  State state;
};
extern constinit thread_local BlockPool t_pool;

// Starts the calling thread's pool; false once the thread is exiting (tensor.cpp).
bool pool_activate();

// Whether the calling thread's pool takes blocks: from its first use until the thread exits.
inline bool pool_usable() {
  if (t_pool.state == BlockPool::Active) [[likely]]
    return true;
  return pool_activate();
}

}  // namespace detail

template <typename T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <typename U>
  PoolAllocator(const PoolAllocator<U>&) {}
  static constexpr size_t cls() { return (sizeof(T) + 63) / 64 - 1; }
  T* allocate(size_t n) {
    using detail::BlockPool, detail::t_pool;
    if constexpr (cls() < BlockPool::kClasses) {
      if (n == 1 && detail::pool_usable()) {
        if (BlockPool::Node* h = t_pool.heads[cls()]) {
          t_pool.heads[cls()] = h->next;
          return reinterpret_cast<T*>(h);
        }
        return static_cast<T*>(::operator new((cls() + 1) * 64));
      }
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) {
    using detail::BlockPool, detail::t_pool;
    if constexpr (cls() < BlockPool::kClasses) {
      if (n == 1 && detail::pool_usable()) {
        auto* node = reinterpret_cast<BlockPool::Node*>(p);
        node->next = t_pool.heads[cls()];
        t_pool.heads[cls()] = node;
        return;
      }
    }
    ::operator delete(p);
  }
  template <typename U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
};

}  // namespace tide
