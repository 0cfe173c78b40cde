// Byte budgets of embedded interpreters (tide::Interpreter's memory_limit_bytes). While a
// budget is installed on a thread (MemoryBudgetScope), every CPU tensor allocation made there
// is charged to it and refused with tide::OutOfMemory past its limit; the block gives its
// bytes back when it is freed, on whatever thread. The interpreter's Lua heap is charged to
// the same budget through try_charge/refund.
#pragma once
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>

namespace tide {

class MemoryBudget : public std::enable_shared_from_this<MemoryBudget> {
 public:
  explicit MemoryBudget(size_t limit_bytes) : limit_(limit_bytes) {}

  size_t limit() const { return limit_; }
  size_t used() const { return used_.load(std::memory_order_relaxed); }
  // Adds n bytes if that stays within the limit plus `overdraft`; returns whether it did.
  bool try_charge(size_t n, size_t overdraft = 0);
  void refund(size_t n) { used_.fetch_sub(n, std::memory_order_relaxed); }
  // Charges a tensor block of n bytes or throws OutOfMemory naming the limit. Before
  // refusing, calls `reclaim` once (the interpreter's garbage collector frees dead tensors).
  void charge_tensor(size_t n);

  std::function<void()> reclaim;

 private:
  const size_t limit_;
  std::atomic<size_t> used_{0};
  bool reclaiming_ = false;
};

// Throws OutOfMemory, naming `op`, if `bytes` of host memory that is not a tensor block (the
// views of a list an op builds) would not fit this thread's budget; nothing without one.
void check_host_memory(const char* op, size_t bytes);

// Installs `budget` for CPU allocations on this thread while it lives (nullptr: none).
class MemoryBudgetScope {
 public:
  explicit MemoryBudgetScope(MemoryBudget* budget);
  ~MemoryBudgetScope();
  MemoryBudgetScope(const MemoryBudgetScope&) = delete;
  MemoryBudgetScope& operator=(const MemoryBudgetScope&) = delete;

 private:
  MemoryBudget* saved_;
};

// Allocator hooks (tensor/allocator.cpp): runs allocate() for a block of `bytes`, charged to
// this thread's budget if there is one, and remembers which budget the block belongs to.
void* budget_charged_allocation(size_t bytes, const std::function<void*()>& allocate);
// Gives a freed block's bytes back to the budget it was charged to (if any).
void budget_release(void* block);

}  // namespace tide
